/**
 * The operator commands against a real bot stack (issue 10 items 3 and 6; CONTRACTS.md §2):
 * - `docket notify CAUSE TEXT`: exit 0 once recorded, a journal line at warning; the running bot sends
 *   it to the admins; with no bot answering, the command sends it itself (the alert about a dead bot
 *   still arrives); a bad cause exits 2 naming the causes; run as root it never leaves root-owned
 *   `-wal`/`-shm` files beside the bot's database.
 * - `docket status`: one screen from the bot's /status, the database and the backup status file;
 *   exit 0 when ready, 1 when not ready or not running (the jobs and backups still shown).
 */
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { writeBackupStatus } from "../../bot/backup/status.ts";
import type { Config } from "../../bot/config.ts";
import { openDbReadOnly } from "../../bot/db/open.ts";
import { SqliteJobStore } from "../../bot/jobs/sqlite-store.ts";
import { buildInfo } from "../../bot/ops/build-info.ts";
import type { Ops } from "../../bot/ops/runtime.ts";
import { REPO_ROOT } from "../../scripts/demo/bot-process.ts";
import { copyRunner } from "../support/copy-runner.ts";
import { freePort } from "../support/ports.ts";
import { startStack, type Stack } from "../support/stack.ts";
import { runningOps } from "../support/ops.ts";
import { reachableRepoRoot } from "../support/unprivileged.ts";

