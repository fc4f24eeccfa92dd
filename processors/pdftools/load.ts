/**
 * Opening a user's PDF with pdf-lib for writing (issue 15 item 6), with the project's reason codes:
 * whatever pdf-lib refuses is classified by pdf.js (`encrypted`, `truncated`, `corrupt`), a PDF with no
 * page is `empty`, one over MAX_PDF_PAGES is `too_many_pages`; and writing: every output is opened again
 * with pdf.js before it is returned.
 */
import { readFile, writeFile } from "node:fs/promises";
import { PDFDocument } from "@cantoo/pdf-lib";
import { closePdf, openPdf } from "../pdf/open.ts";
import { ProcessingError } from "../types.ts";

/**
 * Load `path` with pdf-lib.
 * @param maxPages MAX_PDF_PAGES (Infinity: no cap)
 * @throws ProcessingError `encrypted`, `truncated`, `corrupt` (pdf.js's verdict when pdf-lib cannot read it,
 *   or pdf-lib's refusal of an encrypted file pdf.js can open), `empty` (0 pages), `too_many_pages`
 */
export async function loadPdf(path: string, maxPages = Number.POSITIVE_INFINITY): Promise<PDFDocument> {
  let doc: PDFDocument;
  let pages: number;
  try {
    doc = await PDFDocument.load(await readFile(path), { updateMetadata: false });
    // A damaged file may load and fail only here (no page tree).
    pages = doc.getPageCount();
  } catch (err) {
    // pdf.js names what is wrong with the project's reason codes (it throws them as ProcessingError).
    const pdf = await openPdf(path);
    await closePdf(pdf);
    const encrypted = /encrypt/i.test((err as Error).message);
    throw new ProcessingError(encrypted ? "encrypted" : "corrupt", encrypted ? {} : { ext: "pdf", label: "PDF document", size: "none" }, `pdf-lib: ${(err as Error).message}`);
  }
  if (pages === 0) throw new ProcessingError("empty", { what: "pdf" }, "PDF has 0 pages");
  if (pages > maxPages) throw new ProcessingError("too_many_pages", { pages, limit: maxPages }, `PDF has ${pages} pages, cap ${maxPages}`);
  return doc;
}

/** What pdf.js found in a written PDF: its page count and the `/Rotate` (degrees) of the pages asked for, by page number. */
export interface VerifiedPdf {
  readonly pages: number;
  readonly rotations: ReadonlyMap<number, number>;
}

/**
 * Issue 15 item 6: open a written PDF again with pdf.js; it must have `pages` pages.
 * @param rotationsOf page numbers (1-based) whose rotation pdf.js should read (each is a page parse, so callers ask for a few)
 * @returns pdf.js's page count and those pages' rotations
 * @throws ProcessingError `processing_crashed` when pdf.js cannot open it or counts other pages
 */
export async function verifyPdf(path: string, pages: number, rotationsOf: readonly number[] = []): Promise<VerifiedPdf> {
  let found: VerifiedPdf;
  try {
    const pdf = await openPdf(path);
    try {
      const rotations = new Map<number, number>();
      for (const n of rotationsOf) if (n >= 1 && n <= pdf.doc.numPages) rotations.set(n, (await pdf.doc.getPage(n)).rotate);
      found = { pages: pdf.doc.numPages, rotations };
    } finally {
      await closePdf(pdf);
    }
  } catch (err) {
    throw new ProcessingError("processing_crashed", {}, `the written PDF does not open in pdf.js: ${(err as Error).message}`);
  }
  if (found.pages !== pages) throw new ProcessingError("processing_crashed", {}, `the written PDF has ${found.pages} pages in pdf.js, ${pages} were written`);
  return found;
}

/** Save `doc` to `path` (object streams: smaller files) and verify it with pdf.js ({@link verifyPdf}); its pdf.js view and size. */
export async function savePdf(doc: PDFDocument, path: string, rotationsOf: readonly number[] = []): Promise<VerifiedPdf & { size: number }> {
  const bytes = await doc.save({ useObjectStreams: true });
  await writeFile(path, bytes);
  return { ...(await verifyPdf(path, doc.getPageCount(), rotationsOf)), size: bytes.byteLength };
}
