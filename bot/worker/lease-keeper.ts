/**
 * Keeps a claimed job's lease alive while a step runs (seed 000: "периодически
 * продлевает его, пока работает") and aborts the step when the lease is lost.
 */
import { leaseDeadline, ms, renewAt } from "../jobs/lease.ts";
import type { JobStore } from "../jobs/store.ts";
import type { Logger } from "../log.ts";

/**
 * Renew the lease of `jobId` (claimed until `leaseUntil`, UTC ISO) at the times
 * `renewAt` gives, until `stop()`. `controller` is aborted (reason: Error "lease lost")
 * when a renewal finds the lease gone (another worker holds the job, or it left the
 * active states), or when renewals kept failing (store errors) until the last deadline
 * the database confirmed has passed — from then on another worker may claim the job.
 * A failed renewal is retried every `ttlMs / 6` (at least 50 ms) meanwhile.
 * `now` is the clock in epoch ms; `ttlMs` the lease TTL (LEASE_TTL).
 */
export function keepLease(store: JobStore, jobId: number, owner: string, leaseUntil: string, ttlMs: number, now: () => number, controller: AbortController, log: Logger): { stop(): void } {
  let timer: ReturnType<typeof setTimeout> | null = null;
  let stopped = false;
  /** The last deadline the database confirmed (claim or successful renewal). */
  let confirmed = leaseUntil;
  const lost = (why: string) => {
    log.warn({ job: jobId, why }, "lease lost; stopping this step");
    controller.abort(new Error("lease lost"));
  };
  const after = (delayMs: number) => {
    if (stopped) return;
    timer = setTimeout(() => void renew(), Math.max(0, delayMs));
  };
  const renew = async () => {
    const at = now();
    try {
      const held = await store.renew(jobId, owner, at, ttlMs);
      if (stopped) return; // the step ended meanwhile (its commit may have released the lease)
      if (!held) return lost("another worker holds the job or it is no longer active");
      confirmed = leaseDeadline(at, ttlMs);
    } catch (err) {
      if (stopped) return;
      log.error({ job: jobId, err }, "lease renewal failed");
      if (now() >= ms(confirmed)) return lost(`renewals failed until the lease expired at ${confirmed}`);
      return after(Math.max(50, Math.floor(ttlMs / 6)));
    }
    after(renewAt(confirmed, ttlMs) - now());
  };
  after(renewAt(leaseUntil, ttlMs) - now());
  return {
    stop: () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
