/**
 * The processing step, `processing → ready` for a job the processing claim found in `fetched` or
 * `processing` and moved to `processing` (JobStore.claimProcess, or handOver by the host that just
 * downloaded it), resumed by the state it was found in (seed 000 resume rules:
 * `fetched` — verify presence and SHA-256; `processing` — discard intermediates
 * and redo from the source; a source gone or changed is fetched again, bot/worker/source.ts). The result-size check runs before `ready`; results
 * are sent, their `file_id`s stored, `ready` committed with `result_expires_at`,
 * and only then the source is deleted and the chat told "done".
 */
import { mkdir } from "node:fs/promises";
import { extname, join } from "node:path";
import { GrammyError } from "grammy";
import { uploadLimit } from "../config.ts";
import { createHash } from "node:crypto";
import { stat } from "node:fs/promises";
import type { FileJob, JobPart } from "../db/schema.ts";
import type { ProcessClaim } from "../jobs/store.ts";
import { localeFor, t } from "../i18n/index.ts";
import { utcMinute } from "../intake/format.ts";
import { iso } from "../jobs/lease.ts";
import { resumeStep } from "../jobs/states.ts";
import type { TryFailure } from "../jobs/retry.ts";
import type { FinalStatus } from "../jobs/store.ts";
import type { InlineKeyboardMarkup } from "grammy/types";
import { isReasonCode } from "../jobs/reasons.ts";
import type { Services } from "../services.ts";
import { factsSummary, localizedLabel } from "../status/texts.ts";
import { redactSecrets } from "../log.ts";
import { timed } from "../ops/metrics.ts";
import { ProcessingError, type Facts, type ProcessorResult } from "../../processors/types.ts";
import { checkOutputSizes } from "../../processors/output-size.ts";
import { isRetryableProcessingFailure } from "../../processors/retry-policy.ts";
import type { Finisher } from "./finisher.ts";
import { actionKeyboard, SEARCHABLE } from "../actions/keyboard.ts";
import { actionSource } from "../actions/source.ts";
import { keepLease, type LeaseKeepers } from "./lease-keeper.ts";
import { moveFile } from "./move.ts";
import type { SourceKeeper } from "./source.ts";
import { generatedName, removeJobFiles, type DataPaths } from "./paths.ts";
import type { ProcessRunner } from "./types.ts";
import type { OcrState } from "./ocr-state.ts";
import type { OcrFacts } from "../../processors/ocr/types.ts";

/** Memory added to PROCESS_MEMORY_MB per concurrent Tesseract of a recognizing job, MB (measured peak ≈ 80 MB per A4 page). */
export const TESSERACT_ALLOWANCE_MB = 256;

/**
 * `facts.failedParts` of an album with the parts left out before processing (at intake: too big, the
 * daily quota; at download) added, in album order (processors/parts/build-pdf.ts `FailedPart`: position,
 * declared name, reason and its params); `facts.parts` then counts every part of the album, as the
 * final message says ("one PDF of 2 pages from 3 files; file 3 … was left out").
 */
export function withDownloadFailures(facts: Facts, parts: ReadonlyArray<JobPart & { n: number }>): Facts {
  const atDownload = parts
    .filter((p) => p.status === "failed")
    .map((p) => ({ part: p.n, name: p.declaredName, reason: p.reason ?? "download_failed", params: p.reasonParams ? (JSON.parse(p.reasonParams) as Record<string, string | number>) : {} }));
  if (atDownload.length === 0) return facts;
  const processing = Array.isArray(facts.failedParts) ? (facts.failedParts as Array<{ part: number }>) : [];
  return { ...facts, parts: parts.length, failedParts: [...atDownload, ...processing].sort((a, b) => a.part - b.part) };
}

/** The name the source is shown with when it is sent back as it is (a compression that was not smaller). */
function originalName(job: FileJob): string {
  return job.declaredName ?? `document-${job.id}.pdf`;
}

/** Hex SHA-256 of a file, read as a stream. */
async function fileSha256(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of Bun.file(path).stream()) hash.update(chunk);
  return hash.digest("hex");
}

/** Runs one processing try of a claimed `fetched` or `processing` job. */
export class ProcessStep {
  constructor(
    private readonly services: Omit<Services, "wake" | "cancel">,
    private readonly paths: DataPaths,
    private readonly runner: ProcessRunner,
    private readonly finisher: Finisher,
    private readonly owner: string,
    private readonly source: SourceKeeper,
    private readonly ocr?: OcrState,
    /** The process's lease keepers (bot/worker/lease-keeper.ts `LeaseKeepers`): this step's keeper joins them. */
    private readonly keepers?: LeaseKeepers,
  ) {}

