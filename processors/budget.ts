/**
 * Time budget for one step inside a processor (e.g. one PDF page), ms.
 * The whole attempt is also bounded from outside by the pool's wall clock.
 */
import { ProcessingError } from "./types.ts";

/** Marker returned by {@link withBudget} when the budget ran out first. */
export const OVER_BUDGET: unique symbol = Symbol("over budget");

/**
 * Race a promise against a budget.
 * @param work the step
 * @param ms budget in milliseconds (≤ 0 or non-finite disables it)
 * @returns the step's value, or {@link OVER_BUDGET} when `ms` passed first (the step keeps
 *   running; the caller cancels it if it can)
 */
export async function withBudget<T>(work: Promise<T>, ms: number): Promise<T | typeof OVER_BUDGET> {
  if (!Number.isFinite(ms) || ms <= 0) return work;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<typeof OVER_BUDGET>((resolve) => {
    timer = setTimeout(() => resolve(OVER_BUDGET), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The refusal for one page over its budget: `processing_timeout` with {seconds, page}. The `page`
 * param marks it final (processors/retry-policy.ts never retries it; the wall clock has none).
 * @param step what overran, for the operator detail (`text`, `render`)
 * @param page 1-based page number
 * @param budgetMs the per-page budget, ms (the chat message shows whole seconds, rounded up)
 */
export function pageOverBudget(step: string, page: number, budgetMs: number): ProcessingError {
  return new ProcessingError("processing_timeout", { seconds: Math.ceil(budgetMs / 1000), page }, `${step} of page ${page} took over ${budgetMs} ms`);
}
