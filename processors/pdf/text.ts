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

/** Page separator line in the .txt output (1-based page numbers). */
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
export async function extractText(pdf: OpenPdf, pageBudgetMs: number, onProgress?: (done: number, total: number) => void): Promise<{ text: string; chars: number }> {
  const pages = pdf.doc.numPages;
  const parts: string[] = [];
  let chars = 0;
  for await (const { page: n, items } of pageTexts(pdf, pageBudgetMs)) {
    const text = joinTextItems(items);
    chars += text.replace(/\s+/g, "").length;
    parts.push(`${pageSeparator(n, pages)}\n${text}\n`);
    onProgress?.(n, pages);
  }
  return { text: parts.join("\n"), chars };
}
