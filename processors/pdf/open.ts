/**
 * Open a PDF with pdf.js and turn its failures into reason codes
 * (fixture README "Reject reasons"; field case BR-09 for passwords).
 */
import { open, type FileHandle } from "node:fs/promises";
import { ProcessingError } from "../types.ts";
import { loadPdfJs, pdfjsDataOptions, type PdfJs } from "./engine.ts";
import { startPageWorker, type PageWorker } from "./page-worker.ts";

/** An open document, the loading task that owns it, and its page worker; call {@link closePdf} when done. */
export interface OpenPdf {
  readonly pdfjs: PdfJs;
  readonly task: ReturnType<PdfJs["getDocument"]>;
  readonly doc: Awaited<ReturnType<PdfJs["getDocument"]>["promise"]>;
  /** Where pdf.js parses this document's pages (the process's warm thread); `worker.stop()` ends a page over its budget. */
  readonly worker: PageWorker;
  /** Closes the file the document is read from (range mode); called by {@link closePdf}. */
  readonly release: () => Promise<void>;
}

/**
 * Release a document (DESIGN.md pitfalls: `doc.destroy()` or memory grows). After a budget
 * stop `destroy()` is not awaited: a terminated thread never answers it, and in-process an
 * abandoned page stream may keep pdf.js from finishing it (it still ends the work at pdf.js's
 * next time slot). The main-thread side is garbage once the caller drops the OpenPdf.
 */
export async function closePdf(pdf: OpenPdf): Promise<void> {
  if (!pdf.worker.stopped) await pdf.task.destroy();
  else if (pdf.worker.mode === "in-process") void pdf.task.destroy().catch(() => undefined);
  pdf.worker.release();
  await pdf.release();
}

/** Latin-1 view of bytes for cheap marker searches. */
function latin1(bytes: Uint8Array): string {
  return new TextDecoder("latin1").decode(bytes);
}

/** Bytes of the head read to look for objects when pdf.js cannot open a file. */
const CLASSIFY_HEAD_BYTES = 1 << 20;
/** Bytes of the tail read to look for `%%EOF`/`startxref` (a trailer fits in far less). */
const CLASSIFY_TAIL_BYTES = 2048;

/**
 * Classify bytes pdf.js could not open: objects present but no `%%EOF`/`startxref`
 * → `truncated` (cut short); no object at all after the header → `corrupt`.
 * @param head the file's first bytes (up to 1 MiB is enough: objects start right after the header)
 * @param tail the file's last bytes (2 KiB); defaults to the end of `head` for a small file read whole
 */
export function classifyUnreadablePdf(head: Uint8Array, tail: Uint8Array = head.subarray(Math.max(0, head.length - CLASSIFY_TAIL_BYTES))): "truncated" | "corrupt" {
  const hasObjects = /\d+\s+\d+\s+obj\b/.test(latin1(head));
  const end = latin1(tail);
  const hasEnd = end.includes("%%EOF") || end.includes("startxref");
  return hasObjects && !hasEnd ? "truncated" : "corrupt";
}

/** Read `length` bytes at `position` of an open file (fewer at the end). */
async function readAt(fh: FileHandle, position: number, length: number): Promise<Uint8Array> {
  const buf = new Uint8Array(length);
  const { bytesRead } = await fh.read(buf, 0, length, position);
  return buf.subarray(0, bytesRead);
}

/** Classify an unreadable PDF on disk from its head and tail only (never the whole file: it may be GBs). */
async function classifyFile(path: string): Promise<"truncated" | "corrupt"> {
  const fh = await open(path, "r");
  try {
    const { size } = await fh.stat();
    const head = await readAt(fh, 0, Math.min(size, CLASSIFY_HEAD_BYTES));
    const tail = await readAt(fh, Math.max(0, size - CLASSIFY_TAIL_BYTES), Math.min(size, CLASSIFY_TAIL_BYTES));
    return classifyUnreadablePdf(head, tail);
  } finally {
    await fh.close();
  }
}

/** Limits pdf.js applies while parsing (from the processor options), and where it parses. */
export interface OpenPdfLimits {
  /**
   * Largest image (width × height, pixels) pdf.js decodes; bigger images are skipped, not
   * decoded (pdf.js `maxImageSize`). Same number as the image processor's `maxInputPixels`
   * (audit of issue 5, gap 4: a 40000×40000 image XObject otherwise fills the memory cap).
   */
  readonly maxImagePixels?: number;
  /**
   * Parse in this thread (pdf.js's fake worker), not on the warm page thread (page-worker.ts): only
   * for a document whose page content is never parsed, so no page budget is needed. Each pdf.js
   * request (one per `getPage`) then costs a promise turn instead of a message to another thread and
   * back — which on a busy machine waits for that thread to be scheduled: reading every page's
   * `/Rotate` of a 200-page file took ≈ 22 ms on the thread and ≈ 9 ms in process at load 2
   * (bench/processors/rotate-phases.ts).
   */
  readonly inProcess?: boolean;
}

