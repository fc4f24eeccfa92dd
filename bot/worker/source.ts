/**
 * The source of a job in `fetched` or `processing`, verified before processing (seed 000, resume rule
 * for `fetched`: "проверить, что он на месте и контрольная сумма совпадает") and fetched again when it
 * is gone or changed. In local mode the source is the Bot API server's file, read in place, and the
 * server keeps it only about an hour after getFile (botapi-facts.md §1); in cloud mode it is docket's
 * own file in downloads/. Either way a missing or changed source is not a failure: the step does what
 * the seed prescribes for a download — a new getFile, the same checks — records the new source and
 * goes on (issue 16; issue 11 item 5, "downloaded again from the file_id"). The user is told nothing.
 * Never a silent mismatch: when a local server's getFile names again the very file whose SHA-256
 * changed, the job ends `file_not_readable` with an operator line.
 */
import { join } from "node:path";
import { downloadLimit } from "../config.ts";
import type { FileJob } from "../db/schema.ts";
import { FetchError } from "../fetch/errors.ts";
import { readInPlace, SourceError } from "../fetch/in-place.ts";
import { downloadDeadlineMs } from "../fetch/timeouts.ts";
import type { Fetcher } from "../fetch/types.ts";
import type { TryFailure } from "../jobs/retry.ts";
import type { Services } from "../services.ts";
import { generatedName, removeJobFiles, type DataPaths } from "./paths.ts";

/** What {@link SourceKeeper.ensure} found: the job with a verified source, or why this try ends. */
export type SourceOutcome = { readonly job: FileJob } | { readonly failure: TryFailure } | { readonly lost: true };

/** Verifies a job's source and fetches it again when the seed's resume rule says so. */
export class SourceKeeper {
  constructor(
    private readonly services: Omit<Services, "wake" | "cancel">,
    private readonly paths: DataPaths,
    private readonly fetcher: Fetcher,
    private readonly owner: string,
  ) {}

  /** The directory a recorded source must be inside: the server's dir (local) or downloads/ (cloud). */
  private root(): string {
    const { config } = this.services;
    return config.mode === "local" ? config.localBotApiDir : this.paths.downloads;
  }

  /**
   * Check the job's recorded source as the download read it (bot/fetch/in-place.ts: a regular file
   * inside its directory, the recorded size before any byte is read, then the SHA-256); fetch it again
   * when it is missing, changed or no longer readable as recorded. A filesystem call past its deadline
   * is a retryable failure (the next try looks again).
   * @returns the job (with the new source when fetched again), a failure for the finisher, or `lost`
   *   when the row moved meanwhile
   * @throws the signal's reason when `signal` aborts (lease lost, /cancel, shutdown)
   */
  async ensure(job: FileJob, state: "fetched" | "processing", signal: AbortSignal): Promise<SourceOutcome> {
    const { config, log } = this.services;
    if (!job.localPath) return { failure: { reason: "download_failed", retryable: false, detail: "no source path recorded" } };
    let why: string;
    try {
      const seen = await readInPlace(job.localPath, {
        root: this.root(),
        callMs: config.downloadIdleTimeoutMs,
        signal,
        opened: (size) => {
          if (job.realSize !== null && size !== job.realSize) throw new SourceError("changed", `size ${size} B, recorded ${job.realSize} B`);
        },
      });
      if (!job.sha256 || seen.sha256 === job.sha256) return { job };
      why = "SHA-256 differs from the recorded one";
    } catch (err) {
      if (signal.aborted) throw err;
      if (err instanceof SourceError && err.fault === "stalled") return { failure: { reason: "download_failed", retryable: true, detail: `source check: ${err.detail}` } };
      why = err instanceof SourceError ? `${err.fault}: ${err.detail}` : String(err);
    }
    log.warn({ job: job.id, path: job.localPath, why }, "the source is gone or changed; fetching it again from the file_id (new getFile)");
    return await this.refetch(job, state, signal);
  }

  /** A new getFile and the download's checks; the new source recorded on the row (its state and lease kept). */
  private async refetch(job: FileJob, state: "fetched" | "processing", signal: AbortSignal): Promise<SourceOutcome> {
    const { config, store, now, log } = this.services;
    const limit = downloadLimit(config);
    // Cloud: the old file in downloads/ is not trusted any more (this worker holds the lease).
    await removeJobFiles(this.paths.downloads, job.id);
    let file;
    try {
      file = await this.fetcher({
        jobId: job.id,
        fileId: job.fileId,
        declaredSize: job.declaredSize,
        destPath: join(this.paths.downloads, generatedName(job.id)),
        limit,
        signal,
        idleTimeoutMs: config.downloadIdleTimeoutMs,
        deadlineMs: downloadDeadlineMs(job.declaredSize ?? limit, config.downloadTimeoutMs, config.downloadMinSpeed),
      });
    } catch (err) {
      if (signal.aborted || !(err instanceof FetchError)) throw err;
      return { failure: err.failure };
    }
    if (job.sha256 && job.sha256 !== file.sha256 && file.path === job.localPath) {
      // The local server named the very file that failed the check: its copy is damaged, and a new getFile cannot help.
      log.error({ job: job.id, path: file.path, was: job.sha256, now: file.sha256 }, "the local Bot API file changed after getFile and getFile names it again; the server's copy is damaged (remove it so the server downloads it again)");
      return { failure: { reason: "file_not_readable", retryable: false, detail: "the server's file changed after getFile (SHA-256 differs) and getFile names it again" } };
    }
    if (!(await store.replaceSource(job.id, state, this.owner, now(), { localPath: file.path, sha256: file.sha256, realSize: file.size }))) return { lost: true };
    if (job.sha256 && job.sha256 !== file.sha256) log.warn({ job: job.id, was: job.sha256, now: file.sha256 }, "the source fetched again has another SHA-256 than the first download; processing the new one");
    log.info({ job: job.id, path: file.path, size: file.size }, "source fetched again");
    return { job: { ...job, localPath: file.path, sha256: file.sha256, realSize: file.size } };
  }
}
