/**
 * The pure core of "the Bot API does not answer" (issue 9 item 2): what kind of failure an
 * attempt met, how long to wait before the next one (capped exponential backoff with jitter),
 * and whether the journal hears about it. No I/O and no clock of its own: time comes in, one
 * decision goes out (seed 002's split), so it is tested with a fake clock.
 *
 * Journal rule: one line per attempt kind — the first failure, and each time the kind changes
 * (ECONNREFUSED → timeout → HTTP 502 …) — plus a reminder while the same kind lasts, never one
 * line per attempt.
 */
import { GrammyError, HttpError } from "grammy";

/** How an attempt to reach the Bot API failed. */
export type AttemptKind =
  /** Nothing listens at BOT_API_ROOT (ECONNREFUSED): the server is not up (yet). */
  | "refused"
  /** The host name does not resolve (ENOTFOUND, EAI_AGAIN): no network or DNS yet. */
  | "dns"
  /** No answer within the attempt's deadline. */
  | "timeout"
  /** Another network error (connection reset, TLS, unreachable network). */
  | "network"
  /** An HTTP answer that is not the Bot API's (a proxy's 502 page, a non-JSON body). */
  | "http"
  /** A Bot API error envelope a later attempt may not get (429, 500 "restart", 400 "Logged out"). */
  | "api";

/** A failed attempt that is worth retrying. */
export interface RetryableFailure {
  readonly retry: true;
  readonly kind: AttemptKind;
  /** Operator-readable cause, one line, no stack and no token: `ECONNREFUSED: Unable to connect…`. */
  readonly cause: string;
  /** Bot API `parameters.retry_after` of a 429, ms (the next attempt waits at least this). */
  readonly retryAfterMs?: number;
}

/**
 * A failed attempt a restart cannot fix (CONTRACTS.md §3): 401 = the token was refused (revoked or
 * wrong), 404 = BOT_API_ROOT does not point at a Bot API server (telegram-bot-api answers 404 for any
 * path not starting with `/bot`; botapi-facts.md §1).
 */
export interface FatalFailure {
  readonly retry: false;
  /** 401 or 404 (or a code the caller named fatal, e.g. setWebhook's 400). */
  readonly errorCode: number;
  /** The Bot API's description (`Unauthorized`, `Not Found`). */
  readonly description: string;
}

/** What {@link classifyAttempt} decided. */
export type AttemptFailure = RetryableFailure | FatalFailure;

/**
 * Thrown by the operator Api's fetch for an HTTP answer that is not JSON (a proxy's error page):
 * grammY would only say "JSON Parse error", this keeps the status for the journal.
 */
export class NotBotApiAnswer extends Error {
  /**
   * @param status HTTP status of the answer
   * @param statusText its reason phrase
   */
  constructor(
    readonly status: number,
    readonly statusText: string,
  ) {
    super(`HTTP ${status}${statusText ? ` ${statusText}` : ""} with a non-JSON body (not a Bot API answer: a proxy or another server)`);
    this.name = "NotBotApiAnswer";
  }
}

/** The network error's code and message without a stack: `ECONNREFUSED: Unable to connect…`. */
export function networkCause(err: unknown): string {
  const inner = (err instanceof HttpError ? err.error : err) as { code?: unknown; message?: unknown; name?: unknown } | undefined;
  const code = typeof inner?.code === "string" ? inner.code : "";
  const message = typeof inner?.message === "string" ? inner.message : "";
  if (!message) return code || String(err);
  return code && !message.startsWith(code) ? `${code}: ${message}` : message;
}

/**
 * Classify what a Bot API call threw (grammY: `GrammyError` for an error envelope, `HttpError`
 * wrapping the network error otherwise).
 * @param err the thrown value
 * @param timeoutMs the attempt's deadline, ms (named in the timeout cause)
 */
