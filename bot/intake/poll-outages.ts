/**
 * An API transformer that keeps long polling alive through a Bot API outage after start-up (issue 9
 * item 2, issue 10): a getUpdates that fails with a network error, a 5xx or a 429 is tried again
 * with capped exponential backoff, and the journal gets one line per kind of failure (and a
 * reminder while it lasts), one when polling works again — through the same {@link OutageTracker}
 * rules as start-up. Without it, @grammyjs/runner retries silently (`silent: true`) with a backoff
 * that doubles without a cap and gives up after 15 hours.
 *
 * A 401 (token revoked while running) is passed on: the runner rethrows it and `bot/main.ts` exits
 * 78. A 409 is left to bot/intake/poll-conflicts.ts (installed below this one).
 */
import { GrammyError, HttpError, type Transformer } from "grammy";
import type { Logger } from "../log.ts";
import { backoffMs, classifyAttempt, type OutageTracker } from "../ops/outage.ts";

/** Options of {@link pollOutages}. */
export interface PollOutageOptions {
  readonly log: Logger;
  readonly tracker: OutageTracker;
  /** Longest wait between attempts, ms (STARTUP_RETRY_MAX). */
  readonly capMs: number;
  /** Clock, epoch ms. */
  readonly now?: () => number;
  /** Uniform number in [0, 1) for the jitter. */
  readonly random?: () => number;
}

type Signal = Parameters<Transformer>[3];

function sleep(ms: number, signal: Signal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error("polling stopped"));
    const onAbort = () => {
      clearTimeout(timer);
      reject(new Error("polling stopped"));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Build the transformer (install with `bot.api.config.use(...)`, above pollConflicts). */
export function pollOutages(opts: PollOutageOptions): Transformer {
  const now = opts.now ?? Date.now;
  const random = opts.random ?? Math.random;
  return async (prev, method, payload, signal) => {
    if (method !== "getUpdates") return prev(method, payload, signal);
    for (;;) {
      let thrown: unknown = null;
      try {
        const res = await prev(method, payload, signal);
        if (res.ok || (res.error_code < 500 && res.error_code !== 429)) {
          if (res.ok) {
            const ended = opts.tracker.succeeded(now());
            if (ended) opts.log.info({ attempts: ended.attempts, ms: ended.ms }, `long polling reached the Bot API again after ${ended.attempts} failed attempts (${Math.round(ended.ms / 1000)} s)`);
          }
          return res;
        }
        thrown = new GrammyError(`Call to 'getUpdates' failed!`, res, method, payload);
      } catch (err) {
        if (signal?.aborted || !(err instanceof HttpError)) throw err;
        thrown = err;
      }
      const f = classifyAttempt(thrown, 30_000);
      if (!f.retry) throw thrown;
      const delay = backoffMs(opts.tracker.attempts + 1, { capMs: opts.capMs }, random(), f.retryAfterMs);
      const decision = opts.tracker.failed(f, now());
      const fields = { method, kind: f.kind, cause: f.cause, attempt: opts.tracker.attempts, retry_in_ms: delay };
      if (decision === "new-kind") opts.log.warn(fields, `long polling cannot reach the Bot API (${f.cause}); retrying with backoff up to ${Math.round(opts.capMs / 1000)} s`);
      else if (decision === "reminder") {
        const min = Math.round((now() - (opts.tracker.since ?? now())) / 60_000);
        opts.log.warn(fields, `long polling still cannot reach the Bot API after ${min} min (${opts.tracker.attempts} attempts; ${f.cause})`);
      }
      await sleep(delay, signal);
    }
  };
}
