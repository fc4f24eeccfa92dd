/**
 * The download step of a multi-part job (issue 13 item 5: an album), `accepted → fetched`. Every part
 * keeps seed 000's rules for one file: its own `getFile` right before its own download (the fetcher
 * calls it), its own size checks (declared, getFile's, real bytes) and its own share of the budget —
 * the job's reservation is refined after each part from the parts on disk and the declared sizes of
 * the rest. A crash resumes per part: a part recorded `fetched` whose file is still there with its size
 * is kept, every other file of the job in downloads/ is removed and its part downloaded again.
 * A part that fails for good (too big, unavailable after the attempt budget, size mismatch) is marked
 * `failed` and named in the final message; a failure another try could fix (network) retries the job
 * like any download. A part that joins the album while it downloads is downloaded in its turn, with its
 * own getFile, checks and budget share. The job is `fetched` only when every part is on disk or failed
 * (checked by the store in the same transaction as the move), and fails when no part could be downloaded
 * (with the first part's reason).
 */
import { readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { downloadLimit } from "../config.ts";
import type { FileJob, JobPart } from "../db/schema.ts";
import { FetchError } from "../fetch/errors.ts";
import { partPath } from "../fetch/hash-copy.ts";
import { downloadDeadlineMs } from "../fetch/timeouts.ts";
import type { Fetcher } from "../fetch/types.ts";
import { localeFor, t } from "../i18n/index.ts";
import { sizeParts } from "../intake/format.ts";
import { refinedReservation } from "../jobs/budget.ts";
import { decideAfterFailure, type TryFailure } from "../jobs/retry.ts";
import { redactSecrets } from "../log.ts";
import type { Services } from "../services.ts";
import type { Finisher } from "./finisher.ts";
import { generatedName, jobIdOf, type DataPaths } from "./paths.ts";

/** Bytes the budget holds for an album: real sizes of the parts on disk, declared (or the mode limit) for the rest, × multiplier. */
export function albumReservation(parts: readonly JobPart[], modeLimit: number, multiplier: number, budget: number, floor: number): number {
  let bytes = 0;
  for (const p of parts) {
    if (p.status === "fetched") bytes += p.realSize ?? 0;
    else if (p.status === "accepted") bytes += p.declaredSize ?? modeLimit;
  }
  return refinedReservation(bytes, multiplier, budget, floor);
}

/** Downloads the parts of a claimed album job. */
export class AlbumDownload {
  constructor(
    private readonly services: Omit<Services, "wake" | "cancel">,
    private readonly paths: DataPaths,
    private readonly fetcher: Fetcher,
    private readonly finisher: Finisher,
    private readonly owner: string,
  ) {}

  /**
   * Keep the parts already on disk (resume rule, per part) and remove every other file of the job
   * from downloads/; a `fetched` part whose file is gone or changed size goes back to `accepted`.
   */
  private async resume(job: FileJob, parts: JobPart[]): Promise<JobPart[]> {
    const keep = new Set<string>();
    const out: JobPart[] = [];
    for (const p of parts) {
      if (p.status === "fetched" && p.localPath) {
        const size = await stat(p.localPath).then((s) => s.size, () => -1);
        if (size === p.realSize) {
          keep.add(p.localPath);
          out.push(p);
          continue;
        }
        await this.services.store.resetPart(job.id, p.messageId, this.owner);
        out.push({ ...p, status: "accepted", localPath: null, sha256: null, realSize: null });
        continue;
      }
      out.push(p);
    }
    const names = await readdir(this.paths.downloads).catch(() => [] as string[]);
    for (const name of names) {
      const path = join(this.paths.downloads, name);
      if (jobIdOf(name) === job.id && !keep.has(path)) await rm(path, { recursive: true, force: true });
    }
    return out;
  }

  /**
   * Download every part still `accepted`, in album order, including parts that join the album while it
   * downloads (docs/processors.md "Albums": the parts are read again after each one, and the job moves
   * to `fetched` only when the store finds no part left to download — `JobStore.albumFetched`). Each
   * part first gets its budget share: a share that grows (a part joined) is reserved only if it fits
   * (`JobStore.reservePart`), else the job goes back to wait for the budget with its parts on disk kept.
   * Never throws for classified failures.
   * @returns the outcome: `fetched` (moved on), `retry`/`failed`/`lost` (the finisher or the store handled the job; `retry` also when it waits for the budget), `stopped` (aborted)
   */
  async run(job: FileJob, controller: AbortController): Promise<"fetched" | "retry" | "failed" | "lost" | "stopped"> {
    const { store, config, log, now, status } = this.services;
    const jlog = log.child({ job: job.id, file_unique_id: job.fileUniqueId });
    const locale = localeFor(job.languageCode);
    const limit = downloadLimit(config);
    const share = (parts: readonly JobPart[]) => albumReservation(parts, limit, config.budgetMultiplier, config.downloadBudget, config.budgetMinReservation);
    let parts = await this.resume(job, await store.parts(job.id));
    let reserved = job.reservedBytes;
    for (;;) {
      const i = parts.findIndex((p) => p.status === "accepted");
      if (i < 0) {
        const outcome = await this.finish(job, parts, jlog);
        if (outcome !== "parts_pending") return outcome;
        // A part joined after the last one was read: download it too.
        parts = await store.parts(job.id);
        continue;
      }
      // This part's share of the budget: what is on disk plus every part still to come.
      const need = share(parts);
      if (need > reserved) {
        const onDisk = share(parts.filter((p) => p.status !== "accepted"));
        const r = await store.reservePart(job.id, this.owner, need, onDisk, config.downloadBudget);
        if (r === "lost") {
          jlog.warn("job moved by someone else before a part's download");
          return "lost";
        }
        if (r === "yielded") {
          jlog.info({ need, reserved }, "a part joined the album and its share does not fit the budget now: the job waits for the budget, its parts on disk kept");
          return "retry";
        }
      } else if (need < reserved) {
        await store.setReservationIf(job.id, this.owner, need);
      }
      reserved = need;
      const part = parts[i]!;
      status.update(job, t(locale, "status-downloading-part", { id: String(job.id), part: i + 1, parts: parts.length }));
      const dest = join(this.paths.downloads, generatedName(job.id));
      try {
        const file = await this.fetcher({
          jobId: job.id,
          fileId: part.fileId,
          declaredSize: part.declaredSize,
          destPath: dest,
          limit,
          signal: controller.signal,
          idleTimeoutMs: config.downloadIdleTimeoutMs,
          deadlineMs: downloadDeadlineMs(part.declaredSize ?? limit, config.downloadTimeoutMs, config.downloadMinSpeed),
        });
        if (!(await store.markPartFetched(job.id, part.messageId, this.owner, { localPath: file.path, sha256: file.sha256, realSize: file.size }))) {
          jlog.warn({ part: i + 1 }, "job moved by someone else during a part's download; discarding the file");
          await removeTry(dest);
          return "lost";
        }
        jlog.info({ part: i + 1, parts: parts.length, size: file.size, sha256: file.sha256 }, "album part fetched");
      } catch (err) {
        await removeTry(dest);
        if (controller.signal.aborted) {
          jlog.info({ why: String(controller.signal.reason) }, "download stopped");
          return "stopped";
        }
        const failure: TryFailure =
          err instanceof FetchError ? err.failure : { reason: "download_failed", retryable: true, detail: redactSecrets(String(err), config.token) };
        const decision = decideAfterFailure(failure, job.attempts, config.maxAttempts, now());
        if (decision.kind === "retry") {
          // Another try may fix it (network, an expired link): the whole job waits; parts on disk are kept.
          const outcome = await this.finisher.onFailure(job, "accepted", this.owner, failure);
          if (outcome === "retry") await store.setReservationIf(job.id, null, share(await store.parts(job.id)));
          return outcome;
        }
        // Final for this part: it is left out and named; the rest still makes the output.
        await store.failPart(job.id, part.messageId, this.owner, decision.reason, decision.params, failure.detail);
        jlog.warn({ part: i + 1, reason: decision.reason, detail: failure.detail }, "album part left out");
      }
      // Read the parts again: one may have joined the album meanwhile (it is downloaded in its turn).
      parts = await store.parts(job.id);
    }
  }

  /**
   * Every known part is on disk or left out: `fetched` unless a part joined meanwhile (`parts_pending`);
   * no part on disk at all: the job fails with the first part's reason.
   */
  private async finish(job: FileJob, parts: readonly JobPart[], jlog: Services["log"]): Promise<"fetched" | "parts_pending" | "retry" | "failed" | "lost"> {
    const { store, config, now, status } = this.services;
    const locale = localeFor(job.languageCode);
    const fetched = parts.filter((p) => p.status === "fetched");
    if (fetched.length === 0) {
      // Read once more: a part that joined in the meantime would make the album after all.
      const fresh = await store.parts(job.id);
      if (fresh.some((p) => p.status === "accepted")) return "parts_pending";
      const first = fresh.find((p) => p.status === "failed");
      const params = first?.reasonParams ? (JSON.parse(first.reasonParams) as Record<string, string | number>) : {};
      return this.finisher.onFailure(job, "accepted", this.owner, {
        reason: (first?.reason as TryFailure["reason"] | undefined) ?? "download_failed",
        retryable: false,
        params,
        detail: `no part of the album could be downloaded (${fresh.length} parts)`,
      });
    }
    const bytes = fetched.reduce((n, p) => n + (p.realSize ?? 0), 0);
    const moved = await store.albumFetched(job.id, this.owner, now(), {
      realSize: bytes,
      reservedBytes: refinedReservation(bytes, config.budgetMultiplier, config.downloadBudget, config.budgetMinReservation),
      resetAttempts: true,
    });
    if (moved === "parts_pending") return moved;
    if (moved === "lost") {
      jlog.warn("job moved by someone else during download");
      return "lost";
    }
    jlog.info({ parts: parts.length, fetched: fetched.length, size: bytes }, "fetched");
    const position = (await store.queuePosition(job.id)) ?? 0;
    const size = sizeParts(bytes);
    status.update(job, t(locale, "status-fetched", { id: String(job.id), size: t(locale, size.key, { n: size.n }), position }));
    return "fetched";
  }
}

/** Remove one try's files: the final name and its `.part` (absent ones are fine). */
async function removeTry(dest: string): Promise<void> {
  await rm(partPath(dest), { force: true });
  await rm(dest, { force: true });
}
