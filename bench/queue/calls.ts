/**
 * Where the time goes: mean µs per queue call, one loop in this process, for docket's store
 * calls (accept, claimDownload, handOver, transition to ready, releaseReservation) and plainjob's (add, claim,
 * getJobById, markJobAsDone). Explains the queue table; the same jobs and payload as there.
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bun as plainjobBun, defineQueue } from "plainjob";
import { openDb } from "../../bot/db/open.ts";
import { SqliteJobStore } from "../../bot/jobs/sqlite-store.ts";
import { iso } from "../../bot/jobs/lease.ts";
import { BIG_BUDGET, silent } from "./loops.ts";
import { benchJob, DECLARED_SIZE } from "./payload.ts";

/** Mean µs per call name, in call order. */
export type CallCosts = Array<[string, number]>;

function timer() {
  const total = new Map<string, number>();
  return {
    async time<T>(name: string, f: () => T | Promise<T>): Promise<T> {
      const t = performance.now();
      const x = await f();
      total.set(name, (total.get(name) ?? 0) + performance.now() - t);
      return x;
    },
    costs: (jobs: number): CallCosts => [...total].map(([k, v]) => [k, (v / jobs) * 1000]),
  };
}

/** docket: enqueue `jobs`, then one loop claims and completes them; mean µs per store call. */
export async function docketCalls(jobs: number, chats: number): Promise<CallCosts> {
  const dir = mkdtempSync(join(tmpdir(), "docket-bench-calls-"));
  const db = openDb(join(dir, "q.sqlite"));
  try {
    const store = new SqliteJobStore(db.db);
    const tm = timer();
    for (let i = 0; i < jobs; i++) await tm.time("accept", () => store.accept(benchJob(i, chats), Date.now()));
    for (let i = 0; i < jobs; i++) {
      const d = await tm.time("claimDownload", () => store.claimDownload("o", Date.now(), 60_000, BIG_BUDGET));
      if (!d) throw new Error("claimDownload found nothing");
      const p = await tm.time("handOver accepted→processing", () => store.handOver(d.id, "o", Date.now(), 60_000, { localPath: "downloads/x", sha256: "0".repeat(64), realSize: DECLARED_SIZE, reservedBytes: DECLARED_SIZE }));
      if (!p) throw new Error("handOver moved nothing");
      await tm.time("transition processing→ready", () => store.transition(p.job.id, "processing", "ready", "o", Date.now(), { resultExpiresAt: iso(Date.now() + 86_400_000), facts: "{}", detectedType: "pdf" }));
      await tm.time("releaseReservation", () => store.releaseReservation(p.job.id));
    }
    return tm.costs(jobs);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** plainjob: the same with its queue API (what its worker calls per job). */
export async function plainjobCalls(jobs: number, chats: number): Promise<CallCosts> {
  const dir = mkdtempSync(join(tmpdir(), "docket-bench-calls-"));
  const sqlite = new Database(join(dir, "q.sqlite"), { create: true, strict: true });
  const queue = defineQueue({ connection: plainjobBun(sqlite), logger: silent });
  try {
    const tm = timer();
    for (let i = 0; i < jobs; i++) await tm.time("add", () => queue.add("file", benchJob(i, chats)));
    for (let i = 0; i < jobs; i++) {
      await tm.time("getAndMarkScheduledJobAsProcessing", () => queue.getAndMarkScheduledJobAsProcessing());
      const c = await tm.time("getAndMarkJobAsProcessing", () => queue.getAndMarkJobAsProcessing("file"));
      if (!c) throw new Error("plainjob claim found nothing");
      await tm.time("getJobById", () => queue.getJobById(c.id));
      await tm.time("markJobAsDone", () => queue.markJobAsDone(c.id));
    }
    return tm.costs(jobs);
  } finally {
    queue.close();
    sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Markdown table: the two call lists side by side with their per-job sums. */
export function callsTable(docket: CallCosts, plainjob: CallCosts, jobs: number): string {
  const sum = (c: CallCosts) => c.reduce((a, [, v]) => a + v, 0);
  const rows = Math.max(docket.length, plainjob.length);
  const lines = [
    `Per call, one loop in one process, ${jobs} jobs (one run; mean µs per job)`,
    "",
    "| docket call | µs | plainjob call | µs |",
    "| --- | ---: | --- | ---: |",
  ];
  for (let i = 0; i < rows; i++) {
    const d = docket[i];
    const p = plainjob[i];
    lines.push(`| ${d ? d[0] : ""} | ${d ? d[1].toFixed(0) : ""} | ${p ? p[0] : ""} | ${p ? p[1].toFixed(0) : ""} |`);
  }
  lines.push(`| **per job** | **${sum(docket).toFixed(0)}** | **per job** | **${sum(plainjob).toFixed(0)}** |`);
  return lines.join("\n");
}
