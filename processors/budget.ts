/**
 * Time budget for one step inside a processor (e.g. one PDF page), ms.
 * The whole attempt is also bounded from outside by runIsolated's wall clock.
 */

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
