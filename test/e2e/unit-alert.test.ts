/**
 * A failed unit reaches the admins in Telegram (issue 10 item 3, cause `unit_failed`) with no extra
 * software: `systemd/docket-alert@.service`, started by every docket unit's OnFailure=, runs its
 * ExecStart — read from the unit file, `%i` the failed unit — as an unprivileged system user, inside
 * the unit's file-system sandbox (test/support/unit-sandbox.ts: ProtectSystem=strict, PrivateTmp, its
 * ReadWritePaths= read from the unit), with the unit's environment (docket.env's keys, its Environment= lines, and
 * the MONITOR_* variables systemd hands an OnFailure= unit), against the emulator, no bot running
 * (docket.service is the unit that failed):
 * - exit 78: the command sends the alert itself, naming the status, what it means and the fix; the
 *   row and SQLite's -wal/-shm belong to the unit's user;
 * - docket-backup.service after backup.sh's own backup_failed alert: the admins are not told twice;
 * - another unit within the hour, on a systemd without MONITOR_* (the ending read from `systemctl show`):
 *   recorded, settled `suppressed` (at most once per cause per hour).
 */
import { Database } from "bun:sqlite";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { openDb } from "../../bot/db/open.ts";
import { REPO_ROOT } from "../../scripts/demo/bot-process.ts";
import { startEmulator, type Emulator } from "../emulator/index.ts";
import { freePort } from "../support/ports.ts";
import { canCreateUsers, createSystemUser, removeSystemUser } from "../support/system-user.ts";
import { toolReady } from "../support/tools.ts";
import { inUnitSandbox, unitPaths } from "../support/unit-sandbox.ts";
import { asUser, canRead, reachableRepoRoot } from "../support/unprivileged.ts";

const UNIT = join(REPO_ROOT, "systemd", "docket-alert@.service");

/** Why the suite cannot run here, or null. */
function cannotRun(): string | null {
  if (!canCreateUsers()) return "needs root with useradd and setpriv (runs the unit as its own user)";
  if (!toolReady("unshare")) return "needs unshare (util-linux)";
  if (reachableRepoRoot() === null) return "no path to this checkout an unprivileged user can read (test/support/unprivileged.ts)";
  return null;
}
const why = cannotRun();
if (why) console.warn(`skipped: docket-alert@.service (test/e2e/unit-alert.test.ts): ${why}`);

let user: { name: string; uid: number; gid: number } | null = null;
let root = "";
let em: Emulator | null = null;
const stages: string[] = [];
beforeAll(() => {
  if (why) return;
  user = createSystemUser("docket-t-alert");
  if (!canRead(join(reachableRepoRoot()!, "package.json"), user.uid, user.gid)) throw new Error("the checkout is not readable by the test user");
});
afterAll(async () => {
  await em?.close();
  for (const d of stages) rmSync(d, { recursive: true, force: true });
  if (root) rmSync(root, { recursive: true, force: true });
  if (user) removeSystemUser(user.name);
});

/** The values of `key=` in the unit, in order. */
function directives(key: string): string[] {
  return readFileSync(UNIT, "utf8")
    .split("\n")
    .filter((l) => l.startsWith(`${key}=`))
    .map((l) => l.slice(key.length + 1));
}

/** The mount-namespace sandbox of the alert unit (test/support/unit-sandbox.ts), its paths moved under `root`. */
function inSandbox(argv: string[]): string[] {
  const stage = mkdtempSync(join("/dev/shm", "docket-alert-stage-"));
  stages.push(stage);
  return inUnitSandbox(argv, root, stage, [reachableRepoRoot()!], unitPaths(UNIT));
}

/**
 * Run docket-alert@`failed`.service as systemd would: its ExecStart as the unit's user (User=), in its
 * sandbox, from its WorkingDirectory (the checkout), with `env` (EnvironmentFile=), its Environment=
 * lines and `monitor`.
 */
