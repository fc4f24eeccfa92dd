/**
 * Worker loops of the queue benchmark: the same "claim → complete" work for docket's
 * `SqliteJobStore` and for plainjob, run either inside a child process (bench/queue/worker.ts)
 * or as async loops in the parent. Each loop ends when nothing is left to claim.
 */
import type { Queue } from "plainjob";
import { JobStatus, defineWorker } from "plainjob";
import type { BudgetParams, JobStore } from "../../bot/jobs/store.ts";
import { iso } from "../../bot/jobs/lease.ts";
import { createLogger } from "../../bot/log.ts";
import { PendingReleases } from "../../bot/worker/releases.ts";
import { DECLARED_SIZE } from "./payload.ts";

/** A budget no benchmark run can fill (bytes), so claims never wait on it. */
export const BIG_BUDGET: BudgetParams = { total: 1e15, multiplier: 2.5, modeLimit: 20 * 1024 * 1024 };

const LEASE_TTL_MS = 60_000;
const SHA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
const FACTS = JSON.stringify({ type: "pdf", pages: 3, width: 1240, height: 1754 });

/**
 * docket's path of one job, with the store calls and patches the engine makes
 * (bot/worker/engine.ts, download-step.ts, process-step.ts, finisher.ts) and no file work. A worker
 * here is one download loop whose processing slot is free when its download ends, so the engine's
 * hand-over applies: claimDownload → handOver (accepted → processing, the processing claim in the
 * same write) → processing → ready → the budget release (after the files are removed, seed 000), which
 * rides on the next claimDownload as in the engine (bot/worker/releases.ts `PendingReleases`: the same
 * class). A job left `fetched` (none in these runs) is taken with claimProcess.
 * Runs until both claims return null; the last release goes with the claim that finds nothing.
 * @param owner lease owner written into `lease_owner`
 * @returns jobs this loop moved to `ready`
 */
export async function docketLoop(store: JobStore, owner: string): Promise<number> {
  let done = 0;
  const releases = new PendingReleases(store, quiet);
  for (;;) {
    const d = await releases.carry((release) => store.claimDownload(owner, Date.now(), LEASE_TTL_MS, BIG_BUDGET, release));
    const source = (id: number) => ({ localPath: `downloads/${id}-0123456789abcdef`, sha256: SHA, realSize: DECLARED_SIZE, reservedBytes: Math.ceil(DECLARED_SIZE * BIG_BUDGET.multiplier) });
    const p = d
      ? await releases.carry((release) => store.handOver(d.id, owner, Date.now(), LEASE_TTL_MS, source(d.id), release))
      : await store.claimProcess(owner, Date.now(), LEASE_TTL_MS);
    if (p) {
      const ok = await store.transition(p.job.id, "processing", "ready", owner, Date.now(), {
        resultExpiresAt: iso(Date.now() + 86_400_000),
        facts: FACTS,
        detectedType: "pdf",
      });
      releases.add(p.job.id);
      if (ok) done++;
    }
    if (!d && !p) {
      await releases.close();
      return done;
    }
  }
}

/**
 * plainjob's own worker (`defineWorker`, its real loop: scheduled-job check, claim in an
 * IMMEDIATE transaction, read the job, run the processor, mark done) with a processor that only
 * parses the JSON data. Stops once no job is pending and this worker is idle.
 * @returns jobs this worker completed
 */
export async function plainjobLoop(queue: Queue, type: string): Promise<number> {
  let done = 0;
  const worker = defineWorker(
    type,
    (job) => {
      JSON.parse(job.data);
      done++;
    },
    { queue, pollIntervall: 2, logger: silent },
  );
  const running = worker.start();
  // Timers fire only while the worker sleeps (its loop yields microtasks only), i.e. when it found nothing.
  await new Promise<void>((resolve) => {
    const t = setInterval(() => {
      if (queue.countJobs({ type, status: JobStatus.Pending }) === 0) {
        clearInterval(t);
        resolve();
      }
    }, 2);
  });
  await worker.stop();
  await running;
  return done;
}

/** docket's logger, silent (a release written alone that fails would warn). */
const quiet = createLogger({ level: "silent" });

/** A logger that drops everything (plainjob logs every job at debug level). */
export const silent = { error() {}, warn() {}, info() {}, debug() {} };
