/**
 * Text layer extraction with pdf.js `getTextContent`, pages asked for ahead (read-ahead.ts), each
 * page within the per-page budget; `page.cleanup()` after each page (DESIGN.md pitfalls: memory).
 */
import type { OpenPdf } from "./open.ts";
import { pageTexts } from "./read-ahead.ts";

/** Text of one page from pdf.js text items (`hasEOL` marks line ends). */
export function joinTextItems(items: readonly unknown[]): string {
  let out = "";
  for (const item of items) {
    if (item && typeof item === "object" && "str" in item) {
      const { str, hasEOL } = item as { str: string; hasEOL?: boolean };
      out += str;
      if (hasEOL) out += "\n";
    }
  }
  return out.replace(/[ \t]+\n/g, "\n").trimEnd();
}

/** Page separator line in the .txt output (1-based page numbers); a recognized page's line reads `--- page N of M (recognized) ---` ({@link mergeRecognized}). */
export function pageSeparator(page: number, pages: number): string {
  return `--- page ${page} of ${pages} ---`;
}

/**
 * Extract the text of every page.
 * @param pdf the open document
 * @param pageBudgetMs time allowed per page, ms
 * @returns the .txt body (pages separated by {@link pageSeparator} lines) and the number of
 *   text characters (separators and line breaks not counted)
 * @throws ProcessingError `processing_timeout` ({seconds, page}) when one page exceeds its
 *   budget; the page worker is then stopped and the document unusable (close it)
 */
export async function extractText(pdf: OpenPdf, pageBudgetMs: number, onProgress?: (done: number, total: number) => void): Promise<PdfText> {
  const pages = pdf.doc.numPages;
  const parts: string[] = [];
  const texts: string[] = [];
  const pageChars: number[] = [];
  let chars = 0;
  for await (const { page: n, items } of pageTexts(pdf, pageBudgetMs)) {
    const text = joinTextItems(items);
    const pageCount = text.replace(/\s+/g, "").length;
    chars += pageCount;
    texts.push(text);
    pageChars.push(pageCount);
    parts.push(`${pageSeparator(n, pages)}\n${text}\n`);
    onProgress?.(n, pages);
  }
  return { text: parts.join("\n"), chars, pageTexts: texts, pageChars };
}

/** The text layer of a document: as one `.txt` body and per page. */
export interface PdfText {
  /** The `.txt` body: every page under its {@link pageSeparator} line. */
  readonly text: string;
  /** Non-whitespace characters of the whole text layer. */
  readonly chars: number;
  /** Each page's text, index 0 = page 1. */
  readonly pageTexts: readonly string[];
  /** Each page's non-whitespace characters, index 0 = page 1. */
  readonly pageChars: readonly number[];
}

/**
 * The `.txt` body with recognized pages merged in page order (issue 13 §4): a page with a text
 * layer keeps it; a recognized page gets its recognized text under `--- page N of M (recognized) ---`; other pages stay as they are (empty).
 * @param pageTexts the text layer per page (index 0 = page 1)
 * @param recognized recognized text by 1-based page number
 */
export function mergeRecognized(pageTexts: readonly string[], recognized: ReadonlyMap<number, string>): string {
  const pages = pageTexts.length;
  return pageTexts
    .map((layer, i) => {
      const ocr = recognized.get(i + 1);
      return ocr === undefined ? `${pageSeparator(i + 1, pages)}\n${layer}\n` : `${pageSeparator(i + 1, pages).replace(/ ---$/, " (recognized) ---")}\n${ocr.trim()}\n`;
    })
    .join("\n");
}
