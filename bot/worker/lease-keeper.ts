/**
 * Keeps a claimed job's lease alive while a step runs (seed 000: "периодически
 * продлевает его, пока работает") and aborts the step when the lease is lost.
 */
import { leaseDeadline, ms, renewAt } from "../jobs/lease.ts";
import type { JobStore } from "../jobs/store.ts";
import type { Logger } from "../log.ts";

/** One running keeper, as {@link LeaseKeepers} sees it. */
interface Keeper {
  /** The renewal to wait for: the one running, or one started now because its time has come (a stalled event loop ran its timer late); null when none is due. */
  catchUp(): Promise<void> | null;
}

/**
 * The lease keepers of one process's running steps. Every step of a process writes the same
 * `lease_owner` (CONTRACTS.md §6), so in the database a lease this process let lapse looks claimable
 * to this very process, and its own claim would start a second step of a job it is still running —
 * with the same owner, which every conditional write accepts. That happens when the event loop stalls
 * (a loaded host, a paused VM) past a renewal and the claim loop runs before the keeper's late timer.
 * The engine calls {@link catchUp} before each claim: every renewal that is due runs first, so this
 * process's claims never see its own live steps' leases lapsed. Another process may still take a lease
 * that really lapsed; the keeper then finds it gone and stops the step (seed 000's lease rule).
 */
export class LeaseKeepers {
  private readonly keepers = new Set<Keeper>();

  /** @internal keepLease registers its keeper for as long as it runs. */
  add(k: Keeper): () => void {
    this.keepers.add(k);
    return () => void this.keepers.delete(k);
  }

  /**
   * Run every renewal whose time has come; the promise of them all, or null when none is due (the claim
   * goes on at once). Never rejects: a renewal's errors are its keeper's (logged, retried, or the step stopped).
   */
  catchUp(): Promise<void> | null {
    const due: Promise<void>[] = [];
    for (const k of this.keepers) {
      const p = k.catchUp();
      if (p) due.push(p);
    }
    return due.length === 0 ? null : Promise.all(due).then(() => undefined);
  }
}

/**
 * Renew the lease of `jobId` (claimed until `leaseUntil`, UTC ISO) at the times
 * `renewAt` gives, until `stop()`. `controller` is aborted (reason: Error "lease lost")
 * when a renewal finds the lease gone (another worker holds the job, or it left the
 * active states), or when renewals kept failing (store errors) until the last deadline
 * the database confirmed has passed — from then on another worker may claim the job.
 * A failed renewal is retried every `ttlMs / 6` (at least 50 ms) meanwhile.
 * `now` is the clock in epoch ms; `ttlMs` the lease TTL (LEASE_TTL). With `keepers`, the keeper is one
 * of the process's {@link LeaseKeepers} until `stop()` (its due renewal runs before the process claims).
 */
export function keepLease(store: JobStore, jobId: number, owner: string, leaseUntil: string, ttlMs: number, now: () => number, controller: AbortController, log: Logger, keepers?: LeaseKeepers): { stop(): void } {
  let timer: ReturnType<typeof setTimeout> | null = null;
  let stopped = false;
  /** When the next renewal is planned (epoch ms); the renewal running now, if any. */
  let dueAt = 0;
  let running: Promise<void> | null = null;
  /** The last deadline the database confirmed (claim or successful renewal). */
  let confirmed = leaseUntil;
  const lost = (why: string) => {
    log.warn({ job: jobId, why }, "lease lost; stopping this step");
    controller.abort(new Error("lease lost"));
  };
  const after = (delayMs: number) => {
    if (stopped) return;
    dueAt = now() + Math.max(0, delayMs);
    timer = setTimeout(() => void run(), Math.max(0, delayMs));
  };
  /** One renewal at a time: the timer's and a catch-up's share it. */
  const run = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = null;
    running ??= renew().finally(() => (running = null));
    return running;
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
  const leave = keepers?.add({
    catchUp: () => running ?? (!stopped && timer !== null && now() >= dueAt ? run() : null),
  });
  return {
    stop: () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      leave?.();
    },
  };
}
