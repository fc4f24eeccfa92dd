/**
 * Webhook intake end to end: the emulator delivers updates by POST with the
 * secret header to grammY's webhook adapter on Bun.serve; a request without the
 * secret is refused and creates nothing.
 */
import { afterEach, expect, test } from "vitest";
import { loadConfig } from "../../bot/config.ts";
import { startWebhook, type WebhookServer } from "../../bot/intake/webhook.ts";
import { copyRunner } from "../support/copy-runner.ts";
import { startStack, type Stack } from "../support/stack.ts";

let stack: Stack | null = null;
let hook: WebhookServer | null = null;
afterEach(async () => {
  await hook?.stop();
  await stack?.stop();
  stack = null;
  hook = null;
});

function freePort(): number {
  const s = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const p = s.port!;
  s.stop(true);
  return p;
}

test("updates arrive by webhook with the secret token; a POST without it is refused", async () => {
  stack = await startStack({ runner: copyRunner(), noPolling: true, emulator: { allowHttpWebhook: true } });
  const port = freePort();
  const cfg = loadConfig({ BOT_TOKEN: stack.em.token, WEBHOOK_URL: `http://127.0.0.1:${port}/tg/hook`, WEBHOOK_SECRET: "s3cret_token-1", WEBHOOK_PORT: String(port) });
  hook = await startWebhook(stack.app.bot, cfg.webhook!, stack.app.services.log);
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
