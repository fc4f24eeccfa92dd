/**
 * The I/O shell of {@link OutageTracker}: call the Bot API until it answers (issue 9 item 2). Used at
 * start-up for getMe and setWebhook: a Bot API that is not reachable yet (network not up, a Telegram
 * outage, a local server still starting) is waited out with capped backoff, never ended in an exit
 * that systemd would count towards giving up on the unit. A refused token (401) or a root that is no
 * Bot API server (404) ends the wait at once: restarting cannot fix them (CONTRACTS.md §3).
 */
import type { Logger } from "../log.ts";
import { backoffMs, classifyAttempt, type AttemptKind, type FatalFailure, type OutageTracker } from "./outage.ts";

/** What {@link untilReached} ended with. */
export type Reached<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly fatal: FatalFailure }
  | { readonly ok: false; readonly aborted: true };

/** Options of {@link untilReached}. */
export interface ReachOptions {
  /** Bot API method, for the journal (`getMe`, `setWebhook`). */
  readonly method: string;
  readonly log: Logger;
  /** The outage state (shared with /readyz, which shows the last cause while start-up waits). */
  readonly tracker: OutageTracker;
  /** Longest wait between attempts, ms (STARTUP_RETRY_MAX). */
  readonly capMs: number;
  /** Deadline of one attempt, ms (default 10 000). */
  readonly attemptTimeoutMs?: number;
  /** Aborting (SIGTERM during start-up) ends the wait at once with `aborted`. */
  readonly signal: AbortSignal;
  /** Error codes that end the wait (default 401 and 404; setWebhook adds 400: a bad URL stays bad). */
  readonly fatalCodes?: readonly number[];
  /** Clock, epoch ms (tests inject one). */
  readonly now?: () => number;
  /** Uniform number in [0, 1) for the jitter. */
  readonly random?: () => number;
}

/** What the operator can check for each kind of failure (the journal line names it). */
const HINT: Record<AttemptKind, string> = {
  refused: "nothing listens there yet: is the server up? (local mode: systemctl status docket-bot-api, docker-compose ps)",
  dns: "the host name does not resolve: is the network (DNS) up?",
  timeout: "is the network up and the server not overloaded?",
  network: "a network error between this host and BOT_API_ROOT",
  http: "something answers at BOT_API_ROOT, but not a Bot API server (a proxy's error page?)",
  api: "the Bot API answered an error; it may pass",
};

/** Sleep `ms`, resolving early (false) when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const done = () => {
      clearTimeout(timer);
      resolve(!signal.aborted);
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * Call `attempt` until it resolves, waiting capped exponential backoff between failed attempts.
 * The journal gets one warning per kind of failure (and a reminder every 10 min while it lasts),
 * one info line when the Bot API answers again; each line names the cause, never the token.
 * @param attempt one Bot API call; gets a signal that ends at the attempt's deadline or on abort
 * @returns the value, the fatal failure (401/404/fatalCodes: the caller logs it and exits 78), or aborted
 */
export async function untilReached<T>(attempt: (signal: AbortSignal) => Promise<T>, opts: ReachOptions): Promise<Reached<T>> {
  const { log, tracker, method } = opts;
  const now = opts.now ?? Date.now;
  const random = opts.random ?? Math.random;
  const timeoutMs = opts.attemptTimeoutMs ?? 10_000;
  const fatalCodes = opts.fatalCodes ?? [401, 404];
  for (;;) {
    if (opts.signal.aborted) return { ok: false, aborted: true };
    try {
      const value = await attempt(AbortSignal.any([opts.signal, AbortSignal.timeout(timeoutMs)]));
      const ended = tracker.succeeded(now());
      if (ended) log.info({ method, attempts: ended.attempts, ms: ended.ms }, `reached the Bot API after ${ended.attempts} failed attempts (${Math.round(ended.ms / 1000)} s)`);
      return { ok: true, value };
    } catch (err) {
      if (opts.signal.aborted) return { ok: false, aborted: true };
      const f = classifyAttempt(err, timeoutMs);
      const code = (err as { error_code?: unknown }).error_code;
      if (!f.retry) return { ok: false, fatal: f };
      if (typeof code === "number" && fatalCodes.includes(code)) {
        return { ok: false, fatal: { retry: false, errorCode: code, description: (err as { description?: string }).description ?? f.cause } };
      }
      const delay = backoffMs(tracker.attempts + 1, { capMs: opts.capMs }, random(), f.retryAfterMs);
      const decision = tracker.failed(f, now());
      const fields = { method, kind: f.kind, cause: f.cause, attempt: tracker.attempts, retry_in_ms: delay };
      if (decision === "new-kind") {
        log.warn(fields, `cannot reach the Bot API at BOT_API_ROOT (${f.cause}): ${HINT[f.kind]}; retrying with backoff up to ${Math.round(opts.capMs / 1000)} s`);
      } else if (decision === "reminder") {
        const min = Math.round((now() - (tracker.since ?? now())) / 60_000);
        log.warn(fields, `still cannot reach the Bot API after ${min} min (${tracker.attempts} attempts; ${f.cause}); still retrying`);
      } else log.debug(fields, "Bot API attempt failed");
      if (!(await pause(delay, opts.signal))) return { ok: false, aborted: true };
    }
  }
}
