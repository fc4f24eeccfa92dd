/**
 * Webhook intake end to end: the emulator delivers updates by POST with the
 * secret header to grammY's webhook adapter on Bun.serve; a request without the
 * secret is refused and creates nothing.
 */
import { afterEach, expect, test } from "vitest";
import { loadConfig } from "../../bot/config.ts";
import { startWebhook, type WebhookServer } from "../../bot/intake/webhook.ts";
import { copyRunner } from "../support/copy-runner.ts";
import { freePort } from "../support/ports.ts";
import { startStack, type Stack } from "../support/stack.ts";

let stack: Stack | null = null;
let hook: WebhookServer | null = null;
afterEach(async () => {
  await hook?.stop();
  await stack?.stop();
  stack = null;
  hook = null;
});

/**
 * The webhook config and server on a port that was free a moment ago. The URL must name the port before
 * the server binds it, so another process (a parallel test file, a neighbour on a shared runner) can take
 * it in between: then Bun.serve throws EADDRINUSE before setWebhook is sent, and we try another port.
 */
async function startOnFreePort(s: Stack): Promise<{ hook: WebhookServer; port: number }> {
  for (let attempt = 1; ; attempt++) {
    const port = freePort();
    const cfg = loadConfig({ BOT_TOKEN: s.em.token, WEBHOOK_URL: `http://127.0.0.1:${port}/tg/hook`, WEBHOOK_SECRET: "s3cret_token-1", WEBHOOK_PORT: String(port) });
    try {
      return { hook: await startWebhook(s.app.bot, cfg.webhook!, s.app.services.log), port };
    } catch (err) {
      if (attempt >= 5 || !/EADDRINUSE|in use/i.test(String((err as { code?: string }).code ?? err))) throw err;
    }
  }
}

test("updates arrive by webhook with the secret token; a POST without it is refused", async () => {
  stack = await startStack({ runner: copyRunner(), noPolling: true, emulator: { allowHttpWebhook: true } });
  const started = await startOnFreePort(stack);
  hook = started.hook;
  const { port } = started;
  const setCall = stack.em.calls.find((c) => c.method === "setWebhook")!;
  expect(setCall.params.secret_token).toBe("s3cret_token-1");

  const u = stack.em.user({ language_code: "en" });
  const sent = await u.sendDocument({ bytes: new Uint8Array(2048).fill(7), file_name: "hook.bin" });
  const msgs = await u.waitFor((m) => m.some((x) => x.text?.includes("Queued")), 10_000);
  const row = (await stack.app.services.store.listByChat(u.chatId, 5))[0]!;
  expect(row.messageId).toBe(sent.message_id);
  expect(msgs[0]!.text).toContain(`job #${row.id}`);
  expect((await stack.waitJob(row.id)).status).toBe("ready");
  expect(stack.em.webhookDeliveries.length).toBe(1); // the one document update

  const forged = await fetch(`http://127.0.0.1:${port}/tg/hook`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ update_id: 999999, message: { message_id: 1, date: 0, chat: { id: 5, type: "private" }, from: { id: 5, is_bot: false, first_name: "x" }, text: "/jobs" } }),
  });
  expect(forged.status).toBe(401);
  expect(await stack.app.services.store.listByChat(5, 5)).toEqual([]);
});

test("the webhook POST is answered right after the INSERT, not after the chat reply (a held chat does not hold Telegram)", async () => {
  stack = await startStack({ runner: copyRunner(), noPolling: true, emulator: { allowHttpWebhook: true } });
  const started = await startOnFreePort(stack);
  hook = started.hook;
  const chatId = 4242;
  // Every message to this chat is refused with a 30 s flood wait: the "accepted" reply cannot go out for 30 s.
  stack.em.failNext("sendMessage", { error_code: 429, description: "Too Many Requests: retry after 30", retry_after: 30 }, { chatId, times: 100 });
  const update = {
    update_id: 777001,
    message: {
      message_id: 9,
      date: Math.floor(Date.now() / 1000),
      chat: { id: chatId, type: "private", first_name: "W" },
      from: { id: chatId, is_bot: false, first_name: "W", language_code: "en" },
      document: { file_id: "BQACAgIAAxkBAAIB-webhook-test", file_unique_id: "AgADwebhook01", file_name: "w.pdf", mime_type: "application/pdf", file_size: 1000 },
    },
  };
  const res = await fetch(`http://127.0.0.1:${started.port}/tg/hook`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": "s3cret_token-1" },
    body: JSON.stringify(update),
    signal: AbortSignal.timeout(10_000), // far below the 30 s hold: a handler waiting for the reply would abort this
  });
  expect(res.status).toBe(200);
  const rows = await stack.app.services.store.listByChat(chatId, 5);
  expect(rows.map((r) => [r.updateId, r.messageId, r.fileUniqueId])).toEqual([[777001, 9, "AgADwebhook01"]]);
  // The reply is tried after the answer, and held: the POST did not wait for it.
  await expect.poll(() => stack!.em.calls.some((c) => c.method === "sendMessage" && c.status === 429)).toBe(true);
}, 30_000);
