/**
 * The disk-loss walk-through of docs/backup.md, run as written (issue 10 item 5): an installed
 * docket on one throwaway root with a real SQLite database (drizzle's migrations), results and a
 * nightly backup to a local-path restic repository outside the root; the root deleted; then, on a
 * second root, the document's five steps — /etc/docket back from the "secret store", install.sh
 * --no-start, restore.sh --from-restic latest --with-results, docket backup verify --from restic,
 * install.sh — and the bot's data compared. The steps are the document's own commands (checked
 * to be in it), run with --root and the recording systemctl/health stand-ins the bundle tests use.
 */
import { Database } from "bun:sqlite";
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDb } from "../../bot/db/open.ts";
import { fakeToken, makeTempDir, removeDir, repoRoot, runCmd, runCmdAsync, writeExecutable } from "../bundle/helpers";
import { toolReady } from "../support/tools";
import { rowsLine } from "./schema-facts";

const ready = toolReady("sqlite3") && toolReady("restic");
const doc = readFileSync(join(repoRoot, "docs/backup.md"), "utf8");
const walk = doc.slice(doc.indexOf("## Disk-loss recovery onto a new VPS"));
/** The walk-through's commands, as the document writes them. */
const STEPS = {
  etc: "sudo tar -C / -xzf docket-etc.tgz",
  install: "sudo scripts/install.sh --no-start",
  restore: "sudo /opt/docket/current/scripts/restore.sh --from-restic latest --with-results",
  verify: "sudo docket backup verify --from restic",
  start: "sudo scripts/install.sh",
  keep: "sudo tar -C / -czf docket-etc.tgz etc/docket",
};

let work = "";
let recLog = "";
let systemctl = "";
let health: ReturnType<typeof Bun.serve> | undefined;
const token = fakeToken();

const envFor = (extra: Record<string, string | undefined> = {}) => ({
  SYSTEMCTL: systemctl,
  HEALTH_TIMEOUT: "5",
  BOT_TOKEN: undefined,
  TELEGRAM_API_HASH: undefined,
  DATA_DIR: undefined,
  BACKUP_DIR: undefined,
  RESTIC_REPOSITORY: undefined,
  RESTIC_PASSWORD_FILE: undefined,
  DOCKET_RESTIC_LOADED: undefined,
  DOCKET_ENV_FILE: undefined,
  DOCKET_NOTIFY: "true",
  ...extra,
});
/** A command of the walk-through, on `root`: `sudo` dropped, `--root` added, /opt/docket/current/… run from this tree. */
function step(cmd: string, root: string): Promise<{ status: number; stdout: string; stderr: string }> {
  expect(walk).toContain(cmd);
  const words = cmd.replace(/^sudo /, "").split(" ");
  if (words[0] === "tar") return runCmdAsync(["tar", "-C", root, ...words.slice(3).map((w) => (w === "docket-etc.tgz" ? join(work, w) : w))]);
  if (words[0] === "docket") return runCmdAsync([process.execPath, "--no-env-file", join(repoRoot, "bot/cli/main.ts"), ...words.slice(1), "--root", root], { env: envFor(), timeoutMs: 120_000 });
  const script = words[0]!.replace("/opt/docket/current/", "");
  const extra = script === "scripts/install.sh" ? ["--non-interactive", "--skip-packages"] : [];
  return runCmdAsync(["bash", join(repoRoot, script), ...words.slice(1), ...extra, "--root", root], { env: envFor(), timeoutMs: 120_000 });
}

function snapshotOf(root: string) {
  const db = new Database(join(root, "var/lib/docket/db/docket.sqlite"), { readonly: true });
  try {
    return {
      chats: db.query<{ chat_id: number }, []>("SELECT chat_id FROM chat_settings ORDER BY 1").all(),
      migrations: db.query<{ hash: string }, []>("SELECT hash FROM __drizzle_migrations ORDER BY created_at").all(),
      result: readFileSync(join(root, "var/lib/docket/results/5-00112233445566ff.pdf"), "utf8"),
    };
  } finally {
    db.close();
  }
}

beforeAll(() => {
  if (!ready) return;
  work = makeTempDir("disk-loss");
  recLog = join(work, "calls.log");
  // Records every call; nothing is running on a new host, so `is-active` answers "inactive" (3).
  systemctl = join(work, "systemctl");
  writeExecutable(systemctl, `#!/bin/sh\nprintf 'systemctl %s\\n' "$*" >> '${recLog}'\n[ "$1" = is-active ] && exit 3\nexit 0\n`);
  health = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (req) => (new URL(req.url).pathname === "/healthz" ? Response.json({ ok: true }) : new Response("no", { status: 404 })) });
});
afterAll(() => {
  health?.stop(true);
  if (work) removeDir(work);
});