  /**
   * Process and deliver the claimed job (`processing` under this worker's lease, found in `claim.found`);
   * never throws for classified failures.
   * @param handOff when given, delivery (uploads that may wait out a chat's 429 hold or pacing, then
   *   the `ready` commit) continues as `tail` after `run` returns, so one chat's hold never keeps a
   *   processing slot from other chats' jobs; the lease is kept until the tail ends. Without it,
   *   `run` delivers before returning.
   */
  async run(claim: ProcessClaim, controller: AbortController, handOff?: (tail: Promise<void>) => void): Promise<void> {
    const { store, config, log, now, status } = this.services;
    const claimed = claim.job;
    const jlog = log.child({ job: claimed.id, file_unique_id: claimed.fileUniqueId });
    const lease = keepLease(store, claimed.id, this.owner, claimed.leaseUntil!, config.leaseTtlMs, now, controller, log, this.keepers);
    const locale = localeFor(claimed.languageCode);
    let job = claimed;
    // The claim moved the job to `processing` (JobStore.claimProcess / handOver); every conditional write names that state.
    const state = "processing";
    let largestOutput = 0;
    let handedOff = false;
    try {
      // A job handed over under an already aborted controller (/cancel right after the hand-over) stops here.
      controller.signal.throwIfAborted();
      // A multi-part job: its parts on disk, numbered by album position (a part left out keeps its number),
      // each verified (seed 000's resume rule per part); one file: a verified source, one gone or changed
      // is fetched again (bot/worker/source.ts).
      const album = job.source === "album" ? (await store.parts(job.id)).map((p, i) => ({ ...p, n: i + 1 })) : null;
      const parts = album ? album.filter((p) => p.status === "fetched") : null;
      if (parts) {
        const problem = await this.verifyParts(parts);
        if (problem) {
          await this.finisher.onFailure(job, state, this.owner, problem);
          return;
        }
      } else {
        const source = await this.source.ensure(job, state, controller.signal);
        if ("lost" in source) return;
        if ("failure" in source) {
          await this.finisher.onFailure(job, state, this.owner, source.failure);
          return;
        }
        job = source.job;
      }
      // Resume rule by the state the job was found in (seed 000): `fetched` → verified above, may be
      // reused, then processed; `processing` → intermediates are invalid, redo from the source.
      if (resumeStep(claim.found) === "verify" && (await this.tryReuse(job, controller.signal))) return;
      await removeJobFiles(this.paths.work, job.id);
      const workDir = join(this.paths.work, generatedName(job.id));
      await mkdir(workDir, { recursive: true, mode: 0o750 });
      status.update(job, t(locale, "status-processing", { id: String(job.id) }));
      const started = now();
      // Recognition (issue 13 §3) has its own total budget, OCR_TIMEOUT, on top of the wall clock.
      const ocr = this.ocr?.options(uploadLimit(config)) ?? null;
      const ran = await timed(this.services.metrics, "processing", now, () => this.runner(
        parts ? parts[0]!.localPath! : job.localPath!,
        {
          ...(ocr ? { ocr } : { ocrUnavailable: this.ocr !== undefined }),
          workDir,
          // A multi-part job: the parts on disk in album order become one PDF (processors/parts/).
          ...(parts ? { parts: parts.map((p) => ({ path: p.localPath!, name: p.declaredName, n: p.n })) } : {}),
          declaredName: job.declaredName,
          declaredMime: job.declaredMime,
          action: job.variant,
          maxInputPixels: config.maxInputPixels,
          maxOutputSide: config.maxOutputSide,
          maxPdfPages: config.maxPdfPages,
          maxFrames: config.maxFrames,
          pdfPageBudgetMs: config.pdfPageBudgetMs,
        },
        {
          timeoutMs: config.processTimeoutMs,
          memoryMb: config.processMemoryMb,
          // Only a job that reaches recognition gets OCR_TIMEOUT more and, since the cap counts the
          // child's whole process tree, an allowance per concurrent Tesseract (≈ 80 MB on an A4 page).
          ...(ocr ? { stageAllowance: { stage: "ocr", timeoutMs: config.ocrTimeoutMs, memoryMb: ocr.concurrency * TESSERACT_ALLOWANCE_MB } } : {}),
          signal: controller.signal,
          // "processing page n/N": the outbox collapses these to what the chat's rate allows.
          // The stage's first event (0 pages done) shows as "recognizing page 1/N".
          onProgress: (done, total, phase) =>
            status.update(job, t(locale, phase === "ocr" ? "status-recognizing-pages" : "status-processing-pages", { id: String(job.id), done: String(phase === "ocr" ? Math.max(1, done) : done), total: String(total) })),
          onPeakRss: (bytes) => this.services.metrics.childPeakRss.observe(bytes),
        },
      ));
      // Parts left out at download are named in the final message with those the processor left out.
      const result = album ? { ...ran, facts: withDownloadFailures(ran.facts, album) } : ran;
      jlog.info({ ms: now() - started, type: result.facts.type, outputs: result.outputs.length }, "processed");
      if (Array.isArray(result.facts.undecodedPages)) {
        // issue 13 §2: pdf.js only warns about an image it cannot decode; the operator must see it.
        jlog.warn({ pages: result.facts.undecodedPages, warnings: result.facts.imageWarnings }, "page images could not be decoded");
      }
      const ocrFacts = result.facts.ocr as OcrFacts | undefined;
      if (ocrFacts) jlog.info({ ...ocrFacts }, "pages recognized");
      if (ocrFacts?.failedDetail) jlog.warn({ pages: ocrFacts.failed, detail: ocrFacts.failedDetail }, "tesseract failed on some pages");
      this.services.metrics.processingSeconds.observe({ type: result.facts.type }, (now() - started) / 1000);
      // Result-size check before anything is sent (seed 000: a separate step before `ready`).
      checkOutputSizes(result.outputs, uploadLimit(config));
      largestOutput = Math.max(0, ...result.outputs.map((o) => o.size));
      await this.storeResults(job, result);
      const processed = job;
      const tail = (async () => {
        try {
          status.update(processed, t(locale, "status-sending", { id: String(processed.id) }));
          if (result.facts.notSmaller === true) {
            // Issue 15 item 4: a compression that is not smaller sends the original back by its file_id.
            await timed(this.services.metrics, "delivery", now, () => this.services.delivery.sendStored(processed, [{ idx: 0, telegramFileId: processed.fileId, fileName: originalName(processed) }], locale, controller.signal));
          } else await timed(this.services.metrics, "delivery", now, () => this.services.delivery.sendResults(processed, locale, controller.signal));
          await this.commitReady(processed, result.facts, processed.source === "photo");
        } catch (err) {
          await this.onError(processed, "processing", controller, err, largestOutput);
        } finally {
          lease.stop();
        }
      })();
      handedOff = true;
      if (handOff) handOff(tail);
      else await tail;
    } catch (err) {
      await this.onError(job, state, controller, err, largestOutput);
    } finally {
      if (!handedOff) lease.stop();
    }
  }

