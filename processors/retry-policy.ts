/**
 * Which processor failures are worth another try (seed 000: "Счётчик attempts нужен, чтобы
 * упрямая задача не крутилась вечно" — a stubborn job must not spin forever). Used by the
 * worker's failure classification (bot/worker/process-step.ts `classify`).
 *
 * Audit of issue 5, gap 4: a file that fails the same way on every try (same bytes, same
 * limits) is final at once; only what load can explain is retried.
 */
import type { ProcessingError } from "./types.ts";

/** Tries a wall-clock timeout may use in all: the first, and one retry (load may explain one). */
export const TIMEOUT_TRIES = 2;

/**
 * Whether a refusal from the processor child should be retried.
 * - `too_much_memory` (killed over the memory cap): never — the same file needs the same memory
 *   on every try; `processing_crashed` (died, threw): yes (may be a one-off fault);
 * - `processing_timeout` naming a `page` (a page over its budget): never; the wall clock
 *   (no `page`): only while `attempts < TIMEOUT_TRIES`, i.e. retried at most once;
 * - every other reason (content, limits, encryption): never.
 * @param err the processor's refusal (processors/pool/pool.ts `ProcessorPool.run`)
 * @param attempts tries made so far, this one included (the job's `attempts` after the claim)
 */
export function isRetryableProcessingFailure(err: ProcessingError, attempts: number): boolean {
  if (err.reason === "processing_crashed") return true;
  if (err.reason === "processing_timeout") return !("page" in err.params) && attempts < TIMEOUT_TRIES;
  return false;
}