describe.skipIf(!ready)("disk-loss recovery onto a new VPS (docs/backup.md)", () => {
  let before: ReturnType<typeof snapshotOf>;

  it("the old host: installed, data, a nightly backup to restic, /etc/docket in the secret store — then the disk is lost", async () => {
    const old = join(work, "old");
    mkdirSync(old);
    const inst = await runCmdAsync(["bash", "scripts/install.sh", "--non-interactive", "--skip-packages", "--no-start", "--root", old, "--http-port", String(health!.port), "--download-budget", "16MB"], {
      env: envFor({ BOT_TOKEN: token }),
    });
    expect(inst.status).toBe(0);
    const db = openDb(join(old, "var/lib/docket/db/docket.sqlite"));
    for (const id of [41, 42, 43]) db.sqlite.run("INSERT INTO chat_settings (chat_id) VALUES (?)", [id]);
    db.close();
    writeFileSync(join(old, "var/lib/docket/results/5-00112233445566ff.pdf"), "%PDF-1.7 the result of job 5");
    // The document's one-time set-up, with a local-path repository outside the root ("off the box").
    writeFileSync(join(old, "etc/docket/restic-password"), "the vault's password\n", { mode: 0o600 });
    writeFileSync(join(old, "etc/docket/restic.env"), `RESTIC_REPOSITORY=${join(work, "vault")}\nRESTIC_PASSWORD_FILE=/etc/docket/restic-password\n`, { mode: 0o600 });
    expect(doc).toContain("sudo /opt/docket/current/scripts/backup.sh --init-restic");
    const init = await runCmdAsync(["bash", "scripts/backup.sh", "--init-restic", "--root", old], { env: envFor() });
    expect(init.status).toBe(0);
    const nightly = await runCmdAsync(["bash", "scripts/backup.sh", "--with-results", "--root", old], { env: envFor({ DATA_DIR: "/var/lib/docket" }) });
    expect(nightly.stderr).toMatch(/restic snapshot [0-9a-f]{8} saved/);
    expect(nightly.status).toBe(0);
    before = snapshotOf(old);
    expect(walk).toContain(STEPS.keep);
    expect(runCmd(["tar", "-C", old, "-czf", join(work, "docket-etc.tgz"), "etc/docket"]).status).toBe(0);
    rmSync(old, { recursive: true, force: true }); // the disk is gone
  });

  it("the new VPS: the five steps bring back the same data, and the bot starts", async () => {
    const vps = join(work, "vps");
    mkdirSync(vps);
    expect((await step(STEPS.etc, vps)).status).toBe(0);
    expect(readFileSync(join(vps, "etc/docket/docket.env"), "utf8")).toContain(`BOT_TOKEN=${token}\n`);

    const install = await step(STEPS.install, vps);
    expect(install.stderr).toContain("= /etc/docket/docket.env unchanged");
    expect(install.status).toBe(0);
    expect(existsSync(join(vps, "var/lib/docket/db/docket.sqlite"))).toBe(false);

    writeFileSync(recLog, "");
    const restore = await step(STEPS.restore, vps);
    expect(restore.stderr).toMatch(/snapshot [0-9a-f]{8} of \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ in /);
    expect(restore.status).toBe(0);
    expect(readdirSync(join(vps, "var/lib/docket/backups")).filter((n) => n.startsWith("restic-"))).toHaveLength(1);
    expect(snapshotOf(vps)).toEqual(before);
    // Nothing ran, so nothing was started.
    expect(readFileSync(recLog, "utf8").split("\n").filter((l) => l.includes(" start "))).toEqual([]);

    const verify = await step(STEPS.verify, vps);
    expect(verify.stdout).toMatch(/^backup verify: OK restic snapshot [0-9a-f]{8} \(nightly backup\), .*: integrity ok; rows backup\/live: /);
    expect(verify.stdout).toContain(`: integrity ok; rows backup/live: ${rowsLine({ chat_settings: "3/3" })}; migrations: `);
    expect(verify.status).toBe(0);

    writeFileSync(recLog, "");
    const start = await step(STEPS.start, vps);
    expect(start.stderr).toContain("healthy:");
    expect(start.status).toBe(0);
    expect(readFileSync(recLog, "utf8")).toContain("systemctl restart docket.service\n");
    expect(snapshotOf(vps)).toEqual(before);
  });
});
