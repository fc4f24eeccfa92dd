/**
 * A failed off-box backup is never a silent success (issue 10, "Bad input and faults"): with the
 * real bot running (its Ops on the operator port) and real restic on a local-path repository, each of
 * a missing restic binary, a wrong password and an unreachable repository makes backup.sh
 * - fail with one `error:` line,
 * - send the admin an alert in Telegram — through the real `docket notify` (no stand-in), which the
 *   running bot delivers once per cause per hour,
 * - show in `/metrics` (`docket_backup_last_run_ok{kind="backup",where="restic"} 0`, no last success)
 *   and in `/readyz` (the `backup` check failing with the same line);
 * and a good run afterwards turns the metric and the check back.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Ops } from "../../bot/ops/runtime.ts";
import { REPO_ROOT } from "../../scripts/demo/bot-process.ts";
import { makeTempDir, removeDir, runCmdAsync } from "../bundle/helpers";
import { copyRunner } from "../support/copy-runner.ts";
import { sample } from "../support/prom-text.ts";
import { startStack, type Stack } from "../support/stack.ts";
import { toolReady } from "../support/tools.ts";
import { runningOps } from "../support/ops.ts";

const ready = toolReady("sqlite3") && toolReady("restic");
const PASSWORD = "a long restic password for the test";
let stack: Stack | null = null;
let ops: Ops | null = null;
let base = "";
let admin = 0;
let work = "";

beforeAll(async () => {
  if (!ready) return;
  work = makeTempDir("backup-alert");
  stack = await startStack({ runner: copyRunner() });
  const s = stack;
  admin = s.em.user({ language_code: "en" }).id;
  ({ ops, base } = runningOps(s, { adminUserIds: [admin], hostId: "vps-backup", downloadBudget: 1048576 }, { monitorIntervalMs: 100, ttlMs: { backup: 0 } }));
  mkdirSync(join(work, "hooks/pre.d"), { recursive: true });
  mkdirSync(join(work, "hooks/post.d"), { recursive: true });
  writeFileSync(join(work, "restic-password"), `${PASSWORD}\n`, { mode: 0o600 });
  writeFileSync(join(work, "restic.env"), `RESTIC_REPOSITORY=${join(work, "vault")}\nRESTIC_PASSWORD_FILE=${join(work, "restic-password")}\n`, { mode: 0o600 });
  expect((await backup(["--init-restic"])).status).toBe(0);
});
afterAll(async () => {
  await ops?.close();
  await stack?.stop();
  if (work) removeDir(work);
});

/**
 * backup.sh on the running bot's data, with the environment docket-backup.service gives it (docket.env's
 * keys). Spawned, not spawnSync: the bot and the emulator its alert goes through live in this process.
 */
function backup(args: string[] = [], env: Record<string, string> = {}) {
  const s = stack!;
  return runCmdAsync(["bash", "scripts/backup.sh", "--hooks-dir", join(work, "hooks"), ...args], {
    cwd: REPO_ROOT,
    env: {
      BACKUP_USER: "",
      BACKUP_DIR: undefined,
      DOCKET_NOTIFY: undefined,
      DOCKET_RESTIC_LOADED: undefined,
      RESTIC_REPOSITORY: undefined,
      RESTIC_PASSWORD: undefined,
      RESTIC_PASSWORD_FILE: undefined,
      RESTIC_ENV_FILE: join(work, "restic.env"),
      DOCKET_ENV_FILE: "/nonexistent/docket.env",
      DATA_DIR: s.config.dataDir,
      BOT_TOKEN: s.config.token,
      BOT_API_ROOT: s.config.apiRoot,
      HTTP_PORT: new URL(base).port,
      ADMIN_USER_IDS: String(admin),
      HOST_ID: "vps-backup",
      JOURNAL_STREAM: "",
      ...env,
    },
    timeoutMs: 120_000,
  });
}

/** A port on 127.0.0.1 nothing listens on any more. */
function closedPort(): number {
  const l = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = l.port;
  l.stop(true);
  return port;
}

