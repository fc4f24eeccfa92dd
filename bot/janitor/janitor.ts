/**
 * The janitor (seed 000: "Периодическая уборка ищет сирот"): moves expired
 * results to `expired` and deletes their files; sweeps files with no live job,
 * `.part` files older than a threshold, and budget held by finished jobs; reports
 * jobs whose leases died long ago. Database first, then files. Runs on a schedule
 * inside the bot and once from `bun run janitor` (systemd timer).
 */
import { readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { FileJob } from "../db/schema.ts";
import { isLongDead } from "../jobs/lease.ts";
import { JOB_STATES, isActive } from "../jobs/states.ts";
import type { JobStore } from "../jobs/store.ts";
import type { Logger } from "../log.ts";
import { jobIdOf, removeJobFiles, type DataPaths } from "../worker/paths.ts";

/** What one janitor pass did. */
export interface JanitorReport {
  /** Jobs moved `ready → expired`. */
  readonly expired: number;
  /** Files and folders removed as orphans. */
  readonly orphansRemoved: number;
  /** Stale `.part` files removed. */
  readonly stalePartsRemoved: number;
  /** Finished jobs whose budget reservation was released. */
  readonly reservationsReleased: number;
  /** Active jobs whose lease expired more than the grace ago. */
  readonly deadLeases: number;
}

/** Janitor settings (ms). */
export interface JanitorOptions {
  /** A `.part` older than this is abandoned (PART_MAX_AGE). */
  readonly partMaxAgeMs: number;
  /** A lease expired longer than this is reported as dead. */
  readonly deadLeaseGraceMs: number;
}

/** One janitor; `runOnce()` is safe to call concurrently with the pools. */
export class Janitor {
  constructor(
    private readonly store: JobStore,
    private readonly paths: DataPaths,
    private readonly log: Logger,
    private readonly options: JanitorOptions,
    private readonly now: () => number = Date.now,
  ) {}

  /** Erase a job's files now and keep the row as `expired` (/delete N, expiry). */
  async erase(job: FileJob): Promise<boolean> {
    const from = job.status === "ready" || job.status === "failed" ? job.status : null;
    const moved = from ? await this.store.expire(job.id, from, this.now()) : job.status === "expired";
    if (!moved) return false;
    for (const dir of [this.paths.results, this.paths.downloads, this.paths.work]) await removeJobFiles(dir, job.id);
    await this.store.setReservation(job.id, 0);
    return true;
  }

  /** One pass; see the module doc. Never throws for a single bad entry. */
  async runOnce(): Promise<JanitorReport> {
    const now = this.now();
    let expired = 0;
    for (const job of await this.store.dueForExpiry(now)) {
      if (await this.erase(job)) {
        expired++;
        this.log.info({ job: job.id, file_unique_id: job.fileUniqueId }, "result expired; files deleted");
      }
    }

    const all = await this.store.listByState(JOB_STATES);
    const byId = new Map(all.map((j) => [j.id, j]));
    let reservationsReleased = 0;
    let deadLeases = 0;
    for (const job of all) {
      const final = !isActive(job.status);
      if (final && job.reservedBytes > 0) {
        await removeJobFiles(this.paths.downloads, job.id);
        await removeJobFiles(this.paths.work, job.id);
        await this.store.setReservation(job.id, 0);
        reservationsReleased++;
      }
      if (!final && isLongDead(job, now, this.options.deadLeaseGraceMs)) {
        deadLeases++;
        this.log.warn({ job: job.id, status: job.status, lease_until: job.leaseUntil, attempts: job.attempts }, "lease expired long ago; the job is claimable again");
      }
    }

    let orphansRemoved = 0;
    let stalePartsRemoved = 0;
    const sweep = async (dir: string, keepFor: (job: FileJob) => boolean) => {
      let names: string[] = [];
      try {
        names = await readdir(dir);
      } catch {
        return;
      }
      for (const name of names) {
        const full = join(dir, name);
        const id = jobIdOf(name);
        const job = id === null ? undefined : byId.get(id);
        try {
          if (name.endsWith(".part")) {
            const s = await stat(full);
            if (!job || !keepFor(job) || now - s.mtimeMs > this.options.partMaxAgeMs) {
              await rm(full, { recursive: true, force: true });
              stalePartsRemoved++;
            }
            continue;
          }
          if (!job || !keepFor(job)) {
            // Brand-new files of a job created after our listing are kept (no row yet is not "no job").
            if (id !== null && !job && now - (await stat(full)).mtimeMs < 60_000) continue;
            await rm(full, { recursive: true, force: true });
            orphansRemoved++;
            this.log.info({ path: full, job: id }, "orphan removed");
          }
        } catch (err) {
          this.log.warn({ path: full, err }, "janitor could not inspect an entry");
        }
      }
    };
    const active = (j: FileJob) => isActive(j.status);
    await sweep(this.paths.downloads, active);
    await sweep(this.paths.work, active);
    await sweep(this.paths.results, (j) => j.status === "ready" || j.status === "processing");

    const report = { expired, orphansRemoved, stalePartsRemoved, reservationsReleased, deadLeases };
    this.log.info(report, "janitor pass");
    return report;
  }
}
