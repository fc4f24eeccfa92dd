/**
 * Off-box backups with real restic on a local-path repository (issue 10 item 4), in a throwaway
 * root, on a real SQLite database migrated by drizzle: the repository made by --init-restic, one
 * snapshot per run (host "docket", tag docket), retention applied by restic forget, --dry-run
 * checking the repository without writing, and each bad input — no restic, a wrong password, an
 * unreachable repository, no room on the disk — failing with one error line, the status file
 * and an alert (a recording `docket notify`), never a silent success.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDb } from "../../bot/db/open.ts";
import { readBackupStatus } from "../../bot/backup/status.ts";
import { makeTempDir, removeDir, runCmd, writeExecutable } from "../bundle/helpers";
import { toolReady } from "../support/tools";

const ready = toolReady("sqlite3") && toolReady("restic");
const PASSWORD = "correct horse battery staple 42";
let work = "";
let root = "";
let repo = "";
let alerts = "";

/** The environment of every run: the throwaway root's settings only (none of this host's). */
const backupEnv: Record<string, string | undefined> = {
  DATA_DIR: "/var/lib/docket",
  BACKUP_DIR: undefined,
  BACKUP_KEEP: undefined,
  RESTIC_REPOSITORY: undefined,
  RESTIC_PASSWORD: undefined,
  RESTIC_PASSWORD_FILE: undefined,
  DOCKET_RESTIC_LOADED: undefined,
};
const backup = (args: string[] = [], env: Record<string, string | undefined> = {}) =>
  runCmd(["bash", "scripts/backup.sh", "--root", root, "--hooks-dir", "/etc/docket/backup", ...args], {
    env: { ...backupEnv, DOCKET_NOTIFY: join(work, "notify"), ...env },
    timeoutMs: 120_000,
  });
/** `argv` on a pseudo-terminal (script(1)): what an operator at a shell sees; stdout and stderr both land in `stdout`. */
const onTerminal = (argv: string[], env: Record<string, string | undefined> = {}) =>
  runCmd(["script", "--quiet", "--return", "--command", argv.map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(" "), "/dev/null"], { env: { ...backupEnv, ...env }, timeoutMs: 120_000 });
const restic = (args: string[]) =>
  runCmd(["restic", "--no-cache", ...args], { env: { RESTIC_REPOSITORY: repo, RESTIC_PASSWORD_FILE: join(root, "etc/docket/restic-password") } });
const snapshots = () => JSON.parse(restic(["snapshots", "--json"]).stdout) as { short_id: string; hostname: string; tags: string[] }[];
const status = () => readBackupStatus(join(root, "var/lib/docket"));
const alertLines = () => (existsSync(alerts) ? readFileSync(alerts, "utf8").trim().split("\n").filter(Boolean) : []);
const errorLines = (stderr: string) => stderr.split("\n").filter((l) => l.startsWith("error: "));
const writeResticEnv = (text: string) => writeFileSync(join(root, "etc/docket/restic.env"), text, { mode: 0o600 });

beforeAll(() => {
  if (!ready) return;
  work = makeTempDir("restic");
  root = join(work, "root");
  repo = join(work, "vault/docket");
  alerts = join(work, "alerts.log");
  writeExecutable(join(work, "notify"), `#!/bin/sh\nprintf '%s|%s\\n' "$1" "$2" >> '${alerts}'\n`);
  for (const d of ["var/lib/docket/results", "var/lib/docket/backups", "etc/docket/backup/pre.d", "etc/docket/backup/post.d"]) mkdirSync(join(root, d), { recursive: true });
  const db = openDb(join(root, "var/lib/docket/db/docket.sqlite"));
  for (const id of [11, 12, 13]) db.sqlite.run("INSERT INTO chat_settings (chat_id) VALUES (?)", [id]);
  db.close();
  writeFileSync(join(root, "var/lib/docket/results/7-0123456789abcdef.pdf"), "%PDF-1.7 result of job 7");
  writeFileSync(join(root, "etc/docket/restic-password"), `${PASSWORD}\n`, { mode: 0o600 });
  writeResticEnv(`# restic for docket\nRESTIC_REPOSITORY=${repo}\nRESTIC_PASSWORD_FILE=/etc/docket/restic-password\n`);
});
afterAll(() => removeDir(work));

