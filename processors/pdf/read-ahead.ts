/**
 * The text content of a document's pages, in page order, asked for ahead (issue 12: PDF text
 * close to pdftotext). Asking one page at a time, each page pays its round trips to the pdf.js
 * thread (getPage, then the text stream) while the thread waits; with {@link TEXT_READ_AHEAD}
 * pages asked for ahead, the thread is already on page N + 1 while the caller joins page N's
 * items. The 200-page ledger's text took half the time (docs/benchmarks.md).
 */
import { OVER_BUDGET, pageOverBudget, withBudget } from "../budget.ts";
import type { OpenPdf } from "./open.ts";

/** Pages whose text is asked for ahead of the page being read. */
export const TEXT_READ_AHEAD = 8;

/** One page's text items (pdf.js `getTextContent().items`). */
export interface PageText {
  /** 1-based page number. */
  readonly page: number;
  readonly items: readonly unknown[];
}

/**
 * Every page's text items, in order. Page N's budget starts when page N − 1's text has arrived:
 * the thread works through the requests in order, so that is when it turned to page N (as when
 * pages were asked for one at a time).
 * @param pdf the open document
 * @param pageBudgetMs time allowed per page, ms
 * @throws ProcessingError `processing_timeout` ({seconds, page}) when a page exceeds its budget;
 *   the page worker is then stopped and the document unusable (close it); whatever pdf.js throws
 *   for a broken page
 */
export async function* pageTexts(pdf: OpenPdf, pageBudgetMs: number): AsyncGenerator<PageText> {
  const pages = pdf.doc.numPages;
  const asked = new Map<number, Promise<readonly unknown[]>>();
  const ask = (n: number): void => {
    const items = pdf.doc.getPage(n).then(async (page) => {
      try {
        return (await page.getTextContent()).items;
      } finally {
        page.cleanup();
      }
    });
    items.catch(() => undefined); // a page asked for ahead may fail after the reader stopped
    asked.set(n, items);
  };
  let next = 1;
  for (let n = 1; n <= pages; n++) {
    while (next <= pages && next < n + TEXT_READ_AHEAD) ask(next++);
    const items = await withBudget(asked.get(n)!, pageBudgetMs);
    asked.delete(n);
    if (items === OVER_BUDGET) {
      // Abandoning the promise is not enough: the page would keep the CPU busy (and, in
      // the fake worker, delay everything after it) until parsed. Stop the thread.
      pdf.worker.stop();
      throw pageOverBudget("text", n, pageBudgetMs);
    }
    yield { page: n, items };
  }
}
