/**
 * An API transformer that keeps long polling alive through 409 conflicts
 * (field case BR-04; botapi-facts.md §2):
 * - "terminated by other getUpdates request" right after a restart (the old poll
 *   is still open): back off 1–2 s with jitter, warn, retry; if it lasts longer
 *   than `alertAfterMs`, log an error naming the cause once;
 * - "can't use getUpdates method while webhook is active": call deleteWebhook
 *   once, keeping pending updates, then poll — or, when configured not to,
 *   throw so the process exits non-zero with that sentence.
 * grammY's runner treats any 409 as fatal; this transformer sits below it.
 */
import { GrammyError, type Transformer } from "grammy";
import type { Logger } from "../log.ts";

/** Options of {@link pollConflicts}. */
export interface PollConflictOptions {
  readonly log: Logger;
  /** Delete a leftover webhook when getUpdates reports one (DELETE_WEBHOOK_ON_START). */
  readonly deleteWebhook: boolean;
  /** Log an error once a conflict has lasted this long, ms (default 60 000). */
  readonly alertAfterMs?: number;
  /** Base backoff, ms (default 1000; jitter adds up to 100 %). */
  readonly backoffMs?: number;
}

/** The sentence operators see when another process polls with the same token. */
export const ANOTHER_POLLER = "another process is polling with this token";

/** Build the transformer (install with `bot.api.config.use(...)`). */
export function pollConflicts(options: PollConflictOptions): Transformer {
  const alertAfter = options.alertAfterMs ?? 60_000;
  const base = options.backoffMs ?? 1000;
  let since: number | null = null;
  let alerted = false;
  let webhookDeleted = false;

  return async (prev, method, payload, signal) => {
    if (method !== "getUpdates") return prev(method, payload, signal);
    for (;;) {
      const res = await prev(method, payload, signal);
      if (res.ok || res.error_code !== 409) {
        if (res.ok && since !== null) {
          options.log.info({ ms: Date.now() - since }, "getUpdates conflict resolved");
          since = null;
          alerted = false;
        }
        return res;
      }
      const desc = res.description;
      if (/webhook is active/i.test(desc)) {
        if (!options.deleteWebhook || webhookDeleted) {
          throw new GrammyError(`Call to 'getUpdates' failed: a webhook is set; ${ANOTHER_POLLER} or a webhook is configured (set DELETE_WEBHOOK_ON_START=true or delete it)`, res, method, payload);
        }
        options.log.warn("a webhook is set while long polling; deleting it (pending updates kept)");
        const del = await prev("deleteWebhook", { drop_pending_updates: false }, signal);
        webhookDeleted = true;
        if (!del.ok) options.log.error({ description: del.description }, "deleteWebhook failed");
        continue;
      }
      since ??= Date.now();
      const lasted = Date.now() - since;
      if (lasted > alertAfter && !alerted) {
        alerted = true;
        options.log.error({ ms: lasted, description: desc }, `getUpdates keeps answering 409: ${ANOTHER_POLLER}`);
      } else {
        options.log.warn({ description: desc }, "getUpdates conflict (409); backing off");
      }
      const wait = base + Math.floor(Math.random() * base);
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, wait);
        signal?.addEventListener("abort", () => (clearTimeout(timer), reject(new Error("aborted"))), { once: true });
      });
    }
  };
}
