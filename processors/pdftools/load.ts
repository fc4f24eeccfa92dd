/**
 * Opening a user's PDF with pdf-lib for writing (issue 15 item 6), with the project's reason codes:
 * whatever pdf-lib refuses is classified by pdf.js (`encrypted`, `truncated`, `corrupt`), a PDF with no
 * page is `empty`, one over MAX_PDF_PAGES is `too_many_pages`; and writing: every output is opened again
 * with pdf.js before it is returned.
 */
import { readFile, writeFile } from "node:fs/promises";
import { PDFDocument } from "@cantoo/pdf-lib";
import { closePdf, openPdf, WHOLE_FILE_BYTES } from "../pdf/open.ts";
import { PDF_LIB_LOAD, PDF_LIB_SAVE } from "../pdf-lib-options.ts";
import { ProcessingError } from "../types.ts";

/** The shared pdf-lib options (processors/pdf-lib-options.ts), exported here too for the PDF tools' callers. */
export { PDF_LIB_LOAD, PDF_LIB_SAVE };

/** Whether each document {@link loadPdf} read kept its objects in object streams (`/ObjStm`). */
const objectStreamsOf = new WeakMap<PDFDocument, boolean>();

/**
 * Whether `doc`'s file used object streams; true for a document {@link loadPdf} did not read. A tool
 * that changes only pages (rotate, extract, split) writes its output the same way, as qpdf does by
 * default (`--object-streams=preserve`): a file without them is not re-compressed for nothing — for the
 * 200-page ledger that is ≈ 10 ms of rotate's ≈ 40 (writing, and pdf.js reading them back), and the
 * output stays the input's size.
 */
export function usesObjectStreams(doc: PDFDocument): boolean {
  return objectStreamsOf.get(doc) ?? true;
}

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
    const bytes = await readFile(path);
    doc = await PDFDocument.load(bytes, PDF_LIB_LOAD);
    // The name /ObjStm appears only where a file has object streams (inside compressed data by chance
    // at worst, which only keeps the default).
    objectStreamsOf.set(doc, bytes.includes("/ObjStm"));
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
 * Most pages whose rotation pdf.js is asked for at once while verifying. Each read is a message to its
 * page thread; asking for them in small waves costs a thread wake-up per wave (200 pages in waves of
 * 64: ≈ 66 ms, all at once ≈ 42 ms on the shared VM), so one wave covers any ordinary document and the
 * bound only keeps a 5000-page file from holding 5000 page proxies at once.
 */
const VERIFY_PAGES_AT_ONCE = 1000;

/**
 * Issue 15 item 6: open a written PDF again with pdf.js; it must have `pages` pages.
 * @param source the written file's path, or its bytes (a small output is checked from the bytes just
 *   written: no second read, no range round trips)
 * @param rotationsOf page numbers (1-based) whose `/Rotate` pdf.js should read (a page-tree lookup each,
 *   no content parse: every page of a 200-page file costs ≈ 5 ms, bench/processors/rotate-phases.ts)
 * @returns pdf.js's page count and those pages' rotations
 * @throws ProcessingError `processing_crashed` when pdf.js cannot open it or counts other pages
 */
export async function verifyPdf(source: string | Uint8Array, pages: number, rotationsOf: readonly number[] = []): Promise<VerifiedPdf> {
  let found: VerifiedPdf;
  try {
    // In process: only the page tree is read (no content stream), so there is nothing for a page budget
    // to stop, and each getPage is a promise turn instead of a round trip to the page thread.
    const pdf = await openPdf(source, { inProcess: true });
    try {
      const rotations = new Map<number, number>();
      const asked = rotationsOf.filter((n) => n >= 1 && n <= pdf.doc.numPages);
      for (let i = 0; i < asked.length; i += VERIFY_PAGES_AT_ONCE) {
        const batch = asked.slice(i, i + VERIFY_PAGES_AT_ONCE);
        const read = await Promise.all(batch.map(async (n) => (await pdf.doc.getPage(n)).rotate));
        batch.forEach((n, j) => rotations.set(n, read[j]!));
      }
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

/**
 * Save `doc` to `path` ({@link PDF_LIB_SAVE}) and verify it with pdf.js ({@link verifyPdf}): from the
 * bytes written when they fit {@link WHOLE_FILE_BYTES} (what pdf.js would read whole anyway), else from
 * the file by ranges (a large merge is not held twice in memory).
 * @param objectStreams write object streams (default; {@link usesObjectStreams} of the source for page tools)
 * @returns pdf.js's view of the output and its size, bytes
 */
export async function savePdf(doc: PDFDocument, path: string, rotationsOf: readonly number[] = [], objectStreams = true): Promise<VerifiedPdf & { size: number }> {
  const bytes = await doc.save({ ...PDF_LIB_SAVE, useObjectStreams: objectStreams });
  await writeFile(path, bytes);
  const verified = await verifyPdf(bytes.byteLength <= WHOLE_FILE_BYTES ? bytes : path, doc.getPageCount(), rotationsOf);
  return { ...verified, size: bytes.byteLength };
}