  /** A try ended by an error: stopped (cancel, shutdown, lost lease) or classified and handed to the finisher. */
  private async onError(job: FileJob, state: "fetched" | "processing", controller: AbortController, err: unknown, largestOutput: number): Promise<void> {
    const { store, log } = this.services;
    const jlog = log.child({ job: job.id, file_unique_id: job.fileUniqueId });
    if (controller.signal.aborted) {
      jlog.info({ why: String(controller.signal.reason) }, "processing stopped");
      // /cancel committed `failed` and cleaned up, possibly before this try created its work dir or
      // moved its outputs: remove what this try left. A live row (shutdown, lost lease) keeps its
      // files for the resume rules and the new lease holder.
      const row = await store.get(job.id);
      if (row && row.status === "failed") {
        await this.finisher.removeTemp(job.id);
        await removeJobFiles(this.paths.results, job.id);
      }
      return;
    }
    await this.finisher.onFailure(job, state, this.owner, this.classify(err, largestOutput, job.attempts));
  }

  /** {@link verifyPart} for every part of a multi-part job on disk (seed 000's resume rule, per part). */
  private async verifyParts(parts: readonly JobPart[]): Promise<TryFailure | null> {
    if (parts.length === 0) return { reason: "download_failed", retryable: false, detail: "no part of the album is on disk" };
    for (const p of parts) {
      const problem = await this.verifyPart(p);
      if (problem) return problem;
    }
    return null;
  }