describe.skipIf(!ready)("backup.sh with a restic repository", () => {
  it("--init-restic creates the repository once", () => {
    const first = backup(["--init-restic"]);
    expect(first.stderr).toContain(`created the restic repository ${repo}`);
    expect(first.status).toBe(0);
    expect(existsSync(join(repo, "config"))).toBe(true);
    const again = backup(["--init-restic"]);
    expect(again.stderr).toContain(`the restic repository ${repo} exists already`);
    expect(again.status).toBe(0);
  });

  it("a nightly run: the local backup, one snapshot of it, the status file, no progress noise off a terminal", () => {
    const r = backup(["--with-results"]);
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/  restic snapshot [0-9a-f]{8} saved \(/);
    expect(r.stderr).not.toContain(PASSWORD);
    expect(r.stderr).not.toContain("\r");
    const snaps = snapshots();
    expect(snaps).toHaveLength(1);
    expect(snaps[0]).toMatchObject({ hostname: "docket", tags: ["docket"] });
    const files = restic(["ls", "latest"]).stdout.split("\n").filter((l) => l.startsWith("/")).sort();
    expect(files).toEqual(["/MANIFEST", "/SHA256SUMS", "/docket.sqlite", "/results.tar"]);
    const local = readdirSync(join(root, "var/lib/docket/backups")).filter((n) => n.startsWith("docket-"));
    expect(local).toHaveLength(1);
    expect(r.stderr).toContain(`backup done: ${join(root, "var/lib/docket/backups", local[0]!)} and restic snapshot ${snaps[0]!.short_id}`);
    const s = status().backup!;
    expect([s.ok, s.where, s.error]).toEqual([true, "restic", undefined]);
    expect(s.bytes).toBeGreaterThan(4096);
    expect(Math.abs(s.at - Date.now() / 1000)).toBeLessThan(120);
    expect(alertLines()).toEqual([]);
  });

  it("retention is restic forget --prune with the configured counts, for host docket only", () => {
    // Older snapshots on ten past days (restic --time), and one of another host sharing the repository.
    const old = join(work, "old-snapshot");
    mkdirSync(old, { recursive: true });
    writeFileSync(join(old, "MANIFEST"), "kind=nightly\n");
    for (let day = 1; day <= 10; day++) {
      expect(restic(["backup", "--host", "docket", "--tag", "docket", "--time", `2026-01-${String(day).padStart(2, "0")} 03:15:00`, old]).status).toBe(0);
    }
    expect(restic(["backup", "--host", "elsewhere", "--tag", "docket", "--time", "2026-01-01 03:15:00", old]).status).toBe(0);
    expect(snapshots()).toHaveLength(12);
    const r = backup([], { BACKUP_KEEP_DAILY: "3", BACKUP_KEEP_WEEKLY: "0", BACKUP_KEEP_MONTHLY: "0" });
    expect(r.stderr).toContain("  retention: daily 3, weekly 0, monthly 0");
    expect(r.status).toBe(0);
    // daily 3 = the newest snapshot of each of the 3 newest days that have one: today, Jan 10, Jan 9.
    const left = JSON.parse(restic(["snapshots", "--json"]).stdout) as { hostname: string; time: string }[];
    expect(left.filter((s) => s.hostname === "docket").map((s) => s.time.slice(0, 10)).sort()).toEqual(["2026-01-09", "2026-01-10", new Date().toISOString().slice(0, 10)]);
    expect(left.filter((s) => s.hostname === "elsewhere")).toHaveLength(1);
    // The defaults (7 daily, 4 weekly, 6 monthly) keep those three.
    expect(backup().status).toBe(0);
    expect(snapshots().filter((s) => s.hostname === "docket")).toHaveLength(3);
  });

  it("--dry-run checks that the repository opens and writes nothing", () => {
    const before = { snaps: snapshots().length, local: readdirSync(join(root, "var/lib/docket/backups")).sort(), status: status() };
    const r = backup(["--dry-run"]);
    expect(r.stderr).toContain("+ restic backup --host docket --tag docket");
    expect(r.stderr).toContain("  the repository opens");
    expect(r.status).toBe(0);
    expect({ snaps: snapshots().length, local: readdirSync(join(root, "var/lib/docket/backups")).sort(), status: status() }).toEqual(before);
    // A dry run with a wrong password fails as the real run would.
    writeFileSync(join(root, "etc/docket/restic-password"), "not it\n");
    try {
      const bad = backup(["--dry-run"]);
      expect(bad.status).toBe(1);
      expect(errorLines(bad.stderr)).toEqual([`error: restic: wrong password for repository ${repo} (the password in ${join(root, "etc/docket/restic-password")} does not open it)`]);
      expect(status()).toEqual(before.status); // a dry run records nothing
    } finally {
      writeFileSync(join(root, "etc/docket/restic-password"), `${PASSWORD}\n`);
    }
  });
});

