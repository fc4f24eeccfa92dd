/**
 * Issue 9 item 3, bot side: in webhook mode the bot reads getWebhookInfo itself and raises ONE error
 * line plus a readiness failure when Telegram cannot deliver (`last_error_message`), and says so
 * again once deliveries work. The emulator reports `last_error_date`/`last_error_message`/
 * `pending_update_count` like telegram-bot-api (kept after a later success, cleared by setWebhook).
 * The path: emulator → a proxy standing in for nginx (answering 502 like nginx with a dead upstream)
 * → the bot's webhook listener.
 */
import { afterEach, expect, test } from "vitest";
import type { Config } from "../../bot/config.ts";
import { startWebhook, type WebhookServer } from "../../bot/intake/webhook.ts";
import type { Ops } from "../../bot/ops/runtime.ts";
import { rawCall } from "../emulator/raw-call.ts";
import { copyRunner } from "../support/copy-runner.ts";
import { freePort } from "../support/ports.ts";
import { startStack, type Stack } from "../support/stack.ts";
import { runningOps } from "../support/ops.ts";
import { sample } from "../support/prom-text.ts";

let stack: Stack | null = null;
let ops: Ops | null = null;
let hook: WebhookServer | null = null;
let proxy: ReturnType<typeof Bun.serve> | null = null;
afterEach(async () => {
  await ops?.close();
  await hook?.stop();
  await proxy?.stop(true);
  await stack?.stop();
  stack = ops = hook = proxy = null;
});

test("Telegram cannot deliver (nginx answers 502): one error line, readyz 503 naming Telegram's message; delivered again: ok line, readyz 200", async () => {
  stack = await startStack({ runner: copyRunner(), noPolling: true, emulator: { allowHttpWebhook: true } });
  const s = stack;
  let broken = true;
  let botPort = 0;
  proxy = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      if (broken) return new Response("<html>502 Bad Gateway</html>", { status: 502, statusText: "Bad Gateway", headers: { "content-type": "text/html" } });
      return fetch(`http://127.0.0.1:${botPort}/tg/hook`, { method: "POST", headers: req.headers, body: await req.text() });
    },
  });
  let config!: Config;
  const admin = s.em.user().id;
  for (let attempt = 1; !hook; attempt++) {
    botPort = freePort();
    config = { ...s.config, adminUserIds: [admin], hostId: "vps-hook", webhook: { url: `http://127.0.0.1:${proxy.port}/tg/hook`, secret: "s3cret_token-1", host: "127.0.0.1", port: botPort, path: "/tg/hook" } };
    try {
      hook = await startWebhook(s.app.bot, config.webhook!, s.app.services.log, { onDelivered: () => s.app.activity.webhookOk() });
    } catch (err) {
      if (attempt >= 5 || !/EADDRINUSE|in use/i.test(String((err as { code?: string }).code ?? err))) throw err;
    }
  }
  const started = runningOps(s, config, { monitorIntervalMs: 100, ttlMs: { webhook: 0 } });
  ops = started.ops;
  const base = started.base;
  const readyz = async () => {
    const r = await fetch(`${base}/readyz`);
    return { status: r.status, webhook: (await r.json()).checks.webhook as { ok: boolean; detail: string } };
  };
  expect(await readyz()).toEqual({ status: 200, webhook: { ok: true, detail: `delivering to http://127.0.0.1:${proxy.port}/tg/hook (pending_update_count 0)` } });

  const u = s.em.user({ language_code: "en" });
  const sent = await u.sendDocument({ bytes: new Uint8Array(2048).fill(9), file_name: "w.bin" });
  const failing = () => s.logs.map((l) => JSON.parse(l)).filter((l) => l.check === "webhook" && /failing/.test(l.msg));
  await expect.poll(() => failing().length).toBe(1);
  const line = failing()[0]!;
  expect(line.level).toBe(50);
  expect(line.msg).toMatch(/^readiness check webhook failing: Telegram cannot deliver to the webhook: "Wrong response from the webhook: 502 Bad Gateway" at \S+Z \(pending_update_count 1\); check nginx and the certificate$/);
  const bad = await readyz();
  expect([bad.status, bad.webhook.ok]).toEqual([503, false]);
  // One alert to the admin (webhook_error), through the outbox.
  const alerts = () => s.em.calls.filter((c) => c.method === "sendMessage" && c.chatId === admin && c.ok).map((c) => String(c.params.text));
  await expect.poll(alerts).toHaveLength(1);
  expect(alerts()[0]).toMatch(/^⚠️ docket on vps-hook: webhook in error\nTelegram cannot deliver to the webhook: "Wrong response from the webhook: 502 Bad Gateway" at /);
  // The emulator reports what the server reports, and /metrics what the check saw.
  const info = (await rawCall(s.em, "getWebhookInfo")).body.result as { pending_update_count: number; last_error_date: number };
  expect(info).toMatchObject({ pending_update_count: 1, last_error_message: "Wrong response from the webhook: 502 Bad Gateway" });
  const m = await (await fetch(`${base}/metrics`)).text();
  expect([sample(m, "docket_webhook_pending_updates"), sample(m, "docket_webhook_last_error_timestamp_seconds"), sample(m, "docket_ready_check", { check: "webhook" })]).toEqual([1, info.last_error_date, 0]);
  // More rounds while it stays broken: still that one line.
  const rounds = s.em.count("getWebhookInfo");
  await expect.poll(() => s.em.count("getWebhookInfo")).toBeGreaterThan(rounds + 3);
  expect(failing()).toHaveLength(1);
  expect(alerts()).toHaveLength(1);

  // nginx fixed: Telegram's retry delivers, the job runs, the check is ok again (the error stays in getWebhookInfo).
  broken = false;
  const row = await s.jobFor(u.chatId, sent.message_id);
  expect((await s.waitJob(row.id)).status).toBe("ready");
  await expect.poll(async () => (await readyz()).status).toBe(200);
  const recovered = () => s.logs.map((l) => JSON.parse(l)).filter((l) => l.check === "webhook" && /is ok again/.test(l.msg));
  await expect.poll(() => recovered().map((l) => l.level)).toEqual([30]);
  expect((await readyz()).webhook.detail).toMatch(/^delivering to \S+ \(pending_update_count 0; last error "Wrong response from the webhook: 502 Bad Gateway" at \S+Z has passed\)$/);
  expect((await rawCall(s.em, "getWebhookInfo")).body.result).toMatchObject({ last_error_message: "Wrong response from the webhook: 502 Bad Gateway" });
  const after = await (await fetch(`${base}/metrics`)).text();
  expect([sample(after, "docket_webhook_pending_updates"), sample(after, "docket_ready_check", { check: "webhook" })]).toEqual([0, 1]);
}, 60_000);
