/**
 * Ending a try or a job: retry with backoff or `failed` with a reason, then the
 * files (database first, then the file system — seed 000: "Сначала в базе
 * фиксируется новое состояние, потом удаляется файл"), then the chat message.
 */
import type { FileJob, JobState } from "../db/schema.ts";
import { localeFor, t } from "../i18n/index.ts";
import { attemptStep } from "../jobs/attempts.ts";
import { decideAfterFailure, type TryFailure } from "../jobs/retry.ts";
import type { FinalStatus } from "../jobs/store.ts";
import type { Services } from "../services.ts";
import { reasonText } from "../status/texts.ts";
import { jobEntries, removeEntries, removeJobFiles, type DataPaths } from "./paths.ts";
import { PendingReleases } from "./releases.ts";

/** Whether `row` is still the failed row `committed` (the same failure: a re-arm clears `finished_at` and moves `updated_at`). */
function isSameFailedRow(row: FileJob, committed: FileJob): boolean {
  return row.status === "failed" && committed.status === "failed" && row.finishedAt === committed.finishedAt && row.updatedAt === committed.updatedAt;
}

/** Shared end-of-try logic of both pools. */
export class Finisher {
  /** The releases after `ready` this process owes, carried by its next claim (bot/worker/releases.ts). */
  readonly releases: PendingReleases;

  constructor(
    private readonly services: Omit<Services, "wake" | "cancel">,
    private readonly paths: DataPaths,
  ) {
    this.releases = new PendingReleases(services.store, services.log);
  }

  /**
   * Handle a failed try of `job` (found in `state`, leased by `owner`): retry
   * later when the failure is retryable and attempts remain, else `failed`.
   * @returns what happened
   */
  async onFailure(job: FileJob, state: JobState, owner: string, failure: TryFailure): Promise<"retry" | "failed" | "lost"> {
    const { store, config, log, now } = this.services;
    const jlog = log.child({ job: job.id, file_unique_id: job.fileUniqueId });
    const decision = decideAfterFailure(failure, job.attempts, config.maxAttempts, now());
    this.services.metrics.tryFailures.inc({ step: attemptStep(state, failure.reason), reason: failure.reason });
    if (decision.kind === "retry") {
      const ok = await store.retryLater(job.id, state, owner, decision.notBefore, failure, now());
      jlog.warn({ reason: failure.reason, attempt: job.attempts, max_attempts: config.maxAttempts, detail: failure.detail }, "try failed; will retry");
      if (ok) {
        this.services.status.update(job, t(localeFor(job.languageCode), "status-retrying", { id: String(job.id), attempt: job.attempts + 1, max: config.maxAttempts }));
      }
      return ok ? "retry" : "lost";
    }
    const reason = decision.reason;
    const ok = await store.fail(job.id, state, owner, reason, decision.params, failure.detail, now(), this.failedStatus(job, reason, decision.params));
    if (!ok) return "lost";
    this.services.metrics.jobsEnded.inc({ status: "failed", reason });
    jlog.warn({ reason, attempts: job.attempts, detail: failure.detail }, "job failed");
    const after = (await store.get(job.id)) ?? job;
    await this.cleanupFailed(after);
    return "failed";
  }

  /**
   * After `failed` is committed (`job` is that row, read back): remove the job's files and release its
   * budget, then tell the chat — only while the row is still the failed row that was committed (issue 11
   * item 5): a re-sent file may have re-armed the job meanwhile, and its new try's files and reservation
   * are not this failure's. The entries are listed before the row is read again, so files of a new try
   * (made later, under new generated names) are never among them. The message (recorded with the commit)
   * goes out in the background: a worker never waits on a chat's pacing or 429 hold.
   * @returns whether the failure was cleaned up (false: the job lives again; nothing touched)
   */
  async cleanupFailed(job: FileJob): Promise<boolean> {
    const { store, log } = this.services;
    const entries = (await Promise.all([this.paths.downloads, this.paths.work, this.paths.results].map((dir) => jobEntries(dir, job.id)))).flat();
    const row = await store.get(job.id);
    if (!row || !isSameFailedRow(row, job)) {
      log.info({ job: job.id, status: row?.status }, "the job lives again (a re-sent file) before its failure was cleaned up; its files are kept");
      return false;
    }
    await removeEntries(entries);
    await store.releaseReservation(job.id);
    // The chat's "failed" text was recorded with the commit; it is shown from that record.
    this.services.finals.deliver(job);
    return true;
  }

  /**
   * The final status to record with `failed` (JobStore.fail's `final`): "Job #N failed: <reason>" in the
   * job's language, held by this process (bot/status/finals.ts shows it once the commit is done).
   */
  failedStatus(job: FileJob, reason: string, params: Readonly<Record<string, string | number>>): FinalStatus {
    const locale = localeFor(job.languageCode);
    const text = t(locale, "status-failed", { id: String(job.id), reason: reasonText(locale, reason, { ...params }) });
    const { finals, now } = this.services;
    return { text, markup: null, owner: finals.owner, until: finals.holdUntil(now()) };
  }

  /** Remove the job's source and intermediates (`downloads/`, `work/`). */
  async removeTemp(jobId: number): Promise<void> {
    await removeJobFiles(this.paths.downloads, jobId);
    await removeJobFiles(this.paths.work, jobId);
  }

  /**
   * After `ready` is committed: remove source and intermediates, then release the job's budget
   * reservation (seed 000: the budget is freed once the temp files are gone, not before) — carried by
   * this process's next claim or hand-over, or written alone a tick later ({@link releases}). A crash
   * in between leaves the reservation to the janitor, which releases it after its sweep.
   */
  async releaseAfterReady(jobId: number): Promise<void> {
    await this.removeTemp(jobId);
    this.releases.add(jobId);
  }
}
