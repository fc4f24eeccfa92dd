/**
 * The download step, `accepted → fetched` (seed 000 resume rule for `accepted`:
 * delete the `.part`, new getFile, download again). The reservation made at claim
 * is refined from the real size once the file is on disk. When a processing loop of
 * this process is free, the same write also takes the processing claim
 * (`JobStore.handOver`): the host that holds the file processes it, and no other host
 * downloads it again (issue 14 item 8).
 *
 * Ownership of files: at claim this worker holds the lease, so whatever earlier
 * tries left in downloads/ is removed. After that it only ever removes its own
 * try's files (`dest`, `dest.part`): a worker that lost its lease must not touch the
 * next holder's download or reservation (audit M7). A failed try commits its state
 * first and removes files second (seed 000: "Сначала в базе фиксируется новое
 * состояние, потом удаляется файл").
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { downloadLimit } from "../config.ts";
import type { FileJob } from "../db/schema.ts";
import { FetchError } from "../fetch/errors.ts";
import { partPath } from "../fetch/hash-copy.ts";
import { downloadDeadlineMs } from "../fetch/timeouts.ts";
import type { Fetcher } from "../fetch/types.ts";
import { localeFor, t } from "../i18n/index.ts";
import { sizeParts } from "../intake/format.ts";
import { refinedReservation, writtenMultiplier } from "../jobs/budget.ts";
import type { Services } from "../services.ts";
import { redactSecrets } from "../log.ts";
import { timed } from "../ops/metrics.ts";
import type { Finisher } from "./finisher.ts";
import { keepLease, type LeaseKeepers } from "./lease-keeper.ts";
import { AlbumDownload } from "./album-download.ts";
import { generatedName, removeJobFiles, type DataPaths } from "./paths.ts";
import type { ProcessClaim } from "../jobs/store.ts";

/**
 * A processing loop of this process reserved for the job just downloaded (bot/worker/engine.ts): it
 * waits for exactly one of `give` (the hand-over committed: process this claim) or `release`.
 */
export interface ProcessSlot {
  /**
   * Process `claim` under the download's own `controller`: a /cancel that aborted it between the
   * hand-over's commit and the processing loop taking the job still stops the processing.
   */
  give(claim: ProcessClaim, controller: AbortController): void;
  release(): void;
}

/** Remove one try's files: the final name and its `.part` (absent ones are fine). */
async function removeTry(dest: string): Promise<void> {
  await rm(partPath(dest), { force: true });
  await rm(dest, { force: true });
}

/** Runs one download try of a claimed `accepted` job. */
export class DownloadStep {
  private readonly album: AlbumDownload;

  constructor(
    private readonly services: Omit<Services, "wake" | "cancel">,
    private readonly paths: DataPaths,
    private readonly fetcher: Fetcher,
    private readonly finisher: Finisher,
    private readonly owner: string,
    private readonly wake: () => void,
    private readonly offerSlot: () => Promise<ProcessSlot | null> = async () => null,
    /** The process's lease keepers (bot/worker/lease-keeper.ts `LeaseKeepers`): this step's keeper joins them. */
    private readonly keepers?: LeaseKeepers,
  ) {
    this.album = new AlbumDownload(services, paths, fetcher, finisher, owner);
  }