let stack: Stack | null = null;
let ops: Ops | null = null;
const dirs: string[] = [];
afterEach(async () => {
  await ops?.close();
  await stack?.stop();
  stack = null;
  ops = null;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Run `docket <args>` (bun bot/cli/main.ts) with exactly `env` (no env file). */
async function docket(args: string[], env: Record<string, string>, cwd: string = REPO_ROOT): Promise<{ code: number; out: string; err: string }> {
  const p = Bun.spawn(["bun", "--no-env-file", "bot/cli/main.ts", ...args], {
    cwd,
    env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? "/root", DOCKET_ENV_FILE: "/nonexistent/docket.env", JOURNAL_STREAM: "", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, out, err };
}

/** The environment a unit gives the commands for the stack's bot (operator port `httpPort`). */
function envFor(s: Stack, httpPort: number, admin: number): Record<string, string> {
  return { BOT_TOKEN: s.config.token, BOT_API_ROOT: s.config.apiRoot, DATA_DIR: s.config.dataDir, HTTP_PORT: String(httpPort), ADMIN_USER_IDS: String(admin), HOST_ID: "vps-cli" };
}

/** The stack's Ops, running, on a free port. */
function startOps(s: Stack, overrides: Partial<Config> = {}): number {
  const started = runningOps(s, { hostId: "vps-cli", ...overrides }, { monitorIntervalMs: 100 });
  ops = started.ops;
  return started.port;
}

const toChat = (s: Stack, id: number) => s.em.calls.filter((c) => c.method === "sendMessage" && c.chatId === id && c.ok).map((c) => String(c.params.text));

describe("docket notify", () => {
  test("the running bot sends it: exit 0, one warning line, the admin gets it once", async () => {
    stack = await startStack({ runner: copyRunner() });
    const s = stack;
    const admin = s.em.user().id;
    const port = startOps(s, { adminUserIds: [admin] });
    const r = await docket(["notify", "unit_failed", "docket-backup.service", "failed;", "see", "journalctl -u docket-backup"], envFor(s, port, admin));
    expect([r.code, r.err]).toEqual([0, ""]);
    const line = JSON.parse(r.out.trim().split("\n")[0]!) as Record<string, unknown>;
    expect([line.level, line.msg, line.cause, line.source]).toEqual([40, "alert unit_failed: docket-backup.service failed; see journalctl -u docket-backup", "unit_failed", "cli"]);
    await expect.poll(() => toChat(s, admin)).toEqual(["⚠️ docket on vps-cli: a docket unit failed\ndocket-backup.service failed; see journalctl -u docket-backup"]);
    await expect.poll(async () => (await s.app.services.store.alertsSince(0)).map((a) => [a.cause, a.source, a.state])).toEqual([["unit_failed", "cli", "sent"]]);
  });

  test("no bot answers (the unit failed): the command sends it itself, once per cause per hour", async () => {
    stack = await startStack({ runner: copyRunner() });
    const s = stack;
    const admin = s.em.user().id;
    const env = envFor(s, freePort(), admin);
    expect((await docket(["notify", "unit_failed", "docket.service failed"], env)).code).toBe(0);
    expect(toChat(s, admin)).toEqual(["⚠️ docket on vps-cli: a docket unit failed\ndocket.service failed"]);
    // The OnFailure= hook fires again (a restart loop): recorded, not sent again within the hour.
    expect((await docket(["notify", "unit_failed", "docket.service failed again"], env)).code).toBe(0);
    expect(toChat(s, admin)).toHaveLength(1);
    expect((await s.app.services.store.alertsSince(0)).map((a) => a.state)).toEqual(["sent", "suppressed"]);
  });

  test("bad usage exits 2 naming the causes; no database exits 1 naming it; nothing is recorded", async () => {
    const dir = mkdtempSync(join(tmpdir(), "docket-notify-"));
    dirs.push(dir);
    const env = { DATA_DIR: dir };
    const bad = await docket(["notify", "disk_full", "x"], env);
    expect([bad.code, bad.err.split("\n")[0]]).toEqual([2, 'docket: unknown cause "disk_full"; causes: disk_low, processing_crashes, backup_failed, verify_failed, webhook_error, unit_failed, bot_api_dir']);
    expect((await docket(["notify", "disk_low"], env)).code).toBe(2);
    const none = await docket(["notify", "disk_low", "1 MB free"], env);
    expect([none.code, none.err.trim()]).toEqual([1, `docket notify: no docket database at ${join(dir, "db", "docket.sqlite")}; is DATA_DIR right (--data-dir)? The alert was not recorded.`]);
  });

  // The command continues as the database's owner, who must read the release (CI's private clone: through the reachable root).
  test.skipIf(process.getuid?.() !== 0 || reachableRepoRoot() === null)("run as root on the bot's database: recorded as its owner, no root-owned -wal/-shm left for the bot", async () => {
    const dir = mkdtempSync(join(tmpdir(), "docket-notify-root-"));
    dirs.push(dir);
    const dbFile = join(dir, "db", "docket.sqlite");
    // Made by a process that exits: its last close removes -wal and -shm, so the next opener creates them.
    const made = Bun.spawnSync(["bun", "-e", `import { openDb } from ${JSON.stringify(join(REPO_ROOT, "bot/db/open.ts"))}; openDb(${JSON.stringify(dbFile)}).close();`]);
    expect([made.exitCode, readdirSync(join(dir, "db"))]).toEqual([0, ["docket.sqlite"]]);
    const nobody = 65534;
    for (const p of [dir, join(dir, "db"), dbFile]) chownSync(p, nobody, nobody);
    const r = await docket(["notify", "backup_failed", "restic: wrong password"], { DATA_DIR: dir }, reachableRepoRoot()!);
    expect([r.code, r.err]).toEqual([0, ""]);
    const beside = readdirSync(join(dir, "db")).filter((f) => f !== "docket.sqlite");
    for (const f of beside) expect([f, statSync(join(dir, "db", f)).uid]).toEqual([f, nobody]);
    const db = openDbReadOnly(dbFile);
    try {
      expect((await new SqliteJobStore(db.db).alertsSince(0)).map((a) => [a.cause, a.text, a.state])).toEqual([["backup_failed", "restic: wrong password", "pending"]]);
    } finally {
      db.close();
    }
  });
});

describe("docket status", () => {
  test("a running, ready bot: one screen and exit 0", async () => {
    stack = await startStack({ runner: copyRunner() });
    const s = stack;
    const u = s.em.user();
    const sent = await u.sendDocument({ bytes: new Uint8Array(800).fill(6), file_name: "s.bin" });
    await s.waitJob((await s.jobFor(u.chatId, sent.message_id)).id);
    const now = Math.floor(Date.now() / 1000);
    writeBackupStatus(s.config.dataDir, { backup: { ok: true, at: now - 3 * 3600, bytes: 5 * 1048576, where: "restic" }, verify: { ok: true, at: now - 1800 } });
    await expect.poll(() => s.app.outbox.queueDepth).toBe(0); // the job's status messages have gone out
    const port = startOps(s);
    const r = await docket(["status"], envFor(s, port, 1));
    const { version, commit } = buildInfo();
    const lines = r.out.trimEnd().split("\n");
    expect(r.code).toBe(0);
    expect(lines[0]).toBe(`docket ${version} (${commit}) on vps-cli: running, ready`);
    expect(lines[1]).toMatch(new RegExp(`^ {10}cloud mode, long polling, sqlite; pid ${process.pid} since \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC$`));
    expect(lines[2]).toBe("health    ok: database, botApi, disk, polling, backup");
    expect(lines[3]).toMatch(/^intake    last update \d+ s ago; last getUpdates answer \d+ s ago$/);
    expect(lines[4]).toBe("jobs      accepted 0 · fetched 0 · processing 0 · ready 1 · failed 0 · expired 0 (waiting 0)");
    expect(lines[5]).toMatch(/^budget    0 MB of 4096 MB reserved \(0 %\); \d+ MB free on \S+$/);
    expect(lines[6]).toBe("chats     0 on hold after a 429; outbox queue 0");
    expect(lines[7]).toMatch(/^backup    last good \d{4}-\d\d-\d\d \d\d:\d\d UTC \(3 h ago, 5 MB, restic\); verify passed \d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
    expect(lines[8]).toBe("errors    last hour: no failed jobs; 0 error lines in the journal");
    expect(lines).toHaveLength(9);
  });

  test("not ready (disk) or not running: exit 1, the failing check spelled out, jobs and backups still read", async () => {
    stack = await startStack({ runner: copyRunner() });
    const s = stack;
    const u = s.em.user();
    const big = await u.sendDocument({ bytes: new Uint8Array(10).fill(1), file_name: "big.pdf", file_size: 26_214_400 });
    await s.waitJob((await s.jobFor(u.chatId, big.message_id)).id);
    const port = startOps(s, { downloadBudget: Number.MAX_SAFE_INTEGER });
    // The monitor's first round finds the disk short and raises disk_low (no admins: journal only).
    await expect.poll(async () => (await s.app.services.store.alertsSince(0)).map((a) => [a.cause, a.state])).toEqual([["disk_low", "no_admins"]]);
    const notReady = await docket(["status"], envFor(s, port, 1));
    expect(notReady.code).toBe(1);
    expect(notReady.out).toContain(": running, NOT READY\n");
    expect(notReady.out).toMatch(/\n {10}✗ disk: \d+ MB free on .+: needs \d+ MB free; free disk space or lower DOWNLOAD_BUDGET\n/);
    expect(notReady.out).toContain("\nerrors    last hour: 1 failed job (too_big 1); alerts: disk_low no_admins; 0 error lines in the journal\n");

    const dead = freePort();
    const down = await docket(["status"], envFor(s, dead, 1));
    expect(down.code).toBe(1);
    const lines = down.out.trimEnd().split("\n");
    expect(lines[0]).toMatch(new RegExp(`^docket: the bot is NOT RUNNING \\(no answer on 127\\.0\\.0\\.1:${dead} \\(ECONNREFUSED\\)\\); see: systemctl status docket; journalctl -u docket -n 50$`));
    expect(lines[1]).toBe("jobs      accepted 0 · fetched 0 · processing 0 · ready 0 · failed 1 · expired 0 (waiting 0)");
    expect(lines.at(-2)).toBe("backup    no backup has run yet; never verified");
    const json = JSON.parse((await docket(["status", "--json"], envFor(s, dead, 1))).out) as { db: { jobs: Record<string, number> }; bot: { down: string } };
    expect([json.db.jobs, json.bot.down]).toEqual([{ failed: 1 }, `no answer on 127.0.0.1:${dead} (ECONNREFUSED)`]);
    expect(existsSync(join(s.config.dataDir, "db", "docket.sqlite"))).toBe(true);
  });
});
