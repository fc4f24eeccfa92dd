/**
 * The PDF processor's recognition step (issue 13 §3–4): which pages need it, running it
 * (processors/ocr/ocr-pdf.ts), and the searchable PDF (processors/ocr/searchable.ts) checked by
 * re-opening it with pdf.js.
 */
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { recognizePdfPages, type OcrOutcome } from "../ocr/ocr-pdf.ts";
import { writeSearchablePdf } from "../ocr/searchable.ts";
import type { OcrOptions } from "../ocr/types.ts";
import type { ProcessorOptions } from "../types.ts";
import { closePdf, openPdf, type OpenPdf } from "./open.ts";
import { extractText } from "./text.ts";

/**
 * A page whose text layer has fewer non-whitespace characters than this is recognized: a scan
 * often carries a stamp such as a page number or "Scanned with …" in a real text layer, which is
 * not a usable text of the page.
 */
export const USABLE_TEXT_CHARS = 32;

/** Pages (1-based) whose text layer is not usable, from each page's character count. */
export function pagesNeedingOcr(pageChars: readonly number[]): number[] {
  return pageChars.flatMap((c, i) => (c < USABLE_TEXT_CHARS ? [i + 1] : []));
}

/**
 * Recognize the pages of `pdf` that need it.
 * @param searchable also make text-only PDF pages (for {@link searchablePdf})
 * @param stopSignal ends recognition early, like OCR_TIMEOUT
 * @returns null when no page needs recognition (each has a usable text layer, or paints no image)
 */
export async function recognizeNeeded(pdf: OpenPdf, pageChars: readonly number[], ocr: OcrOptions, options: ProcessorOptions, searchable: boolean, stopSignal?: AbortSignal): Promise<OcrOutcome | null> {
  const pages = pagesNeedingOcr(pageChars);
  if (pages.length === 0) return null;
  const outcome = await recognizePdfPages(pdf, {
    ...ocr,
    pages,
    dir: join(options.workDir, "ocr"),
    pdfLayer: searchable,
    maxPixels: options.maxInputPixels,
    renderBudgetMs: Math.max(options.pdfPageBudgetMs, ocr.pageBudgetMs),
    ...(stopSignal ? { stopSignal } : {}),
    onProgress: (done, total) => options.onProgress?.(done, total, "ocr"),
  });
  // Every such page painted no image (a short cover, a blank page): none is a scan.
  return outcome.facts.needed === 0 ? null : outcome;
}

/** Why a searchable PDF was not made (facts `searchableSkipped`, English). */
export type SearchableSkip = string;

/**
 * Write `<workDir>/searchable.pdf` from the source and the recognized pages' text-only layers, and
 * check it the way a user's reader would: pdf.js opens it, it has the source's page count, and every
 * page that got a text layer yields text.
 * @returns the path, or the reason it was skipped (too big, pdf-lib cannot read the source, the check failed)
 */
export async function searchablePdf(inputPath: string, outcome: OcrOutcome, pages: number, ocr: OcrOptions, options: ProcessorOptions): Promise<{ path: string } | { skipped: SearchableSkip }> {
  const { size } = await stat(inputPath);
  if (size > ocr.searchableMaxBytes) return { skipped: `source is ${size} bytes, over the ${ocr.searchableMaxBytes}-byte upload limit` };
  const withText = new Map([...outcome.layers].filter(([n]) => (outcome.texts.get(n) ?? "").trim().length > 0));
  const path = join(options.workDir, "searchable.pdf");
  try {
    await writeSearchablePdf(inputPath, withText, path);
  } catch (err) {
    return { skipped: `the PDF writer cannot rewrite this file: ${String((err as Error)?.message ?? err).slice(0, 200)}` };
  }
  const check = await openPdf(path);
  try {
    if (check.doc.numPages !== pages) return { skipped: `the written PDF has ${check.doc.numPages} pages, not ${pages}` };
    const { pageChars } = await extractText(check, Math.max(options.pdfPageBudgetMs, 10_000));
    const blank = [...withText.keys()].filter((n) => (pageChars[n - 1] ?? 0) === 0);
    if (blank.length > 0) return { skipped: `the written PDF has no text on page ${blank[0]}` };
  } finally {
    await closePdf(check);
  }
  return { path };
}
