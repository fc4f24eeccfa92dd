/**
 * The download step, `accepted → fetched` (seed 000 resume rule for `accepted`:
 * delete the `.part`, new getFile, download again). The reservation made at claim
 * is refined from the real size once the file is on disk.
 */
import { join } from "node:path";
import { downloadLimit } from "../config.ts";
import type { FileJob } from "../db/schema.ts";
import { FetchError } from "../fetch/errors.ts";
import type { Fetcher } from "../fetch/types.ts";
import { localeFor, t } from "../i18n/index.ts";
import { sizeParts } from "../intake/format.ts";
import { refinedReservation } from "../jobs/budget.ts";
import type { Services } from "../services.ts";
import { redactSecrets } from "../log.ts";
import type { Finisher } from "./finisher.ts";
import { keepLease } from "./lease-keeper.ts";
import { generatedName, removeJobFiles, type DataPaths } from "./paths.ts";

/** Runs one download try of a claimed `accepted` job. */
export class DownloadStep {
  constructor(
    private readonly services: Omit<Services, "wake" | "cancel">,
    private readonly paths: DataPaths,
    private readonly fetcher: Fetcher,
    private readonly finisher: Finisher,
    private readonly owner: string,
    private readonly wake: () => void,
  ) {}

  /** Download `job` (claimed by this worker); never throws for classified failures. */
  async run(job: FileJob, controller: AbortController): Promise<void> {
    const { store, config, log, now, status } = this.services;
    const jlog = log.child({ job: job.id, file_unique_id: job.fileUniqueId });
    const lease = keepLease(store, job.id, this.owner, job.leaseUntil!, config.leaseTtlMs, now, controller, log);
    const locale = localeFor(job.languageCode);
    try {
      // Resume rule: whatever a previous try left in downloads/ is not trusted.
      await removeJobFiles(this.paths.downloads, job.id);
      const dest = join(this.paths.downloads, generatedName(job.id));
      // Progress is worth showing only for files that take a while (≥ 2 MB or unknown size).
      const showProgress = job.declaredSize === null || job.declaredSize >= 2 * 1024 * 1024;
      let lastShown = -1;
      if (showProgress) status.update(job, t(locale, "status-downloading", { id: String(job.id), percent: 0 }));
      const started = now();
      const file = await this.fetcher({
        jobId: job.id,
        fileId: job.fileId,
        declaredSize: job.declaredSize,
        destPath: dest,
        limit: downloadLimit(config),
        signal: controller.signal,
        onProgress: (bytes, total) => {
          if (!total || !showProgress) return;
          const pct = Math.min(100, Math.floor((bytes / total) * 10) * 10);
          if (pct > lastShown) {
            lastShown = pct;
            status.update(job, t(locale, "status-downloading", { id: String(job.id), percent: pct }));
          }
        },
      });
      const reservation = refinedReservation(file.size, config.budgetMultiplier, config.downloadBudget, config.budgetMinReservation);
      const moved = await store.transition(job.id, "accepted", "fetched", this.owner, now(), {
        localPath: file.path,
        sha256: file.sha256,
        realSize: file.size,
        reservedBytes: reservation,
        resetAttempts: true,
      });
      if (!moved) {
        jlog.warn("job moved by someone else during download; discarding the file");
        await this.finisher.removePath(file.path);
        return;
      }
      jlog.info({ size: file.size, sha256: file.sha256, ms: now() - started }, "fetched");
      this.wake();
      const position = (await store.queuePosition(job.id)) ?? 0;
      const size = sizeParts(file.size);
      status.update(job, t(locale, "status-fetched", { id: String(job.id), size: t(locale, size.key, { n: size.n }), position }));
    } catch (err) {
      if (controller.signal.aborted) {
        jlog.info({ why: String(controller.signal.reason) }, "download stopped");
        await removeJobFiles(this.paths.downloads, job.id);
        return;
      }
      const failure =
        err instanceof FetchError
          ? err.failure
          : { reason: "download_failed" as const, retryable: true, detail: redactSecrets(String(err), config.token) };
      await removeJobFiles(this.paths.downloads, job.id);
      await store.setReservation(job.id, 0); // its files are gone: release the budget
      await this.finisher.onFailure(job, "accepted", this.owner, failure);
    } finally {
      lease.stop();
    }
  }
}
