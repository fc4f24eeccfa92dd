/**
 * Time budget for one step inside a processor (e.g. one PDF page), in **CPU time** of the
 * processor's process, ms. The whole attempt is also bounded from outside by the pool's wall
 * clock (PROCESS_TIMEOUT).
 *
 * Why CPU time, not wall time: a page over its budget is a final refusal (processors/retry-policy.ts,
 * docs/architecture.md: "the same page with the same budget fails again"). That holds only when the
 * budget measures what the page costs. On a starved machine (load 8–17 on 2 cores in the merge
 * queue; on a VPS, Tesseract and the other pool children beside it) a page that needs 0.3 s of CPU
 * took over 1 s of wall time, and a light page was refused for good. The CPU time a page costs does
 * not grow with the machine's load; time spent waiting for a core does not count, and the pool's
 * wall clock (retried) still bounds a starved or hung attempt.
 */
import { ProcessingError } from "./types.ts";

/** Marker returned by {@link withBudget} when the budget ran out first. */
export const OVER_BUDGET: unique symbol = Symbol("over budget");

/**
 * How often the spent CPU time is read while a step runs, ms of wall time (at most; less when the
 * budget left is smaller). A read is one getrusage call. A step overruns its budget by at most
 * this much CPU time per busy thread, plus whatever the step does before the timer can run
 * (render.ts yields between pdf.js's ~15 ms slices).
 */
export const BUDGET_CHECK_MS = 20;

/**
 * CPU time of this process so far (user + system, every thread: the main thread, the pdf.js
 * worker thread, the engine's helper threads), ms. Node/Bun `process.cpuUsage()` (getrusage
 * RUSAGE_SELF). A processor child runs one job at a time, so all of it is the job's work; tools it
 * spawns (Tesseract) are other processes and are not counted.
 */
export function processCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/**
 * The budget's one decision (pure): given the CPU time spent since the step started, is it over,
 * or when to look again.
 * @param spentMs CPU time spent by the step so far, ms
 * @param budgetMs the step's budget, ms (> 0)
 * @returns `over`, or the wall-clock delay before the next look, ms (1 … {@link BUDGET_CHECK_MS}):
 *   CPU time cannot pass faster than wall time on one thread, so looking after what is left
 *   (capped) never lets a one-thread step run far past its budget
 */
export function budgetDecision(spentMs: number, budgetMs: number): "over" | number {
  const left = budgetMs - spentMs;
  if (left <= 0) return "over";
  return Math.max(1, Math.min(BUDGET_CHECK_MS, Math.ceil(left)));
}

/**
 * Race a promise against a budget of CPU time (module comment).
 * @param work the step
 * @param ms budget in milliseconds of CPU time (≤ 0 or non-finite disables it)
 * @param cpuMs the CPU clock, ms (default {@link processCpuMs}; tests pass a fake one)
 * @returns the step's value, or {@link OVER_BUDGET} when `ms` of CPU time were spent first (the
 *   step keeps running; the caller cancels it if it can)
 */
export async function withBudget<T>(work: Promise<T>, ms: number, cpuMs: () => number = processCpuMs): Promise<T | typeof OVER_BUDGET> {
  if (!Number.isFinite(ms) || ms <= 0) return work;
  const start = cpuMs();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<typeof OVER_BUDGET>((resolve) => {
    const look = (): void => {
      const next = budgetDecision(cpuMs() - start, ms);
      if (next === "over") resolve(OVER_BUDGET);
      else timer = setTimeout(look, next);
    };
    timer = setTimeout(look, budgetDecision(0, ms) as number);
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
 * @param budgetMs the per-page budget, ms of CPU time (the chat message shows whole seconds, rounded up)
 */
export function pageOverBudget(step: string, page: number, budgetMs: number): ProcessingError {
  return new ProcessingError("processing_timeout", { seconds: Math.ceil(budgetMs / 1000), page }, `${step} of page ${page} took over ${budgetMs} ms of CPU time`);
}
