/**
 * The janitor (seed 000: "Периодическая уборка ищет сирот"): moves expired
 * results to `expired` and deletes their files; sweeps files with no live job,
 * `.part` files older than a threshold, and budget held by finished jobs; reports
 * jobs whose leases died long ago. Runs on a schedule inside the bot and once
 * from `bun run janitor` (systemd timer), concurrently with the pools.
 *
 * Two rules keep it from deleting what a worker still needs:
 * - database first, files second (seed 000: "Сначала в базе фиксируется новое
 *   состояние, потом удаляется файл"): files go only after the state that makes
 *   them dead is committed;
 * - the database is the truth at the moment of deletion: the row is re-read right
 *   before a job's files are removed, never taken from the listing made at the
 *   start of the pass (a job listed `failed` may be re-armed and downloading again,
 *   one listed `fetched` may be writing results by now). Entries are listed before
 *   that re-read, so a file of a new life of the job (created after the re-read,
 *   under a new generated name) is never among them.
 */
import { readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Config } from "../config.ts";
import type { FileJob } from "../db/schema.ts";
import { isLeased, isLongDead } from "../jobs/lease.ts";
import { JOB_STATES, isActive } from "../jobs/states.ts";
import type { JobStore } from "../jobs/store.ts";
import type { Logger } from "../log.ts";
import { jobEntries, jobIdOf, removeEntries, type DataPaths } from "../worker/paths.ts";

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
  /** Intake replies sent (or given up) more than {@link REPLY_KEEP_MS} ago, deleted. */
  readonly repliesPruned: number;
}

/** How long sent intake replies are kept (the one-refusal-a-day check reads the last 24 h), ms: 7 days. */
export const REPLY_KEEP_MS = 7 * 86_400_000;

/** Janitor settings (ms). */
export interface JanitorOptions {
  /** A `.part` older than this (by mtime) is abandoned (PART_MAX_AGE). */
  readonly partMaxAgeMs: number;
  /** A lease expired longer than this is reported as dead. */
  readonly deadLeaseGraceMs: number;
}

/** Janitor settings from the configuration: PART_MAX_AGE, and dead leases reported after 10 × LEASE_TTL. */
export function janitorOptions(config: Pick<Config, "partMaxAgeMs" | "leaseTtlMs">): JanitorOptions {
  return { partMaxAgeMs: config.partMaxAgeMs, deadLeaseGraceMs: config.leaseTtlMs * 10 };
}

/** Which folder an entry lives in: sources and intermediates, or results. */
type Area = "temp" | "results";

/**
 * Whether a job in this state still owns its files in `area` (seed 000: downloads/ and
 * work/ hold only unfinished jobs' files; results/ holds what has a lifetime):
 * every active state keeps everything; `ready` keeps its results until it is expired.
 * `undefined` (no row) owns nothing.
 */
export function ownsFiles(job: Pick<FileJob, "status"> | undefined, area: Area): boolean {
  if (!job) return false;
  return isActive(job.status) || (area === "results" && job.status === "ready");
}

/**
 * Runs the database-wide part of a pass unless another process runs it now (issue 14 item 3: with
 * PostgreSQL a session advisory lock across hosts, bot/open-store.ts `once`); default: always runs.
 */
export type GlobalOnce = <T>(fn: () => Promise<T>) => Promise<{ ran: true; value: T } | { ran: false }>;

/** One janitor; `runOnce()` and `erase()` are safe to call concurrently with the pools. */
export class Janitor {
  constructor(
    private readonly store: JobStore,
    private readonly paths: DataPaths,
    private readonly log: Logger,
    private readonly options: JanitorOptions,
    private readonly now: () => number = Date.now,
    private readonly globalOnce: GlobalOnce = async (fn) => ({ ran: true, value: await fn() }),
  ) {}

  /**
   * Erase a job's files now and keep the row as `expired` (/delete N, expiry): commit
   * `ready|failed → expired` first, then delete the files, unless the re-read row shows
   * the job live again (re-armed by a re-sent file). Returns whether the job is expired.
   * @throws what the store throws; files are then untouched
   */
  async erase(job: FileJob): Promise<boolean> {
    const from = job.status === "ready" || job.status === "failed" ? job.status : null;
    const moved = from ? await this.store.expire(job.id, from, this.now()) : job.status === "expired";
    if (!moved) return false;
    const entries = [...(await jobEntries(this.paths.results, job.id)), ...(await jobEntries(this.paths.downloads, job.id)), ...(await jobEntries(this.paths.work, job.id))];
    const row = await this.store.get(job.id);
    if (row && row.status !== "expired") {
      this.log.info({ job: job.id, status: row?.status }, "job is live again; its files are kept");
      return false;
    }
    await removeEntries(entries);
    await this.store.releaseReservation(job.id);
    return true;
  }

