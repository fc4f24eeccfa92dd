/**
 * Keeps a claimed job's lease alive while a step runs (seed 000: "периодически
 * продлевает его, пока работает") and aborts the step when the lease is lost.
 */
import { leaseDeadline, renewAt } from "../jobs/lease.ts";
import type { JobStore } from "../jobs/store.ts";
import type { Logger } from "../log.ts";

/**
 * Renew the lease of `jobId` (claimed until `leaseUntil`, UTC ISO) at the times
 * `renewAt` gives, until `stop()`; when a renewal finds the lease gone,
 * `controller` is aborted.
 */
export function keepLease(store: JobStore, jobId: number, owner: string, leaseUntil: string, ttlMs: number, now: () => number, controller: AbortController, log: Logger): { stop(): void } {
  let timer: ReturnType<typeof setTimeout> | null = null;
  let stopped = false;
  const schedule = (deadline: string) => {
    if (stopped) return;
    timer = setTimeout(() => void renew(), Math.max(0, renewAt(deadline, ttlMs) - now()));
  };
  const renew = async () => {
    const at = now();
    try {
      if (!(await store.renew(jobId, owner, at, ttlMs))) {
        log.warn({ job: jobId }, "lease lost; stopping this step");
        controller.abort(new Error("lease lost"));
        return;
      }
    } catch (err) {
      log.error({ job: jobId, err }, "lease renewal failed");
    }
    schedule(leaseDeadline(at, ttlMs));
  };
  schedule(leaseUntil);
  return {
    stop: () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
