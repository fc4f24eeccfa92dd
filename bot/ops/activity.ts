/**
 * When intake last heard from Telegram (issue 10 item 2: "the time of the last update received and
 * of the last successful poll or webhook call"): read by `/metrics`, the readiness checks (a poller
 * that stopped getting answers, a webhook error older than the last delivery) and `docket status`.
 */
import type { Context, MiddlewareFn, Transformer } from "grammy";

/** Epoch ms of intake's last events; null until the first one. */
export class IntakeActivity {
  /** The last update handed to the bot (polling or webhook). */
  lastUpdateAt: number | null = null;
  /** The last getUpdates that Telegram answered `ok` (long polling). */
  lastPollOkAt: number | null = null;
  /** The last webhook POST the bot answered with 2xx (webhook mode). */
  lastWebhookOkAt: number | null = null;

  /** @param now clock, epoch ms */
  constructor(private readonly now: () => number = Date.now) {}

  /** Middleware, installed first: notes every update before any handler runs. */
  middleware(): MiddlewareFn<Context> {
    return (_ctx, next) => {
      this.lastUpdateAt = this.now();
      return next();
    };
  }

  /** An API transformer that notes every successful getUpdates (empty long polls included). */
  transformer(): Transformer {
    return async (prev, method, payload, signal) => {
      const res = await prev(method, payload, signal);
      if (method === "getUpdates" && res.ok) this.lastPollOkAt = this.now();
      return res;
    };
  }

  /** Note a webhook POST answered with 2xx. */
  webhookOk(): void {
    this.lastWebhookOkAt = this.now();
  }

  /** The last successful poll or webhook call, whichever is later (epoch ms), or null. */
  get lastIntakeOkAt(): number | null {
    const t = Math.max(this.lastPollOkAt ?? -1, this.lastWebhookOkAt ?? -1);
    return t < 0 ? null : t;
  }
}
