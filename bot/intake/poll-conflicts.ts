/**
 * An API transformer that keeps long polling alive through 409 conflicts
 * (field case BR-04; botapi-facts.md §2):
 * - "terminated by other getUpdates request" right after a restart (the old poll
 *   is still open): back off `backoffMs` plus up to as much again of jitter (1–2 s by
 *   default, never a tight loop), warn, retry; once the conflict has lasted longer than
 *   `alertAfterMs`, log one error naming the cause ({@link ANOTHER_POLLER});
 * - "can't use getUpdates method while webhook is active": call deleteWebhook
 *   once, keeping pending updates, then poll — or, when configured not to (or when a
 *   webhook is back after that one deletion), throw a `GrammyError` with error_code 409
 *   whose message carries {@link ANOTHER_POLLER}; @grammyjs/runner rethrows 401/409,
 *   so `bot/main.ts` logs it as fatal and exits with status 1.
 * grammY's runner treats any 409 as fatal; this transformer sits below it.
 */
import { GrammyError, type Transformer } from "grammy";
import type { Logger } from "../log.ts";

/** The abort signal grammY hands a transformer. */
type Signal = Parameters<Transformer>[3];

/** Options of {@link pollConflicts}. */
export interface PollConflictOptions {
  readonly log: Logger;
  /** Delete a leftover webhook when getUpdates reports one (DELETE_WEBHOOK_ON_START). */
  readonly deleteWebhook: boolean;
  /** Log an error once a conflict has lasted this long, ms (default 60 000). */
  readonly alertAfterMs?: number;
  /** Base backoff, ms (default 1000; jitter adds up to 100 %). */
  readonly backoffMs?: number;
  /** Clock, epoch ms (default `Date.now`; tests inject a fake). */
  readonly now?: () => number;
  /** Wait `ms`, rejecting when `signal` aborts (default: a timer; tests inject a fake). */
  readonly sleep?: (ms: number, signal?: Signal) => Promise<void>;
  /** Uniform number in [0, 1) for the jitter (default `Math.random`). */
  readonly random?: () => number;
}

/** The sentence operators see when another process polls with the same token (BR-04). */
export const ANOTHER_POLLER = "another process is polling with this token";

/** Default {@link PollConflictOptions.sleep}: a timer that an abort cancels (and rejects). */
function sleep(ms: number, signal?: Signal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(new Error("aborted"));
    const onAbort = () => {
      clearTimeout(timer);
      reject(new Error("aborted"));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Build the transformer (install with `bot.api.config.use(...)`). */
export function pollConflicts(options: PollConflictOptions): Transformer {
  const alertAfter = options.alertAfterMs ?? 60_000;
  const base = options.backoffMs ?? 1000;
  const now = options.now ?? Date.now;
  const wait = options.sleep ?? sleep;
  const random = options.random ?? Math.random;
  let since: number | null = null;
  let alerted = false;
  let webhookDeleted = false;

  return async (prev, method, payload, signal) => {
    if (method !== "getUpdates") return prev(method, payload, signal);
    for (;;) {
      const res = await prev(method, payload, signal);
      if (res.ok || res.error_code !== 409) {
        if (res.ok && since !== null) {
          options.log.info({ ms: now() - since }, "getUpdates conflict resolved");
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
      since ??= now();
      const lasted = now() - since;
      if (lasted > alertAfter && !alerted) {
        alerted = true;
        options.log.error({ ms: lasted, description: desc }, `getUpdates keeps answering 409: ${ANOTHER_POLLER}`);
      } else {
        options.log.warn({ description: desc }, "getUpdates conflict (409); backing off");
      }
      await wait(base + Math.floor(random() * base), signal);
    }
  };
}
