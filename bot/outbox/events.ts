/**
 * Events the outbox reports to an optional synchronous sink.
 *
 * Source: seed 002 "События": MessageFailed, StreamFailed, ChatHold; the sink is called from
 * the worker, so it may bump metrics but should not do I/O; its exceptions are caught and logged.
 */

/** One slot died (MESSAGE_DEAD); the stream lives on and will end "partial". */
export interface MessageFailed {
  readonly type: "MessageFailed";
  readonly chatId: number;
  readonly streamId: number;
  readonly index: number;
  /** The message concerned, when it had been sent. */
  readonly messageId: number | null;
  readonly reason: string;
  readonly error: unknown;
}

/** A stream was killed (STREAM_DEAD, max attempts, worker crash/cancel, shutdown). */
export interface StreamFailed {
  readonly type: "StreamFailed";
  readonly chatId: number;
  readonly streamId: number;
  readonly reason: string;
  readonly error: unknown;
}

/** The chat is on hold after a 429 (no call to it until `untilMs`). */
export interface ChatHold {
  readonly type: "ChatHold";
  readonly chatId: number;
  /** Bot API parameters.retry_after, converted to ms. */
  readonly retryAfterMs: number;
  /** Monotonic ms (performance.now() timeline) when the hold ends. */
  readonly untilMs: number;
  /** True when the chat was not on hold before (a new hold, not one extended): count these. */
  readonly fresh: boolean;
}

/** Anything the sink can receive. */
export type OutboxEvent = MessageFailed | StreamFailed | ChatHold;

/** Synchronous event consumer. Exceptions it throws are caught and logged, never propagated. */
export type EventSink = (event: OutboxEvent) => void;

/** The logging surface the outbox needs (pino-compatible: object first, then message). */
export interface OutboxLogger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Default logger: one JSON line on stderr per message. */
export const consoleLogger: OutboxLogger = {
  warn: (obj, msg) => console.warn(JSON.stringify({ level: "warn", msg, ...errorFields(obj) })),
  error: (obj, msg) => console.error(JSON.stringify({ level: "error", msg, ...errorFields(obj) })),
};

function errorFields(obj: object): object {
  const o = obj as Record<string, unknown>;
  const err = o.err;
  return err instanceof Error ? { ...o, err: { name: err.name, message: err.message } } : o;
}

/**
 * Log at error level, swallowing the logger's own exceptions: the worker's crash and shutdown
 * paths must still answer every finish() waiter when logging is broken too (audit-002 LOW 12).
 */
export function safeError(log: OutboxLogger, obj: object, msg: string): void {
  try {
    log.error(obj, msg);
  } catch {
    // nowhere left to report it; delivery goes on
  }
}

/**
 * Deliver events to the sink, catching and logging its exceptions (seed: "ваша сломанная телеметрия
 * не уронит доставку"). Never throws, even when the logger throws as well.
 */
export function deliverEvents(events: readonly OutboxEvent[], sink: EventSink | undefined, log: OutboxLogger): void {
  if (!sink) return;
  for (const e of events) {
    try {
      sink(e);
    } catch (err) {
      safeError(log, { err, event: e.type }, "outbox event sink threw");
    }
  }
}