describe.skipIf(!ready || !toolReady("script"))("progress on a terminal, quiet in the journal (issue 10 item 6)", () => {
  // A line redrawn in place: carriage return, erase to the end of the line, the text.
  const redrawn = (out: string, what: RegExp) => out.split("\r\x1b[K").some((part) => what.test(part));

  it("backup.sh: the restic upload's percentage is redrawn on a terminal, never printed off one", () => {
    const r = onTerminal(["bash", "scripts/backup.sh", "--root", root, "--hooks-dir", "/etc/docket/backup"], { DOCKET_NOTIFY: join(work, "notify") });
    expect(r.status, r.stdout).toBe(0);
    // restic's status messages: at least its first (0 %) and, for new data, its last (100 %).
    expect(redrawn(r.stdout, /^  restic: \d+ %/)).toBe(true);
    expect(r.stdout).toMatch(/  restic snapshot [0-9a-f]{8} saved \(/);
    const quiet = backup();
    expect(quiet.status).toBe(0);
    expect(quiet.stderr).not.toMatch(/\r|\x1b|restic: \d+ %/);
  });

  it("restore.sh --from-restic: the bytes restored so far against the snapshot's size on a terminal; nothing off one", () => {
    const args = ["--no-service", "--root", root, "--data-dir", "/var/lib/docket-restore-tty", "--from-restic", "latest"];
    const r = onTerminal(["bash", "scripts/restore.sh", ...args]);
    expect(r.status, r.stdout).toBe(0);
    expect(redrawn(r.stdout, /^  restic restore: \d+\.\d MiB of \d+\.\d MiB \(100 %\)/)).toBe(true);
    rmSync(join(root, "var/lib/docket-restore-tty"), { recursive: true, force: true });
    const quiet = runCmd(["bash", "scripts/restore.sh", ...args], { env: backupEnv, timeoutMs: 120_000 });
    expect(quiet.status, quiet.stderr).toBe(0);
    expect(quiet.stderr).not.toMatch(/\r|\x1b|restic restore: /);
    rmSync(join(root, "var/lib/docket-restore-tty"), { recursive: true, force: true });
  });
});

describe.skipIf(!ready)("the password as a systemd credential (LoadCredential=restic-password)", () => {
  it("is taken from $CREDENTIALS_DIRECTORY; the units' NUL fallback for a missing file counts as none", () => {
    const creds = join(work, "credentials");
    mkdirSync(creds, { recursive: true });
    const file = join(root, "etc/docket/restic-password");
    const saved = readFileSync(file);
    rmSync(file);
    try {
      writeFileSync(join(creds, "restic-password"), `${PASSWORD}\n`);
      const r = backup([], { CREDENTIALS_DIRECTORY: creds });
      expect(r.stderr).toMatch(/restic snapshot [0-9a-f]{8} saved/);
      expect(r.status).toBe(0);
      writeFileSync(join(creds, "restic-password"), "\0");
      const none = backup([], { CREDENTIALS_DIRECTORY: creds });
      expect(none.status).toBe(1);
      expect(errorLines(none.stderr)[0]).toMatch(new RegExp(`^error: the restic password file ${file} is missing or not readable `));
    } finally {
      writeFileSync(file, saved, { mode: 0o600 });
    }
  });
});

describe.skipIf(!ready)("a failed off-box copy is one error line, the status file and an alert", () => {
  const failsWith = (r: ReturnType<typeof backup>, line: RegExp) => {
    expect(r.status).toBe(1);
    const errors = errorLines(r.stderr);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(line);
    const s = status().backup!;
    expect([s.ok, s.where]).toEqual([false, "restic"]);
    expect(`error: ${s.error}`).toBe(errors[0]);
    expect(alertLines().at(-1)).toBe(`backup_failed|backup failed: ${s.error}`);
  };

  it("restic is not installed", () => {
    failsWith(backup([], { RESTIC: join(work, "no-such-restic") }), /^error: restic is not installed \(apt-get install restic\), so no off-box copy was made; the local backup is at \S+docket-\d{8}T\d{6}Z(-\d+)?$/);
  });

  it("a wrong password", () => {
    writeFileSync(join(root, "etc/docket/restic-password"), "guess\n");
    try {
      failsWith(backup(), new RegExp(`^error: restic: wrong password for repository ${repo} \\(the password in \\S+ does not open it\\); the local backup is at `));
    } finally {
      writeFileSync(join(root, "etc/docket/restic-password"), `${PASSWORD}\n`);
    }
  });

  it("an unreachable repository, its credentials never shown", () => {
    const closed = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = closed.port;
    closed.stop(true);
    writeResticEnv(`RESTIC_REPOSITORY=rest:http://docket:s3cr3t-pw@127.0.0.1:${port}/docket\n`);
    try {
      const r = backup();
      failsWith(r, new RegExp(`^error: restic: cannot open repository rest:http://\\*\\*\\*@127\\.0\\.0\\.1:${port}/docket: .*connection refused.* \\(unreachable, or not initialised yet: backup\\.sh --init-restic\\); the local backup is at `));
      expect(r.stderr + readFileSync(join(root, "var/lib/docket/backups/status.json"), "utf8")).not.toContain("s3cr3t-pw");
    } finally {
      writeResticEnv(`RESTIC_REPOSITORY=${repo}\nRESTIC_PASSWORD_FILE=/etc/docket/restic-password\n`);
    }
  });

  it("no room for the local copy: refused before writing, with the sizes", () => {
    const small = join(root, "var/lib/docket/small");
    mkdirSync(small, { recursive: true });
    const mounted = runCmd(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", small]);
    if (mounted.status !== 0) return void console.warn(`[test/backup] cannot mount a small tmpfs (${mounted.stderr.trim()}): the free-space case is not run`);
    try {
      const r = backup(["--dest", "/var/lib/docket/small"]);
      failsWith(r, new RegExp(`^error: not enough free space in /var/lib/docket/small for the backup: it needs about \\d+\\.\\d MiB, \\d+\\.\\d (KiB|MiB) are free; free space there, lower BACKUP_KEEP, or set BACKUP_DIR to another disk$`));
      expect(readdirSync(small)).toEqual([".backup.lock"]);
    } finally {
      runCmd(["umount", small]);
    }
  });
});

describe.skipIf(!ready)("without a repository", () => {
  it("the local rotation works alone, and says this disk holds the only copy", () => {
    writeResticEnv("# no repository yet\n");
    const r = backup(["--keep", "2"]);
    expect(r.stderr).toContain("this disk holds the only copy");
    expect(r.status).toBe(0);
    expect(readdirSync(join(root, "var/lib/docket/backups")).filter((n) => n.startsWith("docket-"))).toHaveLength(2);
    expect(status().backup).toMatchObject({ ok: true, where: "local" });
  });
});
