/**
 * Operator alerts from the running bot (issue 10 item 3): the bot raises them itself — disk below the
 * budget, repeated processing crashes — and sends each to every ADMIN_USER_IDS through the outbox, at
 * most once per cause per hour; every alert is also a journal line at warning. Without admins the
 * journal is all; an admin who blocked the bot makes it `failed` with one error line. The real bot
 * stack and its Ops against the emulator.
 */
import { afterEach, expect, test } from "vitest";
import type { Config } from "../../bot/config.ts";
import type { Ops } from "../../bot/ops/runtime.ts";
import type { ProcessRunner } from "../../bot/worker/types.ts";
import { ProcessingError } from "../../processors/types.ts";
import { copyRunner } from "../support/copy-runner.ts";
import { sample } from "../support/prom-text.ts";
import { startStack, type Stack, type StackOptions } from "../support/stack.ts";
import { runningOps } from "../support/ops.ts";

let stack: Stack | null = null;
let ops: Ops | null = null;
afterEach(async () => {
  await ops?.close();
  await stack?.stop();
  stack = null;
  ops = null;
});

/** Start the stack and its Ops (monitor and sender every 100 ms, disk checked every round). */
async function withOps(overrides: (s: Stack) => Partial<Config>, opts: StackOptions = {}): Promise<{ s: Stack; ops: Ops; base: string }> {
  stack = await startStack({ runner: copyRunner(), ...opts });
  const s = stack;
  const started = runningOps(s, overrides(s), { monitorIntervalMs: 100, ttlMs: { disk: 0 } });
  ops = started.ops;
  return { s, ops, base: started.base };
}

const lines = (s: Stack) => s.logs.map((l) => JSON.parse(l) as Record<string, unknown> & { msg: string; level: number });

test("disk below the budget: one alert to each admin and a journal warning; the same cause again within the hour is suppressed", async () => {
  let admins: number[] = [];
  const started = await withOps((s) => {
    admins = [s.em.user().id, s.em.user().id];
    return { downloadBudget: Number.MAX_SAFE_INTEGER, adminUserIds: admins, hostId: "vps-test" };
  });
  const { s } = started;
  const [a, b] = admins;
  const chatOf = (id: number) => s.em.calls.filter((c) => c.method === "sendMessage" && c.chatId === id && c.ok);
  await expect.poll(() => [chatOf(a!).length, chatOf(b!).length]).toEqual([1, 1]);
  const text = String(chatOf(a!)[0]!.params.text);
  expect(text).toMatch(/^⚠️ docket on vps-test: disk below the byte budget\n\d+ MB free on \S+, budget \d+ MB \(0 MB reserved\): needs \d+ MB free; free disk space or lower DOWNLOAD_BUDGET$/);
  const warn = lines(s).filter((l) => l.msg.startsWith("alert disk_low: "));
  expect(warn.map((l) => [l.level, l.cause, l.source])).toEqual([[40, "disk_low", "bot"]]);
  await expect.poll(async () => (await s.app.services.store.alertsSince(0)).map((r) => [r.cause, r.state, r.source])).toEqual([["disk_low", "sent", "bot"]]);

  // The disk recovers and fails again within the hour: recorded and logged, not sent.
  await started.ops.alerts.raise("disk_low", "still low");
  await expect.poll(async () => (await s.app.services.store.alertsSince(0)).map((r) => r.state)).toEqual(["sent", "suppressed"]);
  expect([chatOf(a!).length, chatOf(b!).length]).toEqual([1, 1]);
  expect(lines(s).filter((l) => l.msg === "alert disk_low: still low").map((l) => l.level)).toEqual([40]);
  const m = await (await fetch(`${started.base}/metrics`)).text();
  expect([sample(m, "docket_alerts_total", { cause: "disk_low", result: "sent" }), sample(m, "docket_alerts_total", { cause: "disk_low", result: "suppressed" })]).toEqual([1, 1]);
});