  /** Check presence, size and SHA-256 of one part on disk (seed 000: resume rule for `fetched`). */
  private async verifyPart(job: Pick<JobPart, "localPath" | "realSize" | "sha256">): Promise<TryFailure | null> {
    if (!job.localPath) return { reason: "download_failed", retryable: false, detail: "no part path recorded" };
    try {
      const s = await stat(job.localPath);
      if (job.realSize !== null && s.size !== job.realSize) throw new Error(`size ${s.size} != ${job.realSize}`);
      if (job.sha256 && (await fileSha256(job.localPath)) !== job.sha256) throw new Error("SHA-256 mismatch");
      return null;
    } catch (err) {
      return { reason: "download_failed", retryable: false, detail: `album part on disk is missing or changed: ${String(err)}` };
    }
  }

  /**
   * Same SHA-256 as a live result in this chat: answer from it, no processing (seed 000).
   * `job` is already `processing` under this worker's lease. Each result is sent by the twin's
   * `file_id` and recorded on this job only once Telegram accepted it, so a failed re-send
   * never leaves a result marked as delivered. A `file_id` Telegram refuses (400) falls back
   * to processing the file.
   * @returns true when the job was answered (or moved by someone else), false to process it
   * @throws GrammyError/HttpError of a re-send other than 400 (the caller classifies; the
   *   resumed try processes the file and sends only what was not delivered)
   */
  private async tryReuse(job: FileJob, signal: AbortSignal): Promise<boolean> {
    const { store, now, log } = this.services;
    if (!job.sha256) return false;
    const twin = await store.findReadyBySha(job.chatId, job.sha256, job.variant, now(), job.id);
    if (!twin) return false;
    const results = await store.results(twin.id);
    if (results.length === 0 || results.some((r) => !r.telegramFileId)) return false;
    const locale = localeFor(job.languageCode);
    await store.putResults(job.id, results.map((r) => ({ idx: r.idx, path: "", fileName: r.fileName, mime: r.mime, size: r.size })));
    try {
      await this.services.delivery.sendStored(job, results, locale, signal, (idx, fileId) => store.setResultFileId(job.id, idx, fileId));
    } catch (err) {
      if (!(err instanceof GrammyError && err.error_code === 400)) throw err;
      log.warn({ job: job.id, twin: twin.id, detail: err.description }, "a stored file_id was refused; processing the file instead");
      return false;
    }
    const reusedText = t(locale, "status-ready-reused", { id: String(job.id), until: utcMinute(twin.resultExpiresAt!) });
    const ok = await store.transition(job.id, "processing", "ready", this.owner, now(), {
      resultExpiresAt: twin.resultExpiresAt,
      facts: twin.facts,
      detectedType: twin.detectedType,
      final: this.finalStatus(reusedText, undefined),
    });
    if (!ok) return true;
    this.services.metrics.jobsEnded.inc({ status: "ready", reason: "" });
    log.info({ job: job.id, twin: twin.id }, "same SHA-256 as a live result: reused without processing");
    await this.finisher.releaseAfterReady(job.id);
    await this.showFinal(job.id);
    return true;
  }

  /** Move outputs from work/ into results/ under generated names and record them. */
  private async storeResults(job: FileJob, result: ProcessorResult): Promise<void> {
    if (result.facts.notSmaller === true) {
      // The result is the source itself, by its Telegram file_id (nothing on disk).
      await this.services.store.putResults(job.id, [{ idx: 0, path: "", fileName: originalName(job), mime: "application/pdf", size: job.realSize ?? 0 }]);
      await this.services.store.setResultFileId(job.id, 0, job.fileId);
      return;
    }
    // A resumed try must not send again what an earlier try already delivered.
    const sentBefore = (await this.services.store.results(job.id)).filter((r) => r.telegramFileId);
    await removeJobFiles(this.paths.results, job.id);
    const dir = join(this.paths.results, generatedName(job.id));
    await mkdir(dir, { recursive: true, mode: 0o750 });
    const rows = [];
    for (const [idx, o] of result.outputs.entries()) {
      const dest = join(dir, `${idx}${extname(o.path)}`);
      await moveFile(o.path, dest);
      rows.push({ idx, path: dest, fileName: o.fileName, mime: o.mime, size: o.size });
    }
    await this.services.store.putResults(job.id, rows);
    for (const r of sentBefore) if (r.idx < rows.length) await this.services.store.setResultFileId(job.id, r.idx, r.telegramFileId!);
  }

