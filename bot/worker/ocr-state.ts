/**
 * Whether text recognition can run, from the OCR start-up self-check (processors/ocr/self-check.ts,
 * run in a processor child): issue 13 "missing language data is a start-up self-check failure, not
 * a per-job crash". While it fails, PDFs are processed without recognition (facts `ocrUnavailable`,
 * the chat says so) and the check is repeated at most every {@link RECHECK_MS} when a job is
 * processed, so installing the missing package fixes the bot without a restart.
 */
import type { Config } from "../config.ts";
import type { Logger } from "../log.ts";
import type { OcrSelfCheck } from "../../processors/ocr/self-check.ts";
import type { OcrOptions } from "../../processors/ocr/types.ts";

/** How often a failed check is repeated, at most, ms. */
export const RECHECK_MS = 10 * 60_000;

/** Runs the self-check (in a child process in production). */
export type OcrChecker = (languages: string) => Promise<OcrSelfCheck>;

/** The OCR self-check's outcome, rechecked while failing; see the module comment. */
export class OcrState {
  private result: OcrSelfCheck | null = null;
  private checkedAt = 0;
  private running: Promise<OcrSelfCheck> | null = null;

  /**
   * @param config OCR_* settings and the upload limit
   * @param checker the self-check
   * @param now clock, epoch ms
   */
  constructor(
    private readonly config: Pick<Config, "ocrLanguages" | "ocrDpi" | "ocrMaxPages" | "ocrPageBudgetMs" | "ocrTimeoutMs" | "ocrConcurrency">,
    private readonly checker: OcrChecker,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Run the self-check now and log its outcome: one info line when it passes, one error line naming
   * what is missing and the fix when it fails (operator fault: ONE clear journal line).
   */
  async check(): Promise<OcrSelfCheck> {
    this.running ??= (async () => {
      const r = await this.checker(this.config.ocrLanguages);
      const was = this.result;
      this.result = r;
      this.checkedAt = this.now();
      if (r.ok && (!was || !was.ok)) this.log.info({ version: r.version, languages: r.languages, ms: r.ms }, "OCR self-check passed");
      if (!r.ok && (!was || was.ok || was.missing !== r.missing)) {
        this.log.error({ missing: r.missing }, "OCR self-check FAILED: scanned pages will not be recognized until it passes (rechecked every 10 min); install the named package");
      }
      return r;
    })().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /**
   * The OCR options for a job, or null while recognition is unavailable (a failed check; a check
   * older than {@link RECHECK_MS} is repeated in the background). Before any check, recognition is
   * assumed available: a missing tool then shows as pages Tesseract failed on, never as a crash.
   * @param searchableMaxBytes largest source turned into a searchable PDF (the upload limit)
   */
  options(searchableMaxBytes: number): OcrOptions | null {
    if (this.result && !this.result.ok) {
      if (this.now() - this.checkedAt >= RECHECK_MS && !this.running) void this.check();
      return null;
    }
    const c = this.config;
    return { languages: c.ocrLanguages, dpi: c.ocrDpi, maxPages: c.ocrMaxPages, pageBudgetMs: c.ocrPageBudgetMs, totalMs: c.ocrTimeoutMs, concurrency: c.ocrConcurrency, searchableMaxBytes };
  }
}
