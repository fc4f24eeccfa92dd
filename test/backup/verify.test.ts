/**
 * The restore drill, `docket backup verify` (issue 10 item 5), as a process against real backups
 * in a throwaway root: the latest local backup or restic snapshot restored into a throwaway
 * directory by restore.sh, integrity_check, row counts against the live database, migrations
 * against the running release; one verdict line, the status file, an alert on failure. The pure
 * verdict rules are checked on plain facts too.
 */
import { Database } from "bun:sqlite";
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, test } from "vitest";
import { readBackupStatus } from "../../bot/backup/status.ts";
import { judgeRestore, type VerifyFacts } from "../../bot/backup/verify-core.ts";
import { releaseMigrations } from "../../bot/backup/verify.ts";
import { openDb } from "../../bot/db/open.ts";
import { makeTempDir, removeDir, repoRoot, runCmd, writeExecutable } from "../bundle/helpers";
import { toolReady } from "../support/tools";
import { rowsLine } from "./schema-facts";

/** `s` as a literal inside a RegExp. */
const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

const ready = toolReady("sqlite3") && toolReady("restic");
let work = "";
let root = "";
let alerts = "";
const data = () => join(root, "var/lib/docket");
const backupsDir = () => join(data(), "backups");

const env = () => ({ DATA_DIR: undefined, BACKUP_DIR: undefined, RESTIC_REPOSITORY: undefined, RESTIC_PASSWORD_FILE: undefined, DOCKET_RESTIC_LOADED: undefined, DOCKET_NOTIFY: join(work, "notify") });
const backup = (args: string[] = []) => runCmd(["bash", "scripts/backup.sh", "--root", root, "--data-dir", "/var/lib/docket", "--hooks-dir", "/etc/docket/backup", ...args], { env: env(), timeoutMs: 120_000 });
const verify = (args: string[] = []) =>
  runCmd([process.execPath, "--no-env-file", "bot/cli/main.ts", "backup", "verify", "--root", root, ...args], { env: env(), timeoutMs: 120_000 });
const alertLines = () => (existsSync(alerts) ? readFileSync(alerts, "utf8").trim().split("\n").filter(Boolean) : []);
const liveRun = (sql: string, ...params: (string | number)[]) => {
  const db = new Database(join(data(), "db/docket.sqlite"));
  try {
    db.run(sql, params);
  } finally {
    db.close();
  }
};
/** A job row (file_jobs, only growing), as intake records one. */
const JOB_SQL = "INSERT INTO file_jobs (update_id, chat_id, user_id, message_id, source, file_id, file_unique_id, declared_name, declared_mime, declared_size, status) VALUES (?, 1, 1, ?, 'document', ?, ?, 'doc.pdf', 'application/pdf', 1000, 'ready')";
const job = (n: number): [string, number, number, string, string] => [JOB_SQL, n, n, `f${n}`, `u${n}`];
const newestLocal = () => readdirSync(backupsDir()).filter((n) => n.startsWith("docket-")).sort().at(-1)!;

beforeAll(() => {
  if (!ready) return;
  work = makeTempDir("verify");
  root = join(work, "root");
  alerts = join(work, "alerts.log");
  writeExecutable(join(work, "notify"), `#!/bin/sh\nprintf '%s|%s\\n' "$1" "$2" >> '${alerts}'\n`);
  for (const d of ["var/lib/docket/results", "var/lib/docket/backups", "etc/docket/backup/pre.d"]) mkdirSync(join(root, d), { recursive: true });
  const db = openDb(join(data(), "db/docket.sqlite"));
  for (const id of [1, 2, 3]) db.sqlite.run("INSERT INTO chat_settings (chat_id) VALUES (?)", [id]);
  for (let i = 1; i <= 4; i++) {
    const [sql, ...params] = job(i);
    db.sqlite.run(sql, params);
  }
  db.close();
});
afterAll(() => removeDir(work));

