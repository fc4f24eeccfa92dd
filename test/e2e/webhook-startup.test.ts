/**
 * setWebhook at start-up (issue 11 item 6), the real bot process against the strict emulator:
 * - refused (400): one fatal line naming the method and Telegram's description, exit 78, and the
 *   webhook secret nowhere in the output (before, the whole GrammyError payload with `secret_token`
 *   reached stderr);
 * - failing for a while (5xx): retried with capped backoff and one journal line for the kind, never
 *   forever in silence; the bot starts once Telegram takes the webhook.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { EXIT_TOKEN_REFUSED } from "../../bot/ops/exit-codes.ts";
import { botEnv } from "../../scripts/demo/bot-process.ts";
import { startEmulator, type Emulator } from "../emulator/index.ts";
import { startBotProcess, type BotProcess } from "../support/bot-process.ts";
import { freePort } from "../support/ports.ts";

const SECRET = "wh-secret_7f3a9c1e5b2d4f6a8c0e";
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

test("a refused setWebhook: one fatal line with Telegram's description, exit 78, the secret never in the output", async () => {
  const { em, bot } = await bootWith((e) => e.failNext("setWebhook", { error_code: 400, description: "Bad Request: bad webhook: Failed to resolve host: Name or service not known" }));
  expect(await bot.exited()).toBe(EXIT_TOKEN_REFUSED);
  const fatal = bot.lines.filter((l) => l.level === 60);
  expect(fatal.map((l) => [l.method, l.error_code, l.exit_status])).toEqual([["setWebhook", 400, 78]]);
  expect(String(fatal[0]!.msg)).toBe("Telegram refused setWebhook (400 Bad Request: bad webhook: Failed to resolve host: Name or service not known): check WEBHOOK_URL and WEBHOOK_SECRET, then restart");
  expect(em.calls.filter((c) => c.method === "setWebhook").map((c) => [c.status, c.params.secret_token])).toEqual([[400, SECRET]]); // it was sent, so it could have leaked
  expect(bot.text()).not.toContain(SECRET);
  expect(bot.text()).not.toContain(em.token.split(":")[1]);
}, 60_000);

test("setWebhook answering 502 three times: retried with backoff, one journal line for the kind, then the bot starts", async () => {
  const { em, bot } = await bootWith((e) => e.failNext("setWebhook", { error_code: 502, description: "Bad Gateway" }, { times: 3 }));
  await expect.poll(() => em.calls.filter((c) => c.method === "setWebhook" && c.ok).length, { timeout: 15_000 }).toBe(1);
  expect(em.calls.filter((c) => c.method === "setWebhook").map((c) => c.status)).toEqual([502, 502, 502, 200]);
  await expect.poll(() => bot.lines.some((l) => l.msg === "webhook set; listening for updates"), { timeout: 15_000 }).toBe(true);
  const lines = bot.lines.filter((l) => typeof l.msg === "string" && /^cannot reach the Bot API/.test(l.msg));
  expect(lines.map((l) => [l.method, l.kind])).toEqual([["setWebhook", "api"]]);
  expect(bot.text()).not.toContain(SECRET);
}, 60_000);

/** {@link boot} with `arm` run on the emulator before the bot starts. */
async function bootWith(arm: (em: Emulator) => void): Promise<{ em: Emulator; bot: BotProcess }> {
  const em = await startEmulator({ rateLimits: false });
  cleanups.push(() => em.close());
  arm(em);
  const dir = mkdtempSync(join(tmpdir(), "docket-wh-start-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const bot = startBotProcess(
    botEnv(em, join(dir, "data"), { HTTP_PORT: String(freePort()), WEBHOOK_PORT: String(freePort()), WEBHOOK_URL: "https://bot.example.com/tg/hook", WEBHOOK_SECRET: SECRET, STARTUP_RETRY_MAX: "1s", LOG_LEVEL: "info" }),
  );
  cleanups.push(() => bot.kill());
  return { em, bot };
}
