/**
 * What to do after a failed try (seed 000: "Счётчик attempts нужен, чтобы упрямая
 * задача не крутилась вечно"): retry later with backoff, or end `failed`.
 */
import type { ReasonCode } from "./reasons.ts";

/** A classified failure of one try. */
export interface TryFailure {
  readonly reason: ReasonCode;
  /** Whether another try could succeed (network, expired link, timeout) or not (content, limits). */
  readonly retryable: boolean;
  /** Values for the localized chat message. */
  readonly params?: Readonly<Record<string, string | number>>;
  /** Operator detail (English, already redacted). */
  readonly detail: string;
}

/** The decision after a failure. */
export type FailureDecision =
  | { readonly kind: "retry"; readonly notBefore: number }
  | { readonly kind: "fail"; readonly reason: ReasonCode; readonly params: Readonly<Record<string, string | number>> };

/** Backoff before try `attempt + 1`: 1 s, 2 s, 4 s … capped at 60 s (ms). */
export function backoffMs(attempt: number): number {
  return Math.min(60_000, 1000 * 2 ** Math.max(0, attempt - 1));
}

/**
 * Decide after a failed try.
 * @param attempts tries made so far, this one included
 * @param maxAttempts configured maximum (MAX_ATTEMPTS)
 * @param now epoch ms
 */
export function decideAfterFailure(failure: TryFailure, attempts: number, maxAttempts: number, now: number): FailureDecision {
  if (failure.retryable && attempts < maxAttempts) {
    return { kind: "retry", notBefore: now + backoffMs(attempts) };
  }
  return { kind: "fail", reason: failure.reason, params: failure.params ?? {} };
}
