/**
 * The job engine's I/O shell: a download pool bounded by the byte budget and a
 * processing pool sized by CPU cores (seed 000: "два пула"), claiming work by
 * lease from the `JobStore`. Decisions come from the pure modules in `bot/jobs/`;
 * this file only runs them against SQL, files and the Bot API.
 */
import type { Config } from "../config.ts";
import { downloadLimit } from "../config.ts";
import type { FileJob } from "../db/schema.ts";
import type { Fetcher } from "../fetch/types.ts";
import type { Services } from "../services.ts";
import { DownloadStep, type ProcessSlot } from "./download-step.ts";
import type { ProcessClaim } from "../jobs/store.ts";
import { ProcessStep } from "./process-step.ts";
import { SourceKeeper } from "./source.ts";
import { LeaseKeepers } from "./lease-keeper.ts";
import type { DataPaths } from "./paths.ts";
import type { ProcessRunner } from "./types.ts";
import type { OcrState } from "./ocr-state.ts";
import { Finisher } from "./finisher.ts";
import { isActive } from "../jobs/states.ts";
import { exhaustedAtClaim } from "../jobs/retry.ts";
import { newStartId, ownerId } from "../jobs/owner.ts";
import { writtenMultiplier } from "../jobs/budget.ts";
import { ABORT_GRACE_MS } from "../shutdown.ts";
import type { WakeChannel } from "../db/pg-wake.ts";

/** A processing loop parked while idle (Engine.park): resolved once, with a handed-over claim or null. */
interface Parked {
  readonly resolve: (handed: Handed | null) => void;
  readonly timer: ReturnType<typeof setTimeout>;
}

/** A job handed over by a download of this process: the claim and the download's controller (ProcessSlot.give). */
interface Handed {
  readonly claim: ProcessClaim;
  readonly controller: AbortController;
}

/** Engine dependencies. */
export interface EngineDeps {
  readonly services: Omit<Services, "wake" | "cancel">;
  readonly paths: DataPaths;
  readonly fetcher: Fetcher;
  readonly runner: ProcessRunner;
  /** Whether text recognition can run (its self-check); absent = never recognize. */
  readonly ocr?: OcrState;
  /**
   * Wake-ups from other processes and hosts (PostgreSQL LISTEN/NOTIFY; issue 14 item 1); null or absent:
   * this process is the only one (SQLite).
   */
  readonly wakeups?: WakeChannel | null;
  /**
   * Idle poll interval when nothing wakes the pools, ms (backoffs and lease expiries need a look);
   * default 1000, or 5000 with {@link wakeups} (then only the fallback for a missed notification).
   */
  readonly idlePollMs?: number;
  /**
   * Final status messages left to show (bot/status/finals.ts): started after the reclaim, so a record this
   * host's earlier process held is taken back with its leases. Its owner id is this engine's.
   */
  readonly finals?: { start(): Promise<void>; readonly owner: string };
}

/** Starts and stops the two pools; `wake()` nudges idle workers; `cancel()` stops one job. */
export class Engine {
  /** This process start's lease owner id, `<HOST_ID>/<start id>` (CONTRACTS.md §6), written into `lease_owner`. */
  readonly owner: string;
  private running = false;
  private readonly loops: Promise<void>[] = [];
  private waiters: Array<() => void> = [];
  /** Abort controllers of running steps, by job id (for /cancel and shutdown). */
  private readonly inFlight = new Map<number, AbortController>();
  /** Deliveries handed off by the processing pool (they wait on chats, not on CPU). */
  private readonly tails = new Set<Promise<void>>();
  /** The running steps' lease keepers: their due renewals run before each claim (see {@link LeaseKeepers}). */
  private readonly keepers = new LeaseKeepers();
  private readonly download: DownloadStep;
  private readonly process: ProcessStep;
  private readonly finisher: Finisher;

  /** @param deps see {@link EngineDeps} */
  constructor(private readonly deps: EngineDeps) {
    this.owner = deps.finals?.owner ?? ownerId(deps.services.config.hostId, newStartId());
    this.finisher = new Finisher(deps.services, deps.paths);
    // A download handed over to processing may be processed on any host: announce it.
    this.download = new DownloadStep(deps.services, deps.paths, deps.fetcher, this.finisher, this.owner, () => this.announce(), () => this.offerSlot(), this.keepers);
    this.process = new ProcessStep(deps.services, deps.paths, deps.runner, this.finisher, this.owner, new SourceKeeper(deps.services, deps.paths, deps.fetcher, this.owner), deps.ocr, this.keepers);
  }

