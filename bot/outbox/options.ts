/**
 * Outbox configuration: one frozen object per runtime.
 *
 * Source: seed 002 "Options — все ручки сразу" (defaults copied, seconds turned into ms),
 * plus docket additions (shared send/edit budget, group pace, bot-wide limit, drafts).
 * Every duration here is in milliseconds of the monotonic clock (`performance.now()`).
 */

/** All knobs of the outbox. Build with {@link makeOptions}; the result is frozen. */
export interface Options {
  /** Minimum pause between two sendMessage calls in one chat, ms (seed: send_interval 1.0 s). */
  readonly sendIntervalMs: number;
  /** Minimum pause between two editMessageText calls in one chat, ms (seed: edit_interval 1.0 s). */
  readonly editIntervalMs: number;
  /** Minimum pause between two deleteMessage calls in one chat, ms (seed: delete_interval 1.0 s). */
  readonly deleteIntervalMs: number;
  /** Minimum pause between two sendChatAction("typing") calls in one chat, ms (seed: action_interval 5.0 s). */
  readonly actionIntervalMs: number;
  /**
   * Minimum pause between any two sends *or edits* in one chat, ms (docket addition, default 1000).
   * The seed keeps send and edit independent, but Telegram counts them against one budget
   * (botapi-facts §3: tdlib/td#2592, #3034; the emulator's per-chat bucket too). With the seed's
   * independent kinds a streaming chat could do one send + one edit per second, i.e. 2 msg/s,
   * which drains a "burst 3, refill 1/s" bucket within seconds. Set 0 for the seed's behaviour.
   */
  readonly messageIntervalMs: number;
  /**
   * Minimum pause between sends/edits in a group or channel (chat id < 0), ms (default 3000):
   * Telegram FAQ "≤ 20 messages per minute in a group" (botapi-facts §3).
   */
  readonly groupMessageIntervalMs: number;
  /** Minimum pause between two sendMessageDraft calls in one chat, ms (limits UNCONFIRMED; default 1000). Drafts do not spend the send/edit budget. */
  readonly draftIntervalMs: number;
  /** Bot-wide cap on sends + edits + drafts across all chats of one bot, per second (FAQ "~30/s"; default 28 keeps a margin for latency jitter). 0 disables. */
  readonly globalPerSecond: number;
  /** First backoff step after a transient failure, ms (seed: backoff_base 1.0 s). Doubles per attempt. */
  readonly backoffBaseMs: number;
  /** Backoff ceiling, ms (seed: backoff_max 30.0 s). */
  readonly backoffMaxMs: number;
  /** Relative jitter, ±fraction of the backoff (seed: backoff_jitter 0.2). */
  readonly backoffJitter: number;
  /** Transient failures of one message before its stream is killed (seed: max_attempts 5). 429 never counts. */
  readonly maxAttempts: number;
  /** How long a settled stream stays in memory so its outcome can still be asked, ms (seed: stream_ttl 5.0 s). */
  readonly streamTtlMs: number;
  /** How long a chat machine with no streams waits before it is evicted, ms (seed: machine_ttl 30.0 s). */
  readonly machineTtlMs: number;
  /** Show "typing…" while a typing stream is still being written (seed: typing_enabled). */
  readonly typingEnabled: boolean;
  /** finish() throws StreamFailedError on a failed stream; otherwise it returns the delivered ids (seed: raise_on_failure). */
  readonly raiseOnFailure: boolean;
  /**
   * Bound of one Bot API call, ms (docket addition, default 30 s; issue 11 item 7): a request with
   * no answer by then is aborted and counts as a transient failure (backoff, then again), so one
   * stalled HTTP call cannot freeze a chat for grammY's 500 s client timeout. A post may set its own
   * (an upload's time grows with its size).
   */
  readonly callTimeoutMs: number;
  /** How long Outbox.close() waits for workers to deliver before cancelling them, ms (seed: shutdown_timeout; default 10 s). */
  readonly shutdownTimeoutMs: number;
  /** Capacity of the per-chat timings LRU that outlives machine eviction (seed: timings_capacity 1024). */
  readonly timingsCapacity: number;
  /**
   * Stream text with sendMessageDraft in private chats (botapi-facts §6), then persist it with a
   * real sendMessage; edits everywhere else. Default false; a stream can override it.
   */
  readonly draftsEnabled: boolean;
}

/** The defaults of {@link Options} (seed 002 values, converted to ms). */
export const DEFAULT_OPTIONS: Options = Object.freeze({
  sendIntervalMs: 1000,
  editIntervalMs: 1000,
  deleteIntervalMs: 1000,
  actionIntervalMs: 5000,
  messageIntervalMs: 1000,
  groupMessageIntervalMs: 3000,
  draftIntervalMs: 1000,
  globalPerSecond: 28,
  backoffBaseMs: 1000,
  backoffMaxMs: 30_000,
  backoffJitter: 0.2,
  maxAttempts: 5,
  streamTtlMs: 5000,
  machineTtlMs: 30_000,
  typingEnabled: true,
  raiseOnFailure: true,
  callTimeoutMs: 30_000,
  shutdownTimeoutMs: 10_000,
  timingsCapacity: 1024,
  draftsEnabled: false,
});

/**
 * Merge overrides into the defaults and freeze the result.
 * @throws RangeError when a duration or count is negative / not finite, or maxAttempts < 1.
 */
export function makeOptions(overrides: Partial<Options> = {}): Options {
  const o: Options = { ...DEFAULT_OPTIONS, ...overrides };
  for (const [k, v] of Object.entries(o)) {
    if (typeof v === "number" && (!Number.isFinite(v) || v < 0)) {
      throw new RangeError(`outbox option ${k} must be a finite number ≥ 0, got ${v}`);
    }
  }
  if (o.maxAttempts < 1) throw new RangeError("outbox option maxAttempts must be ≥ 1");
  if (o.timingsCapacity < 1) throw new RangeError("outbox option timingsCapacity must be ≥ 1");
  if (o.backoffJitter >= 1) throw new RangeError("outbox option backoffJitter must be < 1");
  if (o.callTimeoutMs < 1) throw new RangeError("outbox option callTimeoutMs must be ≥ 1");
  return Object.freeze(o);
}