const metrics = async () => (await fetch(`${base}/metrics`)).text();
const readyz = async () => (await (await fetch(`${base}/readyz`)).json()) as { ok: boolean; checks: Record<string, { ok: boolean; detail: string }> };
const toAdmin = () => stack!.em.calls.filter((c) => c.method === "sendMessage" && c.chatId === admin && c.ok).map((c) => String(c.params.text));

describe.skipIf(!ready)("a failed off-box backup: one line, an alert in Telegram, a metric", () => {
  test("no restic, a wrong password, an unreachable repository; then a good run", async () => {
    const s = stack!;
    const cases: Array<[string, Record<string, string>, () => void, RegExp]> = [
      ["no restic", { RESTIC: join(work, "no-such-restic") }, () => {}, /^error: restic is not installed \(apt-get install restic\), so no off-box copy was made; the local backup is at /],
      ["a wrong password", {}, () => writeFileSync(join(work, "restic-password"), "guess\n"), /^error: restic: wrong password for repository /],
      [
        "an unreachable repository",
        {},
        () => {
          writeFileSync(join(work, "restic-password"), `${PASSWORD}\n`);
          writeFileSync(join(work, "restic.env"), `RESTIC_REPOSITORY=rest:http://docket:pw@127.0.0.1:${closedPort()}/docket\nRESTIC_PASSWORD_FILE=${join(work, "restic-password")}\n`);
        },
        /^error: restic: cannot open repository rest:http:\/\/\*\*\*@127\.0\.0\.1:\d+\/docket: .*connection refused/,
      ],
    ];
    for (const [name, env, arrange, line] of cases) {
      arrange();
      const r = await backup([], env);
      const errors = r.stderr.split("\n").filter((l) => l.startsWith("error: "));
      expect([name, r.status, errors.length]).toEqual([name, 1, 1]);
      expect(errors[0]).toMatch(line);
      const m = await metrics();
      expect([name, sample(m, "docket_backup_last_run_ok", { kind: "backup", where: "restic" }), sample(m, "docket_backup_last_success_timestamp_seconds")]).toEqual([name, 0, 0]);
      await expect.poll(async () => (await readyz()).checks.backup).toEqual({ ok: false, detail: expect.stringMatching(/^the last backup failed at \S+: /) });
      expect((await readyz()).checks.backup!.detail).toContain(errors[0]!.slice("error: ".length));
    }
    // One message for the three (the first; the others within the hour are recorded, not sent),
    // delivered by the running bot.
    await expect.poll(toAdmin).toHaveLength(1);
    // Whichever came first: docket notify's record (backup.sh's line) or the bot's own (the backup check).
    expect(toAdmin()[0]).toMatch(/^⚠️ docket on vps-backup: backup failed\n(backup failed: |the last backup failed at \S+: )restic is not installed \(apt-get install restic\), so no off-box copy was made; the local backup is at /);
    const rows = await s.app.services.store.alertsSince(0);
    expect(rows.filter((a) => a.cause === "backup_failed").map((a) => a.source)).toContain("cli");
    await expect.poll(async () => (await s.app.services.store.pendingAlerts(Date.now())).length).toBe(0);
    expect(rows.every((a) => a.cause === "backup_failed")).toBe(true);
    expect(rows.map((a) => a.text).join("\n")).not.toContain("docket:pw");

    // The repository is back: a good run clears the metric and the check.
    writeFileSync(join(work, "restic.env"), `RESTIC_REPOSITORY=${join(work, "vault")}\nRESTIC_PASSWORD_FILE=${join(work, "restic-password")}\n`);
    const good = await backup();
    expect(good.status, good.stderr).toBe(0);
    const m = await metrics();
    expect(sample(m, "docket_backup_last_run_ok", { kind: "backup", where: "restic" })).toBe(1);
    expect(sample(m, "docket_backup_last_success_timestamp_seconds")).toBeGreaterThan(Date.now() / 1000 - 120);
    await expect.poll(async () => (await readyz()).checks.backup!.ok).toBe(true);
  }, 120_000);
});