/**
 * Open a PDF. An empty user password is tried implicitly by pdf.js (BR-09: owner-only
 * encryption opens); broken xref tables are rebuilt by pdf.js where it can.
 * Each document gets its own page worker (page-worker.ts: a thread, so budgets can stop it).
 *
 * A path is read by ranges (pdf.js `PDFDataRangeTransport`, `disableAutoFetch`): only the
 * parts pdf.js asks for are read, so a valid 2 GB PDF (local Bot API mode) does not have to
 * fit in the child's memory cap (audit of issue 5, gap 2); a file up to {@link WHOLE_FILE_BYTES}
 * is read whole first, which saves pdf.js its range round trips (issue 12: the page-1 render). Bytes are copied once (pdf.js takes
 * ownership of what it gets; tests and the bench pass small buffers).
 * @param source absolute path of the PDF, or its bytes
 * @throws ProcessingError `encrypted` (user password needed), `truncated`, `corrupt`,
 *   `pdf_engine_unavailable`
 */
export async function openPdf(source: Uint8Array | string, limits: OpenPdfLimits = {}): Promise<OpenPdf> {
  const pdfjs = await loadPdfJs();
  let data: ReturnType<typeof pdfjsDataOptions>;
  try {
    data = pdfjsDataOptions();
  } catch (err) {
    throw new ProcessingError("pdf_engine_unavailable", {}, `pdf.js data folders cannot be resolved: ${(err as Error).message}`);
  }
  const fh = typeof source === "string" ? await open(source, "r") : null;
  const worker = await startPageWorker(pdfjs, limits.inProcess);
  const input = fh ? { range: await fileRangeTransport(pdfjs, fh), disableAutoFetch: true, disableStream: true } : { data: new Uint8Array(source as Uint8Array) };
  const task = pdfjs.getDocument({
    ...(worker.handle ? { worker: worker.handle } : {}),
    ...input,
    ...data,
    // Warnings are captured per page (warnings.ts): an image pdf.js could not decode is only a warning.
    verbosity: pdfjs.VerbosityLevel.WARNINGS,
    disableFontFace: true,
    useSystemFonts: false,
    ...(limits.maxImagePixels ? { maxImageSize: limits.maxImagePixels } : {}),
  });
  const release = async (): Promise<void> => {
    await fh?.close().catch(() => undefined);
  };
  // No onPassword handler: pdf.js then rejects with PasswordException ("No password given").
  try {
    return { pdfjs, task, doc: await task.promise, worker, release };
  } catch (err) {
    await task.destroy();
    worker.release();
    await release();
    if (err instanceof pdfjs.PasswordException || (err as Error)?.name === "PasswordException") {
      throw new ProcessingError("encrypted", {}, `pdf.js: ${(err as Error).message}`);
    }
    if (/fake worker|worker.*failed|Cannot find module/i.test(String((err as Error)?.message))) {
      // BR-11: the engine, not the file, is broken.
      throw new ProcessingError("pdf_engine_unavailable", {}, `pdf.js worker: ${(err as Error).message}`);
    }
    const reason = typeof source === "string" ? await classifyFile(source) : classifyUnreadablePdf(source);
    throw new ProcessingError(reason, { ext: "pdf", label: "PDF document", size: "none" }, `pdf.js: ${(err as Error)?.name}: ${(err as Error)?.message}`);
  }
}

/**
 * Files up to this size are given to pdf.js whole (as the range transport's initial data), bytes;
 * bigger ones are read by ranges as pdf.js asks. 8 MB is under 1 % of the default memory cap and
 * covers ordinary office documents; the ranges exist for the 2 GB files of local mode.
 */
export const WHOLE_FILE_BYTES = 8 * 2 ** 20;

/**
 * A pdf.js range transport over an open file: each `requestDataRange(begin, end)` is one
 * positioned read answered with `onDataRange`. Read errors answer with an empty chunk, which
 * pdf.js reports as a broken file (the open then fails as `corrupt`/`truncated`).
 */
async function fileRangeTransport(pdfjs: PdfJs, fh: FileHandle): Promise<InstanceType<PdfJs["PDFDataRangeTransport"]>> {
  const { size } = await fh.stat();
  class FileRangeTransport extends pdfjs.PDFDataRangeTransport {
    override requestDataRange(begin: number, end: number): void {
      const answer = (chunk: Uint8Array): void => {
        try {
          this.onDataRange(begin, chunk);
        } catch {
          // The document was destroyed meanwhile (closePdf after a budget stop): nobody waits.
        }
      };
      void readAt(fh, begin, Math.max(0, Math.min(end, size) - begin)).then(answer, () => answer(new Uint8Array(0)));
    }
  }
  // A small file is handed over whole as the transport's initial data: pdf.js then never waits
  // for a range round trip (page 1's preview of the 200-page ledger: ≈ 45–55 ms instead of ≈ 55–70).
  const initial = size <= WHOLE_FILE_BYTES ? await readAt(fh, 0, size) : null;
  return new FileRangeTransport(size, initial);
}
