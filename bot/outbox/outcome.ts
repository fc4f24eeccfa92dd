/**
 * Stream outcomes and the error finish() throws.
 *
 * Source: seed 002 "Итог: три статуса": ok / partial / failed; StreamFailedError carries the
 * ids already delivered.
 */
import type { StreamState } from "./stream-state.ts";

/** ok = delivered; partial = some messages died but the stream finished; failed = killed. */
export type OutcomeStatus = "ok" | "partial" | "failed";

/** A settled stream's result, snapshotted when it settled (so a TTL sweep cannot lose it). */
export interface Outcome {
  readonly status: OutcomeStatus;
  /** message_ids the chat shows for this stream, in slot order. */
  readonly messageIds: readonly number[];
  /** Why it failed (failed only). */
  readonly reason?: string | undefined;
  /** The error behind the failure, when there was one. */
  readonly error?: unknown;
}

/** Snapshot a stream's outcome. */
export function outcomeOf(s: StreamState): Outcome {
  const messageIds = Object.freeze(s.deliveredIds());
  if (s.status === "failed") return Object.freeze({ status: "failed", messageIds, reason: s.failure?.reason, error: s.failure?.error });
  return Object.freeze({ status: s.partial ? "partial" : "ok", messageIds });
}

/** Thrown by finish() for a failed stream when raiseOnFailure is on. `cause` is the underlying error. */
export class StreamFailedError extends Error {
  override readonly name = "StreamFailedError";
  /** Ids delivered before the stream died. */
  readonly messageIds: readonly number[];
  readonly reason: string;

  constructor(
    readonly streamId: number,
    readonly chatId: number,
    outcome: Outcome,
  ) {
    super(`outbox stream ${streamId} in chat ${chatId} failed: ${outcome.reason ?? "unknown"}`, { cause: outcome.error });
    this.messageIds = outcome.messageIds;
    this.reason = outcome.reason ?? "unknown";
  }
}