  /**
   * Commit `ready` with its "Done" text recorded in the same UPDATE, then delete the source and
   * intermediates and release the budget, then show "Done" from its record (seed 000 order; a crash
   * after the commit leaves the record to the next process: bot/status/finals.ts).
   */
  private async commitReady(job: FileJob, facts: Facts, fromPhoto: boolean): Promise<void> {
    const { store, config, now, log } = this.services;
    const expiresAt = now() + config.resultTtlMs;
    const locale = localeFor(job.languageCode);
    let text = t(locale, "status-ready", { id: String(job.id), facts: factsSummary(locale, facts), until: utcMinute(expiresAt) });
    const mismatch = facts.mismatchInfo as { declaredExt?: string; actualLabel?: string } | undefined;
    if (mismatch?.declaredExt) {
      text += `\n${t(locale, "mismatch-note", { declared: mismatch.declaredExt, actual: localizedLabel(locale, mismatch.actualLabel ?? facts.label) })}`;
    }
    if (fromPhoto) text += `\n${t(locale, "photo-note")}`;
    // Issue 15 item 1: the actions that fit the result, as the final message's keyboard.
    const source = actionSource({ ...job, status: "ready" }, facts, await store.results(job.id));
    const keyboard = source ? actionKeyboard(locale, job.id, source, SEARCHABLE) : undefined;
    const ok = await store.transition(job.id, "processing", "ready", this.owner, now(), {
      resultExpiresAt: iso(expiresAt),
      facts: JSON.stringify(facts),
      detectedType: facts.type,
      final: this.finalStatus(text, keyboard),
    });
    if (!ok) {
      log.warn({ job: job.id }, "job moved by someone else before ready");
      return;
    }
    // Counted at the commit: a scrape that sees `ready` in the table sees it counted too.
    this.services.metrics.jobsEnded.inc({ status: "ready", reason: "" });
    await this.finisher.releaseAfterReady(job.id);
    log.info({ job: job.id, file_unique_id: job.fileUniqueId, expires_at: iso(expiresAt) }, "ready");
    // "Done" goes in the background: the worker never waits on the chat's pacing or a 429 hold.
    await this.showFinal(job.id);
  }

  /** The final status recorded with `ready`, held by this process (bot/status/finals.ts). */
  private finalStatus(text: string, keyboard: InlineKeyboardMarkup | undefined): FinalStatus {
    const { finals, now } = this.services;
    return { text, markup: keyboard ? JSON.stringify(keyboard) : null, owner: finals.owner, until: finals.holdUntil(now()) };
  }

  /** Show the final status recorded with the commit of job `id` (in the background). */
  private async showFinal(id: number): Promise<void> {
    const row = await this.services.store.get(id);
    if (row) this.services.finals.deliver(row);
  }

  /**
   * Map an error of the processing step to a failure; `largestOutput` (bytes) names the size of a
   * 413; `attempts` = tries so far, this one included (the wall-clock timeout is retried once).
   */
  private classify(err: unknown, largestOutput: number, attempts: number): TryFailure {
    if (err instanceof ProcessingError) {
      // processors/retry-policy.ts: a page over its budget or the memory cap (too_much_memory) fails the same way on
      // every try (final at once); the wall clock is retried once; other crashes are retried.
      return { reason: err.reason, retryable: isRetryableProcessingFailure(err, attempts), params: err.params, detail: err.message };
    }
    if (err instanceof GrammyError) {
      if (err.error_code === 413) return { reason: "result_too_big", retryable: false, params: { size_bytes: largestOutput, limit_bytes: uploadLimit(this.services.config) }, detail: `sendDocument: ${err.description}` };
      if (err.error_code === 403 || /chat not found/i.test(err.description)) return { reason: "delivery_failed", retryable: false, detail: `sendDocument: ${err.description}` };
      return { reason: "delivery_failed", retryable: true, detail: `sendDocument: ${err.error_code} ${err.description}` };
    }
    const e = err as { reason?: unknown; message?: unknown };
    if (typeof e?.reason === "string" && isReasonCode(e.reason)) {
      return { reason: e.reason, retryable: false, detail: String(e.message ?? e.reason) };
    }
    return { reason: "processing_crashed", retryable: true, detail: redactSecrets(String(err), this.services.config.token) };
  }
}
