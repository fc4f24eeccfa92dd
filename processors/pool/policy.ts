/**
 * The pool's decisions, pure (state and time in, one decision out; seed 002's split): when a
 * warm child is replaced and how many children to start. The I/O shell is pool.ts.
 * Issue 12: "a child is replaced in the background: after N jobs, when its RSS after a job stays
 * above a threshold, after any kill, and after an idle time (so an idle bot gives the memory back)".
 */

/** The pool's settings (config: PROCESS_CONCURRENCY, PROCESS_RECYCLE_JOBS, PROCESS_RECYCLE_RSS_MB, PROCESS_IDLE_TIMEOUT). */
export interface PoolSettings {
  /** Children at most, one job each: the processing slots. */
  readonly size: number;
  /** A child is replaced after this many jobs. */
  readonly recycleJobs: number;
  /** A child whose resident set after a job, after a full GC, is still above this is replaced, bytes. */
  readonly recycleRssBytes: number;
  /** A child with no job for this long exits and is not replaced until work comes, ms. */
  readonly idleMs: number;
}

/** Why a child left the pool. `killed`: the pool killed it (timeout, memory cap, cancel); `crashed`: it died on its own. */
export type RetireReason = "jobs" | "rss" | "idle" | "killed" | "crashed";

/**
 * After a job ended normally: keep the child, or retire it.
 * @param jobs jobs the child has run, this one included
 * @param rssBytes its resident set once idle (the child ran a full GC first when it was above the threshold)
 */
export function retireAfterJob(jobs: number, rssBytes: number, s: PoolSettings): "jobs" | "rss" | null {
  if (jobs >= s.recycleJobs) return "jobs";
  if (rssBytes > s.recycleRssBytes) return "rss";
  return null;
}

/** Whether an idle child has been idle long enough to exit (`idleSince`, `now` in ms). */
export function idleExpired(idleSince: number, now: number, s: PoolSettings): boolean {
  return now - idleSince >= s.idleMs;
}

/**
 * Whether a retired child's slot is filled again at once (in the background, so the next job
 * finds a warm child), or left empty until work comes: only an idle exit gives the memory back.
 */
export function replaceAtOnce(reason: RetireReason): boolean {
  return reason !== "idle";
}

/** Counts of the pool's children by state, and the jobs waiting for one. */
export interface PoolCounts {
  readonly starting: number;
  readonly idle: number;
  readonly busy: number;
  readonly waiting: number;
}

/**
 * How many children to start now for the jobs waiting: those that no idle or starting child will
 * take, within the pool size.
 */
export function childrenToStart(c: PoolCounts, s: PoolSettings): number {
  const live = c.starting + c.idle + c.busy;
  const uncovered = c.waiting - c.idle - c.starting;
  return Math.max(0, Math.min(uncovered, s.size - live));
}
