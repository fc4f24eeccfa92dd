/**
 * Ending a try or a job: retry with backoff or `failed` with a reason, then the
 * files (database first, then the file system — seed 000: "Сначала в базе
 * фиксируется новое состояние, потом удаляется файл"), then the chat message.
 */
import type { FileJob, JobState } from "../db/schema.ts";
import { localeFor, t } from "../i18n/index.ts";
import { attemptStep } from "../jobs/attempts.ts";
import { decideAfterFailure, type TryFailure } from "../jobs/retry.ts";
import type { Services } from "../services.ts";
import { reasonText } from "../status/texts.ts";
import { removeJobFiles, type DataPaths } from "./paths.ts";

/** Shared end-of-try logic of both pools. */
export class Finisher {
  constructor(
    private readonly services: Omit<Services, "wake" | "cancel">,
    private readonly paths: DataPaths,
  ) {}

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
    const ok = await store.fail(job.id, state, owner, reason, decision.params, failure.detail, now());
    if (!ok) return "lost";
    this.services.metrics.jobsEnded.inc({ status: "failed", reason });
    jlog.warn({ reason, attempts: job.attempts, detail: failure.detail }, "job failed");
    const after = (await store.get(job.id)) ?? job;
    await this.cleanupFailed(after);
    return "failed";
  }

  /**
   * After `failed` is committed: remove the job's files and release its budget, then tell the chat.
   * The message goes out in the background: a worker never waits on a chat's pacing or 429 hold
   * (one chat's hold must not stall the pools; shutdown waits for it, bounded).
   */
  async cleanupFailed(job: FileJob): Promise<void> {
    const { store } = this.services;
    await this.removeTemp(job.id);
    await removeJobFiles(this.paths.results, job.id);
    await store.setReservation(job.id, 0);
    const locale = localeFor(job.languageCode);
    const params = job.reasonParams ? (JSON.parse(job.reasonParams) as Record<string, string | number>) : {};
    const text = t(locale, "status-failed", { id: String(job.id), reason: reasonText(locale, job.reason ?? "attempts_exhausted", params) });
    this.services.background(() => this.services.status.final(job, text), "final status message");
  }

  /** Remove the job's source and intermediates (`downloads/`, `work/`). */
  async removeTemp(jobId: number): Promise<void> {
    await removeJobFiles(this.paths.downloads, jobId);
    await removeJobFiles(this.paths.work, jobId);
  }

  /**
   * After `ready` is committed: remove source and intermediates, then release the job's budget
   * reservation (seed 000: the budget is freed once the temp files are gone, not before). A crash
   * in between leaves the reservation to the janitor, which releases it after its sweep.
   */
  async releaseAfterReady(jobId: number): Promise<void> {
    await this.removeTemp(jobId);
    await this.services.store.releaseReservation(jobId);
  }
}