export function classifyAttempt(err: unknown, timeoutMs: number): AttemptFailure {
  if (err instanceof GrammyError) {
    if (err.error_code === 401 || err.error_code === 404) return { retry: false, errorCode: err.error_code, description: err.description };
    const retryAfter = err.parameters?.retry_after;
    return {
      retry: true,
      kind: "api",
      cause: `HTTP ${err.error_code} ${err.description}`,
      ...(typeof retryAfter === "number" ? { retryAfterMs: retryAfter * 1000 } : {}),
    };
  }
  const inner = err instanceof HttpError ? err.error : err;
  if (inner instanceof NotBotApiAnswer) return { retry: true, kind: "http", cause: inner.message };
  const e = inner as { name?: unknown; code?: unknown } | undefined;
  if (e?.name === "TimeoutError" || e?.name === "AbortError") {
    return { retry: true, kind: "timeout", cause: `no answer within ${Math.round(timeoutMs / 1000)} s` };
  }
  if (e?.name === "SyntaxError") return { retry: true, kind: "http", cause: `a non-JSON answer (not a Bot API server): ${networkCause(err)}` };
  const code = typeof e?.code === "string" ? e.code : "";
  const kind: AttemptKind = code === "ECONNREFUSED" ? "refused" : code === "ENOTFOUND" || code === "EAI_AGAIN" ? "dns" : "network";
  return { retry: true, kind, cause: networkCause(err) };
}

/** Backoff settings of {@link backoffMs}, ms. */
export interface BackoffOptions {
  /** Wait before the second attempt (default 1000). */
  readonly baseMs?: number;
  /** Longest wait between attempts (STARTUP_RETRY_MAX). */
  readonly capMs: number;
}

/**
 * Wait before attempt `attempt + 1`: base · 2^(attempt−1), at most the cap, then jittered down by up
 * to half (so restarted bots do not retry in step), and never below a 429's retry_after.
 * @param attempt attempts made so far (≥ 1)
 * @param random uniform number in [0, 1)
 */
export function backoffMs(attempt: number, opts: BackoffOptions, random: number, retryAfterMs = 0): number {
  const base = opts.baseMs ?? 1000;
  const full = Math.min(opts.capMs, base * 2 ** Math.min(30, Math.max(0, attempt - 1)));
  return Math.max(retryAfterMs, Math.round(full * (1 - random / 2)));
}

/** What the journal gets for one failed attempt. */
export type OutageLogDecision =
  /** A new kind of failure (or the first one): one warning line naming the cause. */
  | "new-kind"
  /** The same kind for `remindEveryMs` since the last line: one reminder line. */
  | "reminder"
  /** Same kind as the last line, too soon for a reminder: stay quiet. */
  | "quiet";

/** The journal state of one outage, updated by {@link OutageTracker.failed}. */
export class OutageTracker {
  /** Epoch ms of the first failure of this outage, or null when the last attempt succeeded. */
  since: number | null = null;
  /** Failed attempts in this outage. */
  attempts = 0;
  /** The last failure, for /readyz and `docket status`. */
  last: RetryableFailure | null = null;
  private loggedKind: AttemptKind | null = null;
  private loggedAt = 0;

  /** @param remindEveryMs how long the same kind stays quiet before a reminder line, ms (default 10 min) */
  constructor(readonly remindEveryMs = 600_000) {}

  /** Record a failed attempt at `now` (epoch ms) and decide what the journal hears. */
  failed(f: RetryableFailure, now: number): OutageLogDecision {
    this.since ??= now;
    this.attempts++;
    this.last = f;
    if (f.kind !== this.loggedKind) {
      this.loggedKind = f.kind;
      this.loggedAt = now;
      return "new-kind";
    }
    if (now - this.loggedAt >= this.remindEveryMs) {
      this.loggedAt = now;
      return "reminder";
    }
    return "quiet";
  }

  /**
   * Record a success; returns how the outage ended (null when there was none), and resets the state
   * so the next failure is a new outage with its own first line.
   */
  succeeded(now: number): { readonly attempts: number; readonly ms: number } | null {
    if (this.since === null) return null;
    const ended = { attempts: this.attempts, ms: now - this.since };
    this.since = null;
    this.attempts = 0;
    this.last = null;
    this.loggedKind = null;
    return ended;
  }
}
