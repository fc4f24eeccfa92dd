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

/**
 * Whether a just-claimed job has used up its tries without any of them ending: every
 * earlier try died (crash, SIGKILL, lost lease) before it could be classified. The claim
 * already counted this try, so `attempts > maxAttempts` means `maxAttempts` tries started
 * and none finished (seed 000: "упрямая задача не крутилась вечно" — a stubborn job must
 * not spin forever; it ends `failed` with `attempts_exhausted`).
 * @param attempts the job's `attempts` after the claim (this try included)
 * @param maxAttempts configured maximum (MAX_ATTEMPTS)
 */
export function exhaustedAtClaim(attempts: number, maxAttempts: number): boolean {
  return attempts > maxAttempts;
}
