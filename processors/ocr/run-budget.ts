/**
 * The time budget of one Tesseract run (OCR_PAGE_BUDGET), in **CPU time** of the Tesseract process
 * (and the `sh` guard around it: processors/proc-cpu.ts), with a wall-clock backstop for a hung tool.
 * The same reason as the PDF page budget (processors/budget.ts): a page over its budget is skipped,
 * and what it costs must not depend on the machine's load: with other pool children and Tesseracts
 * sharing the cores, a page's wall time grows with the load, so a wall-clock budget skipped pages that
 * fit it on an idle machine.
 * Tesseract is another process, so the processor child's own `process.cpuUsage()` does not see it.
 *
 * The pure decision ({@link runBudgetDecision}: CPU and wall time spent in, one verdict out) is tested
 * with a fake clock; processors/ocr/tesseract.ts reads `/proc` and the clock and acts on it.
 */

/** How often a run's CPU time is read, ms of wall time at most (a read is a few small `/proc` files). */
export const RUN_CHECK_MS = 100;

/**
 * The wall-clock backstop, as a multiple of the page budget: a run still going after this much wall
 * time is stopped as hung whatever its CPU time (a tool stopped, blocked or deadlocked uses none). 10×
 * leaves room for a starved machine (load 8–17 on 2 cores in the merge queue is 4–8 runnable tasks
 * per core) and, at the default 60 s budget, holds a slot 10 minutes at most (OCR_TIMEOUT bounds the file).
 */
export const WALL_BACKSTOP_FACTOR = 10;

/**
 * The backstop's floor, ms of wall time: a small budget (a test's 50 ms) must not call a Tesseract hung
 * that is only starting on a loaded machine (exec and loading its language data took over 0.5 s of wall
 * time at load 10 with under 50 ms of CPU). A hung tool does not need catching within seconds.
 */
export const WALL_BACKSTOP_MIN_MS = 60_000;

/** The wall-clock backstop for a page budget of `budgetMs`: {@link WALL_BACKSTOP_FACTOR} × it, at least {@link WALL_BACKSTOP_MIN_MS}, ms. */
export function wallBackstopMs(budgetMs: number): number {
  return Math.max(WALL_BACKSTOP_FACTOR * budgetMs, WALL_BACKSTOP_MIN_MS);
}

/** What to do about a running run: stop it over its CPU budget, stop it as hung, or look again after `afterMs`. */
export type RunVerdict = { readonly kind: "over_budget" } | { readonly kind: "hung" } | { readonly kind: "look"; readonly afterMs: number };

/**
 * The run budget's one decision (pure).
 * @param cpuMs CPU time the run has used so far, ms; null when it cannot be read (no `/proc`): then
 *   wall time stands in for it, as before CPU time was counted
 * @param wallMs wall time since the run started, ms
 * @param budgetMs the page budget, ms of CPU time (> 0)
 * @param backstopMs the wall-clock backstop, ms (default {@link wallBackstopMs} of the budget)
 * @returns `over_budget` once the CPU time reaches the budget; `hung` once the wall time reaches the
 *   backstop; else when to look again (1 … {@link RUN_CHECK_MS} ms, never past what is left of either:
 *   one thread's CPU time cannot pass faster than wall time, Tesseract runs on one, OMP_THREAD_LIMIT=1)
 */
export function runBudgetDecision(cpuMs: number | null, wallMs: number, budgetMs: number, backstopMs = wallBackstopMs(budgetMs)): RunVerdict {
  const spent = cpuMs ?? wallMs;
  if (spent >= budgetMs) return { kind: "over_budget" };
  if (wallMs >= backstopMs) return { kind: "hung" };
  return { kind: "look", afterMs: Math.max(1, Math.min(RUN_CHECK_MS, Math.ceil(budgetMs - spent), Math.ceil(backstopMs - wallMs))) };
}
