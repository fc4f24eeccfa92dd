/**
 * Settings and results of text recognition (issue 13 §3–4). The job engine fills {@link OcrOptions}
 * from the configuration (`OCR_*`, bot/config.ts); the PDF processor reports {@link OcrFacts}.
 */

/** How the PDF processor recognizes pages without a usable text layer. */
export interface OcrOptions {
  /** Tesseract languages joined by `+`, the primary first (config OCR_LANGUAGES, default `rus+eng`). */
  readonly languages: string;
  /** Resolution pages are rendered at for Tesseract, dots per inch (OCR_DPI, default 300). */
  readonly dpi: number;
  /** Most pages recognized per job (OCR_MAX_PAGES); later pages keep their (empty) text layer. */
  readonly maxPages: number;
  /**
   * CPU time allowed for one page, ms (OCR_PAGE_BUDGET): its Tesseract run (Tesseract's own CPU time,
   * processors/ocr/run-budget.ts; a run past 10× it in wall time, at least 60 s, is stopped as hung) and its drawing
   * (with PDF_PAGE_BUDGET, the larger); a page over it is skipped.
   */
  readonly pageBudgetMs: number;
  /** Time allowed for all recognition of a job, ms (OCR_TIMEOUT); then it stops and returns what it has. */
  readonly totalMs: number;
  /** Tesseract processes at once (OCR_CONCURRENCY, default the number of cores). */
  readonly concurrency: number;
  /** Largest source PDF turned into a searchable PDF, bytes (the upload limit: a bigger result cannot be sent). */
  readonly searchableMaxBytes: number;
}

/** Why recognition did not cover every page that needed it. */
export interface OcrStop {
  /** `page_limit`: OCR_MAX_PAGES reached; `time_limit`: OCR_TIMEOUT ran out; `render_budget`: a page took too long to draw. */
  readonly reason: "page_limit" | "time_limit" | "render_budget";
  /** The first page (1-based) left unrecognized because of it. */
  readonly page: number;
  /** The limit: pages for `page_limit`, seconds for the others. */
  readonly limit: number;
}

/** What recognition did, stored in the facts as `ocr` (JSON-safe). */
export interface OcrFacts {
  /** The languages used. */
  readonly languages: string;
  /** Pages without a usable text layer that paint an image (the ones that needed recognition). */
  readonly needed: number;
  /** Pages recognized. */
  readonly recognized: number;
  /** OCR_PAGE_BUDGET in whole seconds (rounded up), for the chat line about pages over it. */
  readonly pageBudgetS: number;
  /** Pages whose recognition ran over OCR_PAGE_BUDGET (skipped, 1-based). */
  readonly overBudget: readonly number[];
  /** Pages Tesseract failed on (1-based). */
  readonly failed: readonly number[];
  /**
   * Pages (1-based) whose raster was the page's own scanned image, written as it was decoded
   * (processors/ocr/page-image.ts), not a drawing of the page.
   */
  readonly direct: readonly number[];
  /** Pages (1-based) without a usable text layer that paint no image: not scans, not recognized, not in `needed`. */
  readonly noImage: readonly number[];
  /** Tesseract's error on the first failed page (operator detail, English). */
  readonly failedDetail?: string;
  /** Set when recognition stopped before the last page that needed it. */
  readonly stop?: OcrStop;
}

/** facts `searchableSkipped` when no page needed recognition (the PDF is searchable already). */
export const SEARCHABLE_NOT_NEEDED = "every page already has a text layer";
