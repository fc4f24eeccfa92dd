/**
 * Recognize the pages of an open PDF that have no usable text layer (issue 13 §3): each page's
 * raster (never the user's file) is written as PBM or grey PGM and given to Tesseract
 * (tesseract.ts). A plain scan — one upright image over the page at about the OCR resolution — gives
 * its own decoded image (page-image.ts: ≈ 20 ms instead of ≈ 0.5 s to draw and convert a 300-dpi
 * page); any other page is drawn by pdf.js at the OCR resolution (raster.ts). Rasters are made in
 * order (one pdf.js document); recognition runs up to `concurrency` Tesseract processes at once,
 * and the next page's raster is made only when a process is free (memory and disk stay bounded).
 *
 * Limits (all end with what was recognized so far, never with nothing):
 * - `maxPages`: only the first N pages that need it are recognized → stop `page_limit`;
 *   a page that paints no image at all (blank, a one-line cover, vector drawings) is not a scan and
 *   is skipped (`noImage`): it neither counts nor is recognized;
 * - `pageBudgetMs`: a page whose recognition takes more CPU time is stopped and skipped (`overBudget`;
 *   processors/ocr/run-budget.ts); one still running after 10× that in wall time (at least 60 s) is stopped as hung
 *   (`failed`, with the detail);
 * - `renderBudgetMs`: a page whose *drawing* takes longer stops pdf.js (the document is unusable)
 *   → stop `render_budget`;
 * - `totalMs` (or `stopSignal`): when it runs out, running pages are stopped and no new page starts
 *   → stop `time_limit` at the first page not recognized.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { OpenPdf } from "../pdf/open.ts";
import { renderPage } from "../pdf/render.ts";
import { directPageRaster } from "./page-image.ts";
import { pageRaster as drawnRaster } from "./raster.ts";
import { recognizePage, TesseractStopped } from "./tesseract.ts";
import type { OcrFacts, OcrOptions, OcrStop } from "./types.ts";

/** Longest side of an OCR raster, px (A0 at 300 dpi is ~14000; beyond this the dpi is lowered). */
const MAX_RASTER_SIDE = 10_000;

/** What {@link recognizePdfPages} returns. */
export interface OcrOutcome {
  /** Recognized text by 1-based page number. */
  readonly texts: ReadonlyMap<number, string>;
  /** Text-only PDF page by page number (when `pdfLayer` was asked for). */
  readonly layers: ReadonlyMap<number, string>;
  /** The pages drawn without some image (pdf.js image-decode warnings), by page number. */
  readonly imageWarnings: ReadonlyMap<number, readonly string[]>;
  readonly facts: OcrFacts;
}

/** Inputs of {@link recognizePdfPages} besides the document. */
export interface OcrRun extends OcrOptions {
  /** Pages (1-based, ascending) that need recognition. */
  readonly pages: readonly number[];
  /** Directory for rasters and Tesseract's outputs (created). */
  readonly dir: string;
  /** Also make a text-only PDF page per recognized page (the searchable PDF). */
  readonly pdfLayer: boolean;
  /** Largest raster, pixels (the processor's maxInputPixels): the dpi is lowered to fit. */
  readonly maxPixels: number;
  /** Pages recognized so far of the pages that will be tried. */
  readonly onProgress?: (done: number, total: number) => void;
  /**
   * Time allowed to draw one page at the OCR resolution, ms (the processor passes the larger of
   * PDF_PAGE_BUDGET and OCR_PAGE_BUDGET); over it pdf.js is stopped → stop `render_budget`.
   */
  readonly renderBudgetMs: number;
  /** Ends recognition like the total deadline does (a caller's own stop: tests, shutdown). */
  readonly stopSignal?: AbortSignal;
  /**
   * Wall time after which a page's Tesseract run is stopped as hung, ms (default
   * processors/ocr/run-budget.ts `wallBackstopMs` of `pageBudgetMs`: 10 × it, at least 60 s).
   */
  readonly wallBackstopMs?: number;
}

/** A page's raster for Tesseract: its Netpbm bytes (never a file), the dpi it has, whether it is the page's own image. */
interface PageRaster {
  readonly bytes: Uint8Array;
  readonly dpi: number;
  readonly direct: boolean;
  readonly imageWarnings: readonly string[];
}

/**
 * The raster of page `n`: the page's one image when it is a plain scan (page-image.ts), else the
 * page drawn by pdf.js at `dpi` (raster.ts).
 * @returns `no_image` for a page that paints no image (nothing to recognize); null when drawing
 *   (or building the operator list) took longer than `budgetMs`: pdf.js was stopped and the
 *   document is unusable
 */
async function pageRaster(pdf: OpenPdf, n: number, dpi: number, budgetMs: number): Promise<PageRaster | "no_image" | null> {
  const own = await directPageRaster(pdf, n, dpi, budgetMs);
  if (own.kind === "over_budget") return null;
  if (own.kind === "no_image") return own.kind;
  if (own.kind === "raster") return { bytes: own.raster.bytes, dpi: own.raster.dpi, direct: true, imageWarnings: [] };
  const drawn = await renderPage(pdf, n, { dpi }, budgetMs);
  if (!drawn) return null;
  const bytes = drawnRaster(drawn.canvas.getContext("2d").getImageData(0, 0, drawn.width, drawn.height).data, drawn.width, drawn.height);
  return { bytes, dpi, direct: false, imageWarnings: [...own.imageWarnings, ...drawn.imageWarnings] };
}