  /**
   * One pass; see the module doc. Never throws for a single bad job or entry. Hosts share no disk
   * (issue 14 item 3): expiry, released reservations, dead leases and old replies are the database's
   * and run in one process at a time (`globalOnce`); the sweep of this host's own folders always runs.
   */
  async runOnce(): Promise<JanitorReport> {
    const now = this.now();
    const global = await this.globalOnce(() => this.databasePass(now));
    const counts = { orphansRemoved: 0, stalePartsRemoved: 0 };
    await this.sweep(this.paths.downloads, "temp", now, counts);
    await this.sweep(this.paths.work, "temp", now, counts);
    await this.sweep(this.paths.results, "results", now, counts);
    const report = { ...(global.ran ? global.value : { expired: 0, reservationsReleased: 0, deadLeases: 0, repliesPruned: 0 }), ...counts };
    this.log.info({ ...report, ...(global.ran ? {} : { database_part: "skipped: another process runs it now" }) }, "janitor pass");
    return report;
  }

  /** The database-wide part of a pass: expiry (files here too), finished jobs' budget, dead leases, old replies. */
  private async databasePass(now: number): Promise<Omit<JanitorReport, "orphansRemoved" | "stalePartsRemoved">> {
    let expired = 0;
    for (const job of await this.store.dueForExpiry(now)) {
      try {
        if (await this.erase(job)) {
          expired++;
          this.log.info({ job: job.id, file_unique_id: job.fileUniqueId }, "result expired; files deleted");
        }
      } catch (err) {
        this.log.warn({ job: job.id, err }, "janitor could not expire a job; its files are kept");
      }
    }

    let reservationsReleased = 0;
    let deadLeases = 0;
    for (const listed of await this.store.listByState(JOB_STATES)) {
      try {
        if (!isActive(listed.status) && listed.reservedBytes > 0) {
          // Files first, then the reservation (seed 000: the budget is freed once the temporary file is gone).
          const entries = [...(await jobEntries(this.paths.downloads, listed.id)), ...(await jobEntries(this.paths.work, listed.id))];
          if (ownsFiles(await this.store.get(listed.id), "temp")) continue;
          await removeEntries(entries);
          if (await this.store.releaseReservation(listed.id)) reservationsReleased++;
        } else if (isActive(listed.status) && isLongDead(listed, now, this.options.deadLeaseGraceMs)) {
          deadLeases++;
          this.log.warn({ job: listed.id, status: listed.status, lease_until: listed.leaseUntil, attempts: listed.attempts }, "lease expired long ago; the job is claimable again");
        }
      } catch (err) {
        this.log.warn({ job: listed.id, err }, "janitor could not release a job's budget");
      }
    }

    let repliesPruned = 0;
    try {
      repliesPruned = await this.store.pruneReplies(now - REPLY_KEEP_MS);
    } catch (err) {
      this.log.warn({ err }, "janitor could not prune old intake replies");
    }

    return { expired, reservationsReleased, deadLeases, repliesPruned };
  }

  /**
   * Remove the entries of `dir` no live job owns: foreign names, names of jobs with no
   * row, of jobs that no longer own files in `area`, and `.part` files not written for
   * `partMaxAgeMs` by a job without a live lease (an abandoned download even of a live job: its
   * mtime moves with every write).
   */
  private async sweep(dir: string, area: Area, now: number, counts: { orphansRemoved: number; stalePartsRemoved: number }): Promise<void> {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const full = join(dir, name);
      const id = jobIdOf(name);
      try {
        // The row as it is now (listed entry → re-read → delete), never the pass's snapshot.
        const job = id === null ? undefined : await this.store.get(id);
        if (name.endsWith(".part")) {
          // A leased job's worker is alive: keep its .part whatever its mtime (a local-mode hard link
          // keeps the Bot API server's older mtime while it is hashed).
          const stale = !(job && isLeased(job, now)) && now - (await stat(full)).mtimeMs > this.options.partMaxAgeMs;
          if (!ownsFiles(job, area) || stale) {
            await rm(full, { recursive: true, force: true });
            counts.stalePartsRemoved++;
          }
          continue;
        }
        if (ownsFiles(job, area)) continue;
        await rm(full, { recursive: true, force: true });
        counts.orphansRemoved++;
        this.log.info({ path: full, job: id, status: job?.status ?? null }, "orphan removed");
      } catch (err) {
        this.log.warn({ path: full, err }, "janitor could not inspect an entry");
      }
    }
  }
}