test("repeated processing crashes: three crashed tries make one processing_crashes alert", async () => {
  const crashing = (async () => {
    throw new ProcessingError("processing_crashed", {}, "processor child died without a result (signal SIGSEGV)");
  }) as unknown as ProcessRunner;
  let admin = 0;
  const { s, base } = await withOps((st) => ({ adminUserIds: [(admin = st.em.user().id)] }), { runner: crashing, env: { MAX_ATTEMPTS: "3" } });
  const u = s.em.user();
  const sent = await u.sendDocument({ bytes: new Uint8Array(300).fill(2), file_name: "c.bin" });
  expect((await s.waitJob((await s.jobFor(u.chatId, sent.message_id)).id)).reason).toBe("processing_crashed");
  const toAdmin = () => s.em.calls.filter((c) => c.method === "sendMessage" && c.chatId === admin && c.ok).map((c) => String(c.params.text));
  await expect.poll(toAdmin).toHaveLength(1);
  expect(toAdmin()[0]).toMatch(/^⚠️ docket on \S+: repeated processing crashes\n3 processing tries crashed in the last 10 min \(reason processing_crashed\): /);
  const m = await (await fetch(`${base}/metrics`)).text();
  expect(sample(m, "docket_try_failures_total", { step: "processing", reason: "processing_crashed" })).toBe(3);
});

test("no ADMIN_USER_IDS: the alert stays in the journal (no_admins), with one line saying how to get them", async () => {
  const { s, ops: o } = await withOps(() => ({ adminUserIds: [] }));
  await o.alerts.raise("backup_failed", "restic: repository not found");
  await o.alerts.raise("webhook_error", "502");
  await expect.poll(async () => (await s.app.services.store.alertsSince(0)).map((r) => r.state)).toEqual(["no_admins", "no_admins"]);
  expect(lines(s).filter((l) => l.msg.startsWith("ADMIN_USER_IDS is empty")).map((l) => l.level)).toEqual([40]);
  expect(s.em.count("sendMessage")).toBe(0);
});

test("the only admin blocked the bot: failed, one error line naming ADMIN_USER_IDS, the detail names the admin", async () => {
  let blocked = 0;
  const { s, ops: o } = await withOps((st) => {
    const b = st.em.user();
    b.block();
    blocked = b.id;
    return { adminUserIds: [blocked] };
  });
  await o.alerts.raise("unit_failed", "docket-janitor.service failed");
  await expect.poll(async () => (await s.app.services.store.alertsSince(0)).map((r) => r.state)).toEqual(["failed"]);
  const errors = lines(s).filter((l) => l.level === 50 && l.msg.startsWith("alert unit_failed could not be sent to any admin"));
  expect(errors).toHaveLength(1);
  expect(String((await s.app.services.store.alertsSince(0))[0]!.detail)).toContain(`${blocked}: `);
  expect(s.logs.join("\n")).not.toContain(s.em.token.split(":")[1]);
});

test("local mode, LOCAL_BOT_API_DIR out of reach: one bot_api_dir alert naming the directory and the fix", async () => {
  let admin = 0;
  const missing = "/nonexistent/docket-test/telegram-bot-api";
  const { s } = await withOps((st) => {
    admin = st.em.user().id;
    return { mode: "local", localBotApiDir: missing, adminUserIds: [admin], hostId: "vps-test" };
  });
  const sent = () => s.em.calls.filter((c) => c.method === "sendMessage" && c.chatId === admin && c.ok);
  await expect.poll(() => sent().length).toBe(1);
  expect(String(sent()[0]!.params.text)).toBe(
    `⚠️ docket on vps-test: the local Bot API server's files are out of reach\nLOCAL_BOT_API_DIR ${missing} does not exist on this host; set LOCAL_BOT_API_DIR to the server's --dir, bind-mounted at the same absolute path in its container (DOCKET_BOT_API_DIR in compose.env), then restart docket`,
  );
  expect(lines(s).filter((l) => l.msg.startsWith("alert bot_api_dir: ")).map((l) => [l.level, l.cause])).toEqual([[40, "bot_api_dir"]]);
  await expect.poll(async () => (await s.app.services.store.alertsSince(0)).map((r) => [r.cause, r.state])).toEqual([["bot_api_dir", "sent"]]);
});
