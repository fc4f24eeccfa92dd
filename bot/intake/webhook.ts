/**
 * Webhook intake (instead of long polling): grammY's webhook adapter on
 * `Bun.serve`, listening on 127.0.0.1 behind nginx. The secret token header is
 * checked by grammY (`X-Telegram-Bot-Api-Secret-Token`; Bot API: setWebhook
 * secret_token); the answer goes back right after the handler's INSERT and reply.
 */
import { ALLOWED_UPDATES } from "./allowed-updates.ts";
import { webhookCallback, type Api, type Bot } from "grammy";
import type { Config } from "../config.ts";
import type { DocketContext } from "../i18n/index.ts";
import type { Logger } from "../log.ts";

/** A running webhook listener. */
export interface WebhookServer {
  /** The port it listens on (useful with port 0 in tests). */
  readonly port: number;
  stop(): Promise<void>;
}

/** Options of {@link startWebhook}. */
export interface WebhookOptions {
  /**
   * Runs the setWebhook call (default: once). Start-up passes a wrapper that waits out an
   * unreachable Bot API (bot/ops/reach.ts) and throws when it gives up; the listener is stopped then.
   */
  readonly register?: (setWebhook: (signal?: AbortSignal) => Promise<unknown>) => Promise<void>;
  /** The client for setWebhook (default `bot.api`; start-up passes its plain operator Api, whose attempts it bounds). */
  readonly api?: Api;
  /** Called for every update POST answered with 2xx (the metrics' last successful webhook call). */
  readonly onDelivered?: () => void;
}

/**
 * Start the local listener, then register the webhook with Telegram.
 * @throws GrammyError when setWebhook is refused (bad URL, secret), or what `register` throws —
 *   the listener is stopped first
 */
export async function startWebhook(bot: Bot<DocketContext>, webhook: NonNullable<Config["webhook"]>, log: Logger, opts: WebhookOptions = {}): Promise<WebhookServer> {
  const handle = webhookCallback(bot, "std/http", { secretToken: webhook.secret, onTimeout: "return", timeoutMilliseconds: 9_000 });
  const server = Bun.serve({
    hostname: webhook.host,
    port: webhook.port,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (req.method !== "POST" || path !== webhook.path) return new Response("Not Found", { status: 404 });
      try {
        const res = await handle(req);
        if (res.status >= 200 && res.status < 300) opts.onDelivered?.();
        return res;
      } catch (err) {
        log.error({ err }, "webhook update failed");
        return new Response("error", { status: 500 });
      }
    },
  });
  const setWebhook = (signal?: AbortSignal) =>
    (opts.api ?? bot.api).setWebhook(webhook.url, { secret_token: webhook.secret, allowed_updates: [...ALLOWED_UPDATES], drop_pending_updates: false }, signal as never);
  try {
    await (opts.register ? opts.register(setWebhook) : setWebhook());
  } catch (err) {
    await server.stop(true);
    throw err;
  }
  log.info({ listen: `${webhook.host}:${server.port}`, path: webhook.path }, "webhook set; listening for updates");
  return { port: server.port ?? webhook.port, stop: async () => void (await server.stop(true)) };
}