async function runAlertUnit(failed: string, env: Record<string, string>, monitor: Record<string, string> = {}): Promise<{ code: number; out: string }> {
  const [exec] = directives("ExecStart");
  const words = exec!.replaceAll("%i", failed).split(" ");
  expect(words.slice(0, 2)).toEqual(["/usr/local/bin/bun", "bot/cli/main.ts"]);
  // This machine's bun, and no .env of a developer's checkout (a release directory has none).
  const argv = ["bun", "--no-env-file", ...words.slice(1)];
  const fixed = Object.fromEntries(directives("Environment").map((e) => e.split(/=(.*)/s).slice(0, 2) as [string, string]));
  // CacheDirectory= makes /var/cache/docket under systemd; here Bun's cache is off.
  const unitEnv = { ...fixed, BUN_RUNTIME_TRANSPILER_CACHE_PATH: "0" };
  const p = Bun.spawn(inSandbox([...asUser(user!.uid, user!.gid), "--no-new-privs", "--inh-caps=-all", ...argv]), {
    cwd: reachableRepoRoot()!,
    env: { PATH: process.env.PATH!, JOURNAL_STREAM: "", ...env, ...unitEnv, ...monitor },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, out: out + err };
}

describe.skipIf(why !== null)("docket-alert@.service: a failed unit tells the admins", () => {
  test("bot down (exit 78): sent by the command as the unit's user; a backup's own alert not repeated; the next within the hour suppressed", async () => {
    expect([directives("User"), directives("ReadWritePaths")]).toEqual([["docket"], ["/var/lib/docket/db"]]);
    root = mkdtempSync(join(tmpdir(), "docket-alert-"));
    chmodSync(root, 0o755);
    const dataDir = join(root, "var/lib/docket");
    const db = join(dataDir, "db");
    mkdirSync(db, { recursive: true, mode: 0o750 });
    for (const p of [join(root, "var"), join(root, "var/lib")]) chmodSync(p, 0o755);
    chmodSync(dataDir, 0o750);
    openDb(join(db, "docket.sqlite")).close();
    for (const p of [dataDir, db, ...readdirSync(db).map((f) => join(db, f))]) chownSync(p, user!.uid, user!.gid);
    em = await startEmulator({ rateLimits: false });
    const admin = em.user({ language_code: "en" });
    // docket.env's keys as EnvironmentFile= hands them over; nothing answers on HTTP_PORT (the bot is down).
    const env = { BOT_TOKEN: em.token, BOT_API_ROOT: em.apiRoot, DATA_DIR: dataDir, HTTP_PORT: String(freePort()), ADMIN_USER_IDS: String(admin.id), HOST_ID: "vps-unit" };
    const toAdmin = () => em!.calls.filter((c) => c.method === "sendMessage" && c.chatId === admin.id && c.ok).map((c) => String(c.params.text));
    const lastText = () => {
      const d = new Database(join(db, "docket.sqlite"), { readonly: true });
      try {
        return d.query<{ text: string }, []>("SELECT text FROM ops_alerts ORDER BY id DESC LIMIT 1").get()?.text;
      } finally {
        d.close();
      }
    };
    const rows = () => {
      const d = new Database(join(db, "docket.sqlite"), { readonly: true });
      try {
        return d.query<{ cause: string; state: string }, []>("SELECT cause, state FROM ops_alerts ORDER BY id").all().map((r) => `${r.cause} ${r.state}`);
      } finally {
        d.close();
      }
    };

    const down = await runAlertUnit("docket.service", env, { MONITOR_SERVICE_RESULT: "exit-code", MONITOR_EXIT_CODE: "exited", MONITOR_EXIT_STATUS: "78", MONITOR_UNIT: "docket.service" });
    expect(down.code, down.out).toBe(0);
    expect(toAdmin()).toEqual([
      "⚠️ docket on vps-unit: a docket unit failed\n" +
        "docket.service failed: exit status 78 (the Bot API refused the token, or BOT_API_ROOT is not a Bot API server: fix BOT_TOKEN / BOT_API_ROOT in /etc/docket/docket.env, then systemctl restart docket.service). " +
        "Its log: journalctl -u docket.service -n 50; state: systemctl status docket.service",
    ]);
    expect(rows()).toEqual(["unit_failed sent"]);
    // Recorded as the unit's user: nothing in db/ belongs to anyone else.
    for (const f of readdirSync(db)) expect([f, statSync(join(db, f)).uid]).toEqual([f, user!.uid]);

    // backup.sh told the admins itself (backup_failed, run as the same user), then its unit failed: one message.
    // (Spawned, not spawnSync: the emulator answering the command lives in this process.)
    const own = Bun.spawn(inSandbox([...asUser(user!.uid, user!.gid), "bun", "--no-env-file", "bot/cli/main.ts", "notify", "backup_failed", "restic: wrong password"]), {
      cwd: reachableRepoRoot()!,
      env: { PATH: process.env.PATH!, JOURNAL_STREAM: "", ...env },
      stderr: "pipe",
    });
    expect(await own.exited, await new Response(own.stderr).text()).toBe(0);
    expect(toAdmin()).toHaveLength(2);
    const covered = await runAlertUnit("docket-backup.service", env, { MONITOR_SERVICE_RESULT: "exit-code", MONITOR_EXIT_CODE: "exited", MONITOR_EXIT_STATUS: "1" });
    expect(covered.code, covered.out).toBe(0);
    expect(covered.out).toMatch(/docket-backup\.service failed; the admins were told already \(backup_failed at \S+\): not recorded again/);
    expect(rows()).toEqual(["unit_failed sent", "backup_failed sent"]);

    // Another unit within the hour, on a systemd before 251 (no MONITOR_*: the command asks `systemctl show`,
    // here a stand-in printing what systemd 249 prints): recorded with that ending, not sent (once per hour).
    const systemctl = join(root, "systemctl");
    writeFileSync(systemctl, "#!/bin/sh\n[ \"$*\" = 'show --property=Result,ExecMainCode,ExecMainStatus docket-nginx.service' ] || exit 1\nprintf 'Result=signal\\nExecMainCode=2\\nExecMainStatus=9\\n'\n", { mode: 0o755 });
    const nginx = await runAlertUnit("docket-nginx.service", { ...env, SYSTEMCTL: systemctl });
    expect(nginx.code, nginx.out).toBe(0);
    expect(rows()).toEqual(["unit_failed sent", "backup_failed sent", "unit_failed suppressed"]);
    expect(lastText()).toBe("docket-nginx.service failed: killed by SIGKILL. Its log: journalctl -u docket-nginx.service -n 50; state: systemctl status docket-nginx.service");
    expect(toAdmin()).toHaveLength(2);
  }, 90_000);
});