  /**
   * Download `job` (claimed by this worker); never throws for classified failures.
   * @returns `handed` when a processing loop of this process took the job over with `controller`
   */
  async run(job: FileJob, controller: AbortController): Promise<"handed" | undefined> {
    const { store, config, log, now, status } = this.services;
    const jlog = log.child({ job: job.id, file_unique_id: job.fileUniqueId });
    const lease = keepLease(store, job.id, this.owner, job.leaseUntil!, config.leaseTtlMs, now, controller, log, this.keepers);
    const locale = localeFor(job.languageCode);
    const dest = join(this.paths.downloads, generatedName(job.id));
    const limit = downloadLimit(config);
    if (job.source === "album") {
      // A multi-part job downloads part by part (bot/worker/album-download.ts).
      try {
        if ((await this.album.run(job, controller)) === "fetched") this.wake();
      } finally {
        lease.stop();
      }
      return;
    }
    try {
      // Resume rule: whatever a previous try left in downloads/ is not trusted (this worker holds the lease now).
      await removeJobFiles(this.paths.downloads, job.id);
      // Progress is worth showing only for files that take a while (≥ 2 MB or unknown size).
      const showProgress = job.declaredSize === null || job.declaredSize >= 2 * 1024 * 1024;
      let lastShown = -1;
      if (showProgress) status.update(job, t(locale, "status-downloading", { id: String(job.id), percent: 0 }));
      const started = now();
      const file = await timed(this.services.metrics, "download", now, () => this.fetcher({
        jobId: job.id,
        fileId: job.fileId,
        declaredSize: job.declaredSize,
        destPath: dest,
        limit,
        signal: controller.signal,
        idleTimeoutMs: config.downloadIdleTimeoutMs,
        deadlineMs: downloadDeadlineMs(job.declaredSize ?? limit, config.downloadTimeoutMs, config.downloadMinSpeed),
        onProgress: (bytes, total) => {
          if (!total || !showProgress) return;
          const pct = Math.min(100, Math.floor((bytes / total) * 10) * 10);
          if (pct > lastShown) {
            lastShown = pct;
            status.update(job, t(locale, "status-downloading", { id: String(job.id), percent: pct }));
          }
        },
      }));
      const reservation = refinedReservation(file.size, writtenMultiplier(config.budgetMultiplier, config.mode), config.downloadBudget, config.budgetMinReservation, job.reservedBytes);
      // A free processing slot here: this host, which holds the file, processes it (one write, no
      // queue position to show, nobody else to wake).
      const slot = await this.offerSlot();
      if (slot) {
        let claim: ProcessClaim | null = null;
        try {
          const source = { localPath: file.path, sha256: file.sha256, realSize: file.size, reservedBytes: reservation };
          claim = await this.finisher.releases.carry((release) => store.handOver(job.id, this.owner, now(), config.leaseTtlMs, source, release));
        } finally {
          if (claim) slot.give(claim, controller);
          else slot.release();
        }
        if (!claim) {
          jlog.warn("job moved by someone else during download; discarding the file");
          await removeTry(dest);
          return;
        }
        jlog.info({ size: file.size, sha256: file.sha256, ms: now() - started, handed_over: true }, "fetched");
        return "handed";
      }
      const moved = await store.transition(job.id, "accepted", "fetched", this.owner, now(), {
        localPath: file.path,
        sha256: file.sha256,
        realSize: file.size,
        reservedBytes: reservation,
        resetAttempts: true,
      });
      if (!moved) {
        jlog.warn("job moved by someone else during download; discarding the file");
        await removeTry(dest);
        return;
      }
      jlog.info({ size: file.size, sha256: file.sha256, ms: now() - started }, "fetched");
      this.wake();
      const position = (await store.queuePosition(job.id)) ?? 0;
      const size = sizeParts(file.size);
      status.update(job, t(locale, "status-fetched", { id: String(job.id), size: t(locale, size.key, { n: size.n }), position }));
    } catch (err) {
      if (controller.signal.aborted) {
        // Lease lost, /cancel or shutdown: whoever moved the job owns its row; only this try's files go.
        jlog.info({ why: String(controller.signal.reason) }, "download stopped");
        await removeTry(dest);
        return;
      }
      const failure =
        err instanceof FetchError
          ? err.failure
          : { reason: "download_failed" as const, retryable: true, detail: redactSecrets(String(err), config.token) };
      // Database first (retry later or failed), then this try's files, then the budget of a job nobody holds.
      const outcome = await this.finisher.onFailure(job, "accepted", this.owner, failure);
      await removeTry(dest);
      if (outcome === "retry") await store.setReservationIf(job.id, null, 0);
    } finally {
      lease.stop();
    }
  }
}
