/**
 * OCR_PAGE_BUDGET in CPU time (processors/ocr/run-budget.ts): the pure decision on a fake clock — a
 * starved run goes on, one that used its CPU budget stops, a hung one stops at the wall-clock backstop,
 * no `/proc` falls back to wall time — and the `/proc` reader (processors/proc-cpu.ts) on real process
 * trees, checked against what the shell itself reports (`times`).
 */
import { describe, expect, test } from "vitest";
import { treeCpuMs } from "../../processors/proc-cpu.ts";
import { RUN_CHECK_MS, runBudgetDecision, wallBackstopMs, type RunVerdict } from "../../processors/ocr/run-budget.ts";

/**
 * A run on a fake clock: it gets `share` of a core (0.25: four runnable tasks per core) until it has
 * used `needsCpuMs`, or never ends (`Infinity`); `stalledFrom` (wall ms) stops its CPU for good (a tool
 * stopped or blocked). Looks happen when the decision says. Returns the verdict and the clock then.
 */
function simulate(o: { budgetMs: number; share: number; needsCpuMs: number; stalledFrom?: number; proc?: boolean }): { verdict: RunVerdict["kind"] | "finished"; wallMs: number; cpuMs: number } {
  let wall = 0;
  const cpuAt = (w: number) => Math.min(o.needsCpuMs, o.share * Math.min(w, o.stalledFrom ?? Infinity));
  for (;;) {
    const cpu = cpuAt(wall);
    if (cpu >= o.needsCpuMs) return { verdict: "finished", wallMs: wall, cpuMs: cpu };
    const v = runBudgetDecision(o.proc === false ? null : cpu, wall, o.budgetMs);
    if (v.kind !== "look") return { verdict: v.kind, wallMs: wall, cpuMs: cpu };
    expect(v.afterMs).toBeGreaterThanOrEqual(1);
    expect(v.afterMs).toBeLessThanOrEqual(RUN_CHECK_MS);
    wall += v.afterMs;
  }
}

describe("runBudgetDecision", () => {
  test("the verdicts at their edges; the next look never past what is left of either limit", () => {
    expect(runBudgetDecision(0, 0, 60_000)).toEqual({ kind: "look", afterMs: RUN_CHECK_MS });
    expect(runBudgetDecision(59_970, 100_000, 60_000)).toEqual({ kind: "look", afterMs: 30 });
    expect(runBudgetDecision(59_999.5, 100_000, 60_000)).toEqual({ kind: "look", afterMs: 1 });
    expect(runBudgetDecision(60_000, 1, 60_000)).toEqual({ kind: "over_budget" });
    expect(runBudgetDecision(1_000, 599_960, 60_000)).toEqual({ kind: "look", afterMs: 40 });
    expect(runBudgetDecision(1_000, 600_000, 60_000)).toEqual({ kind: "hung" });
    expect(runBudgetDecision(1_000, 5_000, 1_000, 5_000)).toEqual({ kind: "over_budget" }); // the budget first
    // The backstop: 10 × the budget, never under a minute (a tiny budget does not make a starting Tesseract "hung").
    expect([wallBackstopMs(60_000), wallBackstopMs(50)]).toEqual([600_000, 60_000]);
    expect(runBudgetDecision(10, 59_999, 50)).toEqual({ kind: "look", afterMs: 1 });
    expect(runBudgetDecision(10, 60_000, 50)).toEqual({ kind: "hung" });
  });

  test("a starved run (a quarter of a core) that needs 50 s of CPU finishes: 200 s of wall time do not count", () => {
    expect(simulate({ budgetMs: 60_000, share: 0.25, needsCpuMs: 50_000 })).toMatchObject({ verdict: "finished", wallMs: 200_000 });
  });

  test("a starved run that needs more than its budget stops once it has used the budget in CPU time, not before, and at most one look late", () => {
    const r = simulate({ budgetMs: 60_000, share: 0.25, needsCpuMs: Infinity });
    expect(r.verdict).toBe("over_budget");
    expect(r.cpuMs).toBeGreaterThanOrEqual(60_000);
    expect(r.cpuMs).toBeLessThanOrEqual(60_000 + RUN_CHECK_MS * 0.25);
    expect(r.wallMs).toBeGreaterThanOrEqual(240_000);
  });

  test("a run whose CPU stops (a stopped or blocked tool) ends at the wall-clock backstop as hung", () => {
    const r = simulate({ budgetMs: 60_000, share: 1, needsCpuMs: Infinity, stalledFrom: 2_000 });
    expect([r.verdict, r.wallMs, r.cpuMs]).toEqual(["hung", 600_000, 2_000]);
  });

  test("without /proc the run is timed by the wall clock, as before: a starved run stops at the budget's wall time", () => {
    const r = simulate({ budgetMs: 60_000, share: 0.25, needsCpuMs: 50_000, proc: false });
    expect([r.verdict, r.wallMs]).toEqual(["over_budget", 60_000]);
  });
});

/** `sh -c script`, its stdout lines as they come. */
function shell(script: string): { pid: number; lines: string[]; kill: () => Promise<void> } {
  const proc = Bun.spawn(["sh", "-c", script], { stdout: "pipe", stderr: "ignore" });
  const lines: string[] = [];
  void (async () => {
    let buf = "";
    for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) {
      buf += new TextDecoder().decode(chunk);
      const parts = buf.split("\n");
      buf = parts.pop()!;
      lines.push(...parts);
    }
  })();
  return { pid: proc.pid, lines, kill: async () => (proc.kill("SIGKILL"), void (await proc.exited)) };
}

/** A `times` line ("0m0.31s 0m0.01s"): user + system, ms. */
const timesMs = (line: string): number => line.split(" ").reduce((sum, t) => sum + (Number(/^(\d+)m([\d.]+)s$/.exec(t)![1]) * 60 + Number(/^(\d+)m([\d.]+)s$/.exec(t)![2])) * 1000, 0);

/** A shell loop that uses a few hundred ms of CPU. */
const LOOP = "i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done";

describe("treeCpuMs", () => {
  test("a living grandchild's own CPU time counts (as the grandchild's shell reports it)", async () => {
    const run = shell(`sh -c '${LOOP}; times; sleep 30'`);
    try {
      await expect.poll(() => run.lines.length).toBe(2);
      const own = timesMs(run.lines[0]!);
      expect(own).toBeGreaterThan(0);
      const read = treeCpuMs(run.pid)!;
      expect(Math.abs(read - own)).toBeLessThanOrEqual(30); // clock ticks of 10 ms; the shells' own start-up
    } finally {
      await run.kill();
    }
  });

  test("a grandchild that already exited still counts, once (its parent's reaped children's time)", async () => {
    const run = shell(`sh -c '${LOOP}'; times; sleep 30`);
    try {
      await expect.poll(() => run.lines.length).toBe(2);
      const children = timesMs(run.lines[1]!);
      expect(children).toBeGreaterThan(0);
      const read = treeCpuMs(run.pid)!;
      expect(Math.abs(read - children)).toBeLessThanOrEqual(30);
    } finally {
      await run.kill();
    }
  });

  test("a process that is gone: null", async () => {
    const proc = Bun.spawn(["true"]);
    await proc.exited;
    expect(treeCpuMs(proc.pid)).toBeNull();
  });
});
