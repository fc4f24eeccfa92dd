/**
 * Queue benchmark: enqueue → claim → complete on a real SQLite file (WAL) for docket's
 * `SqliteJobStore` and plainjob, side by side, at 1, 2 and 4 worker processes sharing the file
 * and with 4 async loops in one process. Each run: fresh file, JOBS jobs enqueued by one
 * producer (timed), then the workers drain the queue (timed from "go" to the last "done").
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openQueue, verifyDrained, type ImplName } from "./impls.ts";
import { median, rate } from "./stats.ts";

/** One measured configuration. */
export interface QueueCase {
  readonly impl: ImplName;
  /** "proc": separate Bun processes, one loop each; "async": async loops in this process. */
  readonly kind: "proc" | "async";
  readonly workers: number;
  /** Finished rows inserted before the run (history.ts). */
  readonly history: number;
}

/** One run's result; rates in jobs/s. */
interface QueueRun {
  enqueue: number;
  drain: number;
  endToEnd: number;
  completed: number;
}

const WORKER = new URL("./worker.ts", import.meta.url).pathname;

async function drainInProcesses(impl: ImplName, file: string, workers: number): Promise<{ ms: number; completed: number }> {
  let ready = 0;
  let allReady!: () => void;
  const readyP = new Promise<void>((r) => (allReady = r));
  const dones: Promise<number>[] = [];
  const children = Array.from({ length: workers }, (_, k) => {
    let resolveDone!: (n: number) => void;
    dones.push(new Promise<number>((r) => (resolveDone = r)));
    return Bun.spawn([process.execPath, WORKER, impl, file, `bench-w${k}`], {
      stdout: "inherit",
      stderr: "inherit",
      ipc(m: { ready?: boolean; done?: number }) {
        if (m.ready && ++ready === workers) allReady();
        if (m.done !== undefined) resolveDone(m.done);
      },
    });
  });
  await readyP;
  const t0 = performance.now();
  for (const c of children) c.send({ go: true });
  const counts = await Promise.all(dones);
  const ms = performance.now() - t0;
  await Promise.all(children.map((c) => c.exited));
  return { ms, completed: counts.reduce((a, b) => a + b, 0) };
}

async function runOnce(c: QueueCase, jobs: number, chats: number): Promise<QueueRun> {
  const dir = mkdtempSync(join(tmpdir(), "docket-bench-queue-"));
  const file = join(dir, "queue.sqlite");
  try {
    const q = openQueue(c.impl, file, c.history);
    const t0 = performance.now();
    for (let i = 0; i < jobs; i++) await q.enqueue(i, chats);
    const enqueueMs = performance.now() - t0;
    let drainMs: number;
    let completed: number;
    if (c.kind === "async") {
      const t1 = performance.now();
      completed = await q.drain(c.workers, "bench-async");
      drainMs = performance.now() - t1;
      q.close();
    } else {
      q.close();
      ({ ms: drainMs, completed } = await drainInProcesses(c.impl, file, c.workers));
    }
    if (completed !== jobs) throw new Error(`${c.impl}, ${label(c)}: completed ${completed} of ${jobs} jobs`);
    verifyDrained(c.impl, file, jobs);
    return { enqueue: jobs / (enqueueMs / 1000), drain: jobs / (drainMs / 1000), endToEnd: jobs / ((enqueueMs + drainMs) / 1000), completed };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Row label of a case, e.g. "2 processes" or "4 async loops, 1 process; 20 000 finished rows first". */
function label(c: QueueCase): string {
  const who = c.kind === "proc" ? `${c.workers} process${c.workers > 1 ? "es" : ""}` : `${c.workers} async loops, 1 process`;
  return c.history > 0 ? `${who}; ${rate(c.history)} finished rows first` : who;
}

/** Median rates of one case over its runs, jobs/s. */
export interface QueueResult extends QueueCase {
  readonly enqueue: number;
  readonly drain: number;
  readonly endToEnd: number;
  /** Slowest and fastest end-to-end run, jobs/s (the spread on a shared machine). */
  readonly endToEndRange: readonly [number, number];
}

/**
 * Run every case `runs` times, interleaved (case A run 1, case B run 1, …) so drift on a shared
 * machine hits all cases alike; returns the medians.
 * @throws when a run completes a different number of jobs than it enqueued
 */
export async function benchQueue(cases: readonly QueueCase[], jobs: number, chats: number, runs: number): Promise<QueueResult[]> {
  const per = cases.map(() => [] as QueueRun[]);
  // Warm-up (discarded): JIT and page cache for the parent's enqueue path of each queue.
  for (const impl of ["docket", "plainjob"] as const) await runOnce({ impl, kind: "async", workers: 1, history: 0 }, Math.min(jobs, 300), chats);
  for (let r = 0; r < runs; r++) {
    for (const [k, c] of cases.entries()) {
      per[k]!.push(await runOnce(c, jobs, chats));
      const last = per[k]!.at(-1)!;
      console.error(`queue run ${r + 1}/${runs} ${c.impl}, ${label(c)}: enqueue ${rate(last.enqueue)}/s, drain ${rate(last.drain)}/s`);
    }
  }
  return cases.map((c, k) => ({
    ...c,
    enqueue: median(per[k]!.map((x) => x.enqueue)),
    drain: median(per[k]!.map((x) => x.drain)),
    endToEnd: median(per[k]!.map((x) => x.endToEnd)),
    endToEndRange: [Math.min(...per[k]!.map((x) => x.endToEnd)), Math.max(...per[k]!.map((x) => x.endToEnd))] as const,
  }));
}

/** The markdown table of {@link benchQueue} results with docket / plainjob ratios per row pair. */
export function queueTable(results: readonly QueueResult[], jobs: number, runs: number): string {
  const lines = [
    `Queue: ${jobs} jobs per run, medians of ${runs} runs, fresh WAL file on disk per run; jobs/s`,
    "",
    "| workers | queue | enqueue | claim → complete (drain) | end-to-end | end-to-end min–max | docket / plainjob (end-to-end) |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
  ];
  for (const r of results) {
    const peer = results.find((p) => p.impl === "plainjob" && p.kind === r.kind && p.workers === r.workers && p.history === r.history);
    const ratio = r.impl === "docket" && peer ? `${(r.endToEnd / peer.endToEnd).toFixed(2)}` : "";
    lines.push(`| ${label(r)} | ${r.impl} | ${rate(r.enqueue)} | ${rate(r.drain)} | ${rate(r.endToEnd)} | ${rate(r.endToEndRange[0])}–${rate(r.endToEndRange[1])} | ${ratio} |`);
  }
  return lines.join("\n");
}