describe.skipIf(!ready)("docket backup verify (local)", () => {
  it("no backup yet: FAILED, recorded, alerted", () => {
    const r = verify(["--from", "local"]);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe(`backup verify: FAILED: no local backup (docket-*) in ${backupsDir()}\n`);
    expect(readBackupStatus(data()).verify).toMatchObject({ ok: false, error: `no local backup in ${backupsDir()}` });
    expect(alertLines().at(-1)).toBe(`verify_failed|${r.stdout.trim()}`);
  });

  it("the latest local backup restores and checks out; the live database has moved on since", () => {
    expect(backup().status).toBe(0);
    liveRun("INSERT INTO chat_settings (chat_id) VALUES (4)");
    const r = verify(["--from", "local"]);
    const latest = releaseMigrations(repoRoot).at(-1)!.tag;
    expect(r.stdout).toMatch(
      new RegExp(`^backup verify: OK ${newestLocal()}, taken \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC \\(\\d+ min ago\\): integrity ok; rows backup/live: ${esc(rowsLine({ chat_settings: "3/4", file_jobs: "4/4" }))}; migrations: ${latest}, as release of the source tree \\S+ expects\\n$`),
    );
    expect(r.status).toBe(0);
    const s = readBackupStatus(data()).verify!;
    expect([s.ok, s.error]).toEqual([true, undefined]);
    // The throwaway directory is gone.
    expect(readdirSync(backupsDir()).filter((n) => n.startsWith(".verify-"))).toEqual([]);
  });

  it("a damaged backup: FAILED with restore.sh's reason", () => {
    const dir = join(backupsDir(), newestLocal());
    const fd = openSync(join(dir, "docket.sqlite"), "r+");
    writeSync(fd, Buffer.alloc(512, 0x5a), 0, 512, 4096 + 100);
    closeSync(fd);
    const r = verify(["--from", "local"]);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(new RegExp(`^backup verify: FAILED ${newestLocal()}: the restore failed: checksums do not match in ${dir}\\n$`));
    expect(readBackupStatus(data()).verify!.ok).toBe(false);
    expect(alertLines().at(-1)).toBe(`verify_failed|${r.stdout.trim()}`);
  });

  it("a backup of another database (more jobs than live): FAILED", () => {
    expect(backup().status).toBe(0);
    liveRun("DELETE FROM file_jobs WHERE id > 2"); // the live database "lost" rows the backup has
    const r = verify(["--from", "local"]);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain("file_jobs has 4 rows in the backup but 2 in the live database, and it only grows");
  });
});

