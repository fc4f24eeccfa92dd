/**
 * The per-step budget (processors/budget.ts) counts CPU time, not wall time: a step is stopped
 * when the process has spent its budget working, never because the machine kept it waiting for a
 * core. The decision is pure (tested as such); `withBudget` is tested with a fake CPU clock, and
 * with the real one on a thread that really spins.
 */
import { describe, expect, test } from "vitest";
import { BUDGET_CHECK_MS, OVER_BUDGET, budgetDecision, processCpuMs, withBudget } from "../../processors/budget.ts";

describe("budgetDecision (pure)", () => {
  test("over once the CPU time spent reaches the budget; otherwise look again after what is left, at most BUDGET_CHECK_MS", () => {
    expect(budgetDecision(0, 1000)).toBe(BUDGET_CHECK_MS);
    expect(budgetDecision(990, 1000)).toBe(10);
    expect(budgetDecision(999.6, 1000)).toBe(1);
    expect(budgetDecision(1000, 1000)).toBe("over");
    expect(budgetDecision(1500, 1000)).toBe("over");
  });
});

describe("withBudget", () => {
  test("a step that keeps the process busy past its budget → OVER_BUDGET (fake CPU clock: 300 ms per look)", async () => {
    let cpu = 0;
    let looks = 0;
    const clock = (): number => {
      looks++;
      return (cpu += 300);
    };
    expect(await withBudget(new Promise(() => undefined), 1000, clock)).toBe(OVER_BUDGET);
    // The start, then 300, 600, 900, 1200 ms spent: over at the fourth look after the start.
    expect(looks).toBe(5);
  });

  test("wall time spent waiting (for a core, for I/O) does not count: a step that takes 300 ms of wall time but no CPU time passes a 20 ms budget", async () => {
    const idle = (): number => 42; // a starved process: its CPU clock stands still
    const step = new Promise<string>((resolve) => setTimeout(() => resolve("done"), 300));
    expect(await withBudget(step, 20, idle)).toBe("done");
  });

  test("the value of a step within its budget; no budget (0, Infinity) never stops it", async () => {
    expect(await withBudget(Promise.resolve(7), 1000)).toBe(7);
    const never = (): number => {
      throw new Error("the clock must not be read without a budget");
    };
    expect(await withBudget(Promise.resolve(8), 0, never)).toBe(8);
    expect(await withBudget(Promise.resolve(9), Number.POSITIVE_INFINITY, never)).toBe(9);
  });

  test("the real clock counts a worker thread's CPU time (the pdf.js thread's work is the page's)", async () => {
    // A thread that spins until it is terminated; the main thread only waits.
    const spin = new Worker(URL.createObjectURL(new Blob(["postMessage('spinning'); for (;;) {}"], { type: "application/javascript" })));
    try {
      await new Promise((resolve) => spin.addEventListener("message", resolve, { once: true }));
      const before = processCpuMs();
      expect(await withBudget(new Promise(() => undefined), 100)).toBe(OVER_BUDGET);
      expect(processCpuMs() - before).toBeGreaterThanOrEqual(100);
    } finally {
      spin.terminate();
    }
  });
});
