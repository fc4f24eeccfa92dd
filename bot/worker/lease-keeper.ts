/**
 * Keeps a claimed job's lease alive while a step runs (seed 000: "периодически
 * продлевает его, пока работает") and aborts the step when the lease is lost.
 */
import type { JobStore } from "../jobs/store.ts";
import type { Logger } from "../log.ts";

/**
 * Renew the lease of `jobId` every third of `ttlMs` until `stop()`;
 * when a renewal finds the lease gone, `controller` is aborted.
 */
export function keepLease(store: JobStore, jobId: number, owner: string, ttlMs: number, now: () => number, controller: AbortController, log: Logger): { stop(): void } {
  const timer = setInterval(
    async () => {
      try {
        const ok = await store.renew(jobId, owner, now(), ttlMs);
        if (!ok) {
          log.warn({ job: jobId }, "lease lost; stopping this step");
          controller.abort(new Error("lease lost"));
        }
      } catch (err) {
        log.error({ job: jobId, err }, "lease renewal failed");
      }
    },
    Math.max(50, Math.floor(ttlMs / 3)),
  );
  return { stop: () => clearInterval(timer) };
}