describe.skipIf(!ready)("docket backup verify (restic)", () => {
  it("the newest snapshot restores through restic and checks out", () => {
    const repo = join(work, "vault");
    writeFileSync(join(root, "etc/docket/restic-password"), "pw for verify\n", { mode: 0o600 });
    writeFileSync(join(root, "etc/docket/restic.env"), `RESTIC_REPOSITORY=${repo}\n`, { mode: 0o600 });
    expect(backup(["--init-restic"]).status).toBe(0);
    liveRun(...job(9));
    liveRun(...job(10));
    const b = backup();
    expect(b.status).toBe(0);
    const snap = /restic snapshot ([0-9a-f]{8}) saved/.exec(b.stderr)![1]!;
    const r = verify(); // restic is configured: the default source
    expect(r.stdout).toMatch(new RegExp(`^backup verify: OK restic snapshot ${snap} \\(nightly backup\\), taken .*: integrity ok; rows backup/live: ${esc(rowsLine({ chat_settings: "4/4", file_jobs: "4/4" }))}; migrations: `));
    expect(r.status).toBe(0);
    expect(readdirSync(backupsDir()).filter((n) => n.startsWith(".verify-") || n.startsWith("restic-"))).toEqual([]);
  });

  it.skipIf(!toolReady("script"))("on a terminal the restore's steps are redrawn in place, then the verdict; off one only the verdict line (issue 10 item 6)", () => {
    const argv = [process.execPath, "--no-env-file", "bot/cli/main.ts", "backup", "verify", "--root", root];
    const quoted = argv.map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(" ");
    const tty = runCmd(["script", "--quiet", "--return", "--command", quoted, "/dev/null"], { env: env(), timeoutMs: 120_000 });
    expect(tty.status, tty.stdout).toBe(0);
    const drawn = tty.stdout.split("\r\x1b[K").filter((p) => p.startsWith("  restore: ")).map((p) => p.slice("  restore: ".length));
    expect(drawn).toEqual(expect.arrayContaining(["fetch restic snapshot latest", "verify the backup"]));
    expect(tty.stdout).toMatch(/\r\x1b\[Kbackup verify: OK restic snapshot [0-9a-f]{8} /);
    const quiet = verify();
    expect(quiet.status).toBe(0);
    expect(quiet.stdout.split("\n").filter(Boolean)).toHaveLength(1);
    expect(quiet.stdout + quiet.stderr).not.toMatch(/\r|\x1b|restore: /);
  });
});

describe("the verdict rules (pure)", () => {
  const release = { id: "0.1.0-abc", migrations: [{ when: 1, tag: "0000_init", hash: "h0" }, { when: 2, tag: "0001_more", hash: "h1" }] };
  const facts = (over: Partial<VerifyFacts> = {}): VerifyFacts => ({
    source: "docket-20261130T031512Z",
    createdAt: Date.UTC(2026, 10, 30, 3, 15),
    now: Date.UTC(2026, 10, 30, 9, 15),
    integrity: "ok",
    applied: [{ createdAt: 1, hash: "h0" }, { createdAt: 2, hash: "h1" }],
    release,
    counts: [{ table: "file_jobs", backup: 5, live: 6 }, { table: "job_results", backup: 4, live: 2 }],
    ...over,
  });

  test("a good backup: one OK line with age, counts and migrations", () => {
    expect(judgeRestore(facts())).toEqual({
      ok: true,
      line: "backup verify: OK docket-20261130T031512Z, taken 2026-11-30 03:15 UTC (6 h ago): integrity ok; rows backup/live: file_jobs 5/6, job_results 4/2; migrations: 0001_more, as release 0.1.0-abc expects",
    });
  });

  test("integrity, an unknown or changed migration, differing tables, a growing table that shrank: FAILED", () => {
    expect(judgeRestore(facts({ integrity: "*** in database main ***\nPage 3: btreeInitPage() returns error code 11" })).error).toBe(
      "integrity_check: *** in database main ***; Page 3: btreeInitPage() returns error code 11",
    );
    expect(judgeRestore(facts({ applied: [{ createdAt: 1, hash: "h0" }, { createdAt: 3, hash: "h3" }] })).error).toBe(
      "the backup has applied a migration release 0.1.0-abc does not ship (created_at 3): restore it with the release that made it",
    );
    expect(judgeRestore(facts({ applied: [{ createdAt: 1, hash: "other" }] })).error).toBe("migration 0000_init of the backup differs from release 0.1.0-abc's file (other SQL, same name)");
    expect(judgeRestore(facts({ counts: [{ table: "file_jobs", backup: 5, live: 6 }, { table: "extra", backup: null, live: 1 }] })).error).toBe(
      "the tables differ from the live database with the same migrations: extra (live only)",
    );
    expect(judgeRestore(facts({ counts: [{ table: "file_jobs", backup: 7, live: 6 }] })).ok).toBe(false);
  });

  test("an older schema is fine (migrated at start) and may lack newer tables; no live database is fine", () => {
    const older = judgeRestore(facts({ applied: [{ createdAt: 1, hash: "h0" }], counts: [{ table: "file_jobs", backup: 1, live: 2 }, { table: "new_table", backup: null, live: 0 }] }));
    expect(older).toMatchObject({ ok: true });
    expect(older.line).toContain("migrations: 0000_init; release 0.1.0-abc applies 0001_more when it opens it");
    expect(judgeRestore(facts({ counts: null })).line).toContain("integrity ok; no live database to compare with;");
  });
});