  private get config(): Config {
    return this.deps.services.config;
  }

  /**
   * Take back this host's earlier processes' leases (issue 11 item 4: a crash resumes in seconds, not
   * after LEASE_TTL), then start `downloadConcurrency` download loops and `processConcurrency`
   * processing loops. The loops claim only after the reclaim, so the interrupted jobs are the first taken.
   * Resolves once the reclaim is done and every loop has made its first claim.
   */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    if (this.deps.wakeups) {
      try {
        this.unlisten = await this.deps.wakeups.subscribe(() => this.wake());
      } catch (err) {
        this.deps.services.log.warn({ err }, "could not listen for wake-ups; the pools look for work every few seconds instead");
      }
    }
    const reclaimed = this.reclaim().then(() => this.deps.finals?.start());
    const after = (pool: "download" | "process") => this.counted(pool, reclaimed);
    for (let i = 0; i < this.config.downloadConcurrency; i++) this.loops.push(after("download"));
    for (let i = 0; i < this.config.processConcurrency; i++) this.loops.push(after("process"));
    await reclaimed;
  }

  /**
   * Release the leases this host's earlier processes still hold (they are dead: one bot process per
   * host); one journal line names them. A store error is logged and the leases expire as usual.
   */
  private async reclaim(): Promise<void> {
    const { store, log, now } = this.deps.services;
    try {
      const taken = await store.reclaimHostLeases(this.config.hostId, this.owner, now());
      if (taken.length === 0) return;
      log.info(
        { owner: this.owner, jobs: taken.map((t) => t.id), states: taken.map((t) => t.status), from: [...new Set(taken.map((t) => t.from))] },
        `reclaimed ${taken.length} lease(s) held by this host's earlier process; the jobs resume by state`,
      );
    } catch (err) {
      log.error({ err }, "could not reclaim this host's earlier leases; they expire after LEASE_TTL");
    }
  }

  /** Loops running per pool. */
  private readonly alive = { download: 0, process: 0 };

  /** A loop of `pool` that starts once `first` resolved, counted while it runs. */
  private counted(pool: "download" | "process", first: Promise<void>): Promise<void> {
    this.alive[pool]++;
    return first.then(() => this.loop(pool)).finally(() => void this.alive[pool]--);
  }

  /**
   * Whether the pools run and how many loops each has (issue 10 item 1, liveness): once started,
   * fewer loops than configured means one died.
   */
  liveness(): { readonly started: boolean; readonly download: number; readonly process: number } {
    return { started: this.running, download: this.alive.download, process: this.alive.process };
  }

  private unlisten: (() => Promise<void>) | null = null;
  /** Whether the last claim failed (one journal line per outage). */
  private claimsFailing = false;

  /** Wake idle workers here and in every other process (a job was accepted, handed over or released). */
  announce(): void {
    this.wake();
    this.deps.wakeups?.announce();
  }

  /**
   * Wake this process's idle workers of both pools now: there may be work (a job was accepted, handed
   * over to processing by another process, cancelled, or released). Counted, so a processing loop
   * knows whether anything was announced since it last looked (see {@link loop}).
   */
  wake(): void {
    this.announced++;
    this.wakeDownloads();
    for (const p of [...this.parked]) p.resolve(null);
  }

  /** Announcements heard ({@link wake} calls) so far. */
  private announced = 0;

  /** Wake only the idle download loops (a step ended: its budget may be free; nothing new to process). */
  private wakeDownloads(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /**
   * Stop claiming; let running steps and handed-off deliveries finish until `deadlineMs`, then
   * abort them (their leases expire and the next start resumes them by state). Returns within
   * about `deadlineMs` + ABORT_GRACE_MS.
   */
  async stop(deadlineMs = 20_000): Promise<void> {
    this.running = false;
    await this.unlisten?.().catch(() => {});
    this.unlisten = null;
    this.wake();
    const abortAll = () => {
      for (const c of this.inFlight.values()) c.abort(new Error("shutdown"));
    };
    const deadline = Date.now() + deadlineMs;
    const timer = setTimeout(abortAll, deadlineMs);
    await Promise.allSettled(this.loops);
    // Deliveries handed off by the processing pool share the deadline, then are aborted like the steps;
    // an aborted delivery ends at its next await, and a short grace bounds even that.
    await Promise.race([Promise.allSettled([...this.tails]), Bun.sleep(Math.max(0, deadline - Date.now()))]);
    abortAll();
    await Promise.race([Promise.allSettled([...this.tails]), Bun.sleep(ABORT_GRACE_MS)]);
    clearTimeout(timer);
    // Releases no claim carried: written now, before the store closes.
    await this.finisher.releases.close();
  }

  /** Cancel a job in any active state: running work is aborted, files removed, `failed` / `cancelled`. */
  async cancel(jobId: number): Promise<"cancelled" | "final" | "missing"> {
    const { store } = this.deps.services;
    for (let i = 0; i < 5; i++) {
      const job = await store.get(jobId);
      if (!job) return "missing";
      if (!isActive(job.status)) return "final";
      const ok = await store.fail(jobId, job.status, null, "cancelled", {}, "cancelled by the user", this.deps.services.now(), this.finisher.failedStatus(job, "cancelled", {}));
      if (ok) {
        this.deps.services.metrics.jobsEnded.inc({ status: "failed", reason: "cancelled" });
        this.inFlight.get(jobId)?.abort(new Error("cancelled"));
        const after = (await store.get(jobId)) ?? job;
        await this.finisher.cleanupFailed(after); // its chat message goes in the background: the handler returns now
        this.announce();
        return "cancelled";
      }
    }
    return "final";
  }

  private async loop(pool: "download" | "process"): Promise<void> {
    const { store, log, now } = this.deps.services;
    // A processing loop's last look into the queue, and whether its last job came by hand-over.
    let looked = { announced: -1, at: 0 };
    let handed = false;
    while (this.running) {
      let job: FileJob | null = null;
      let claim: ProcessClaim | null = null;
      let inherited: AbortController | null = null;
      // After a handed-over job, a processing loop parks again without a claim when nothing was
      // announced since it last found the queue empty and that look is younger than the idle poll:
      // a job enters `fetched` only with an announcement, and lease expiries and backoffs are the
      // poll's, whose bound this keeps (the claim a busy host would otherwise make per job).
      const skip = pool === "process" && handed && this.announced === looked.announced && Date.now() - looked.at < this.idleMs();
      try {
        // This process's own leases first: a step of ours whose renewal is due (the event loop ran late)
        // must not look lapsed to our own claim, which would start a second step of the same job.
        if (pool === "download") {
          const due = this.keepers.catchUp();
          if (due) await due;
          // The budget releases after `ready` this process owes ride on the claim (bot/worker/releases.ts).
          job = await this.finisher.releases.carry((release) =>
            store.claimDownload(
              this.owner,
              now(),
              this.config.leaseTtlMs,
              {
                total: this.config.downloadBudget,
                multiplier: writtenMultiplier(this.config.budgetMultiplier, this.config.mode),
                modeLimit: downloadLimit(this.config),
                floor: this.config.budgetMinReservation,
              },
              release,
            ),
          );
        } else if (!skip) {
          // Counted as searching until it parks or has a job: a download ending meanwhile waits for it (offerSlot).
          this.searching++;
          looked = { announced: this.announced, at: Date.now() };
          const due = this.keepers.catchUp();
          if (due) await due;
          claim = await store.claimProcess(this.owner, now(), this.config.leaseTtlMs);
          job = claim?.job ?? null;
        }
        if (this.claimsFailing && !skip) {
          this.claimsFailing = false;
          log.info({ pool }, "claims work again: the database answers");
        }
      } catch (err) {
        // A database outage (issue 14, faults): one line when claims start failing, then quiet until they work.
        if (!this.claimsFailing) log.error({ err, pool }, "claim failed: the database did not answer; the pools keep trying every few seconds (readiness: database)");
        this.claimsFailing = true;
      }
      if (pool === "process") {
        // Idle: parked first, so a download of this process can hand its job over (offerSlot).
        const parked = job ? null : this.park();
        if (!skip) this.searching--;
        this.slotsChanged();
        handed = false;
        if (parked) {
          const given = await parked;
          claim = given?.claim ?? null;
          inherited = given?.controller ?? null;
          job = claim?.job ?? null;
          handed = job !== null;
        }
      }
      if (!job) {
        if (pool === "download") await this.idle();
        continue;
      }
      if (exhaustedAtClaim(job.attempts, this.config.maxAttempts)) {
        await this.endExhausted(job).catch((err) => log.error({ job: job.id, err }, "could not end an exhausted job"));
        continue;
      }
      // A handed-over job keeps the download's controller (a /cancel may have aborted it already).
      const controller = inherited ?? new AbortController();
      this.inFlight.set(job.id, controller);
      const id = job.id;
      let handedOff = false;
      try {
        if (pool === "download") handedOff = (await this.download.run(job, controller)) === "handed";
        else {
          await this.process.run(claim!, controller, (tail) => {
            handedOff = true;
            this.track(id, controller, tail);
          });
        }
      } catch (err) {
        log.error({ job: id, err }, "step crashed; the lease will expire and the job resumes");
      } finally {
        // The next pool may already hold this job (download hands over to processing): only remove our own entry.
        if (!handedOff && this.inFlight.get(id) === controller) this.inFlight.delete(id);
      }
      this.wakeDownloads();
    }
  }

  /** End a claimed job whose tries all died before finishing (crash loop): `failed` / `attempts_exhausted`. */
  private async endExhausted(job: FileJob): Promise<void> {
    const max = this.config.maxAttempts;
    const detail = `${job.attempts - 1} tries started in ${job.status} and none finished (crash or lost lease); MAX_ATTEMPTS=${max}`;
    await this.finisher.onFailure(job, job.status, this.owner, { reason: "attempts_exhausted", retryable: false, params: { attempts: max }, detail });
  }

  /** Keep a handed-off delivery cancellable and awaited at shutdown until it ends. */
  private track(jobId: number, controller: AbortController, tail: Promise<void>): void {
    const tracked = tail
      .catch((err) => this.deps.services.log.error({ job: jobId, err }, "delivery crashed; the lease will expire and the job resumes"))
      .finally(() => {
        this.tails.delete(tracked);
        if (this.inFlight.get(jobId) === controller) this.inFlight.delete(jobId);
        this.wakeDownloads();
      });
    this.tails.add(tracked);
  }

  /** Idle poll interval, ms (see {@link EngineDeps.idlePollMs}). */
  private idleMs(): number {
    return this.deps.idlePollMs ?? (this.deps.wakeups ? 5000 : 1000);
  }

  /** Processing loops of this process waiting for work, oldest first. */
  private parked: Parked[] = [];

  /**
   * Wait like {@link idle} (a wake-up or the poll interval: null, claim again), parked so that a download
   * of this process may hand its job straight to this loop (the claim it resolves with).
   */
  private park(): Promise<Handed | null> {
    if (!this.running) return Promise.resolve(null);
    return new Promise((resolve) => {
      const entry: Parked = {
        resolve: (handed) => {
          clearTimeout(entry.timer);
          this.parked = this.parked.filter((p) => p !== entry);
          resolve(handed);
        },
        timer: setTimeout(() => entry.resolve(null), this.idleMs()),
      };
      this.parked.push(entry);
    });
  }

  /** Processing loops between a claim attempt and parking (or having a job). */
  private searching = 0;
  /** Waiting {@link offerSlot} calls, told when a loop parks or stops searching. */
  private slotWaiters: Array<() => void> = [];

  /** A processing loop parked or stopped searching: waiting offers look again. */
  private slotsChanged(): void {
    const w = this.slotWaiters;
    this.slotWaiters = [];
    for (const f of w) f();
  }

  /**
   * Reserve a parked processing loop for a job this process has just downloaded (issue 14 item 8: the
   * host holding the file processes it): the loop is taken out of wake-ups and its poll, and waits
   * for the slot's `give` or `release`. A loop that is still looking for work (a wake-up sent it to
   * claim) is waited for — one claim's round trip — since it parks when it finds none. Null when every
   * processing loop has a job, or the engine is stopping.
   */
  private async offerSlot(): Promise<ProcessSlot | null> {
    for (;;) {
      if (!this.running) return null;
      const p = this.parked.shift();
      if (p) {
        clearTimeout(p.timer);
        return { give: (claim, controller) => p.resolve({ claim, controller }), release: () => p.resolve(null) };
      }
      if (this.searching === 0) return null;
      await new Promise<void>((resolve) => this.slotWaiters.push(resolve));
    }
  }

  private idle(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.idleMs());
      const self = this;
      function done() {
        clearTimeout(timer);
        self.waiters = self.waiters.filter((w) => w !== done);
        resolve();
      }
      this.waiters.push(done);
    });
  }
}