/** The resolution a page of `widthPt × heightPt` is drawn at: `dpi`, lowered to fit the raster caps. */
export function rasterDpi(dpi: number, widthPt: number, heightPt: number, maxPixels: number): number {
  const w = (widthPt / 72) * dpi;
  const h = (heightPt / 72) * dpi;
  const fit = Math.min(1, MAX_RASTER_SIDE / Math.max(w, h), Math.sqrt(maxPixels / (w * h)));
  return Math.max(1, Math.floor(dpi * fit));
}

/**
 * Recognize `run.pages` of `pdf`.
 * @returns texts (and text-only PDF pages) of the pages recognized, and the facts (see {@link OcrFacts})
 * @throws Error from pdf.js for a broken page, or a file-system error of the work dir
 */
export async function recognizePdfPages(pdf: OpenPdf, run: OcrRun): Promise<OcrOutcome> {
  await mkdir(run.dir, { recursive: true });
  const texts = new Map<number, string>();
  const layers = new Map<number, string>();
  const imageWarnings = new Map<number, readonly string[]>();
  const overBudget: number[] = [];
  const failed: number[] = [];
  const direct: number[] = [];
  const noImage: number[] = [];
  const total = Math.min(run.pages.length, run.maxPages);
  let stop: OcrStop | undefined;
  const deadline = new AbortController();
  let timedOut = false;
  const timeUp = (): void => {
    timedOut = true;
    deadline.abort();
  };
  const timer = setTimeout(timeUp, run.totalMs);
  if (run.stopSignal?.aborted) timeUp();
  run.stopSignal?.addEventListener("abort", timeUp, { once: true });
  let failedDetail: string | undefined;
  const inFlight = new Set<Promise<void>>();
  const unfinished = new Set<number>(); // pages started and not recognized (yet), and the first one not reached
  let started = 0;
  let done = 0;

  const recognize = async (n: number, image: Uint8Array, dpi: number): Promise<void> => {
    try {
      const r = await recognizePage({ imageBytes: image, outBase: join(run.dir, `page-${n}`), languages: run.languages, dpi, pdf: run.pdfLayer, budgetMs: run.pageBudgetMs, signal: deadline.signal, ...(run.wallBackstopMs !== undefined ? { wallBackstopMs: run.wallBackstopMs } : {}) });
      texts.set(n, r.text);
      if (r.pdfPath) layers.set(n, r.pdfPath);
      unfinished.delete(n);
    } catch (err) {
      if (err instanceof TesseractStopped && err.why === "stopped") return; // the deadline: counted below
      unfinished.delete(n);
      if (err instanceof TesseractStopped && err.why === "budget") overBudget.push(n);
      else {
        // Tesseract failed, or hung (past the wall-clock backstop: not the page's cost, the tool's fault).
        failed.push(n);
        failedDetail ??= `page ${n}: ${String((err as Error)?.message ?? err).slice(0, 300)}`;
      }
    } finally {
      done++;
      run.onProgress?.(done, total);
    }
  };

  try {
    for (const n of run.pages) {
      while (inFlight.size >= run.concurrency) await Promise.race(inFlight);
      if (timedOut) {
        unfinished.add(n);
        break;
      }
      const page = await pdf.doc.getPage(n);
      const view = page.getViewport({ scale: 1 });
      page.cleanup();
      const dpi = rasterDpi(run.dpi, view.width, view.height, run.maxPixels);
      const raster = await pageRaster(pdf, n, dpi, run.renderBudgetMs);
      if (raster === "no_image") {
        // Not a scan: nothing to recognize, not counted towards maxPages, and no progress event (an
        // "ocr" event would enter the stage: the allowance and the "recognizing" status).
        noImage.push(n);
        continue;
      }
      if (!raster) {
        stop = { reason: "render_budget", page: n, limit: Math.ceil(run.renderBudgetMs / 1000) };
        break;
      }
      if (started >= run.maxPages) {
        stop = { reason: "page_limit", page: n, limit: run.maxPages };
        break;
      }
      // The first page that will be recognized enters the stage: the pool grants recognition's time
      // and memory allowance on this event (pool.ts `stageAllowance`), before any Tesseract starts.
      // A file whose pages paint no image never enters it.
      if (started === 0) run.onProgress?.(done, total);
      started++;
      unfinished.add(n);
      if (raster.imageWarnings.length > 0) imageWarnings.set(n, raster.imageWarnings);
      if (raster.direct) direct.push(n);
      const task: Promise<void> = recognize(n, raster.bytes, raster.dpi).finally(() => inFlight.delete(task));
      inFlight.add(task);
    }
    await Promise.all(inFlight);
  } finally {
    clearTimeout(timer);
    run.stopSignal?.removeEventListener("abort", timeUp);
    deadline.abort(); // nothing may outlive the call
    await Promise.allSettled(inFlight);
  }
  if (timedOut && unfinished.size > 0 && stop?.reason !== "render_budget") {
    const first = Math.min(...unfinished);
    // A time stop before the page limit's first page is the one to report.
    if (!stop || first < stop.page) stop = { reason: "time_limit", page: first, limit: Math.ceil(run.totalMs / 1000) };
  }
  const facts: OcrFacts = {
    languages: run.languages,
    needed: run.pages.length - noImage.length,
    recognized: texts.size,
    pageBudgetS: Math.ceil(run.pageBudgetMs / 1000),
    overBudget: overBudget.sort((a, b) => a - b),
    failed: failed.sort((a, b) => a - b),
    direct,
    noImage,
    ...(failedDetail ? { failedDetail } : {}),
    ...(stop ? { stop } : {}),
  };
  return { texts, layers, imageWarnings, facts };
}
