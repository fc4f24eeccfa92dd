/**
 * Open a PDF with pdf.js and turn its failures into reason codes
 * (fixture README "Reject reasons"; field case BR-09 for passwords).
 */
import { ProcessingError } from "../types.ts";
import { loadPdfJs, standardFontDir, type PdfJs } from "./engine.ts";
import { startPageWorker, type PageWorker } from "./page-worker.ts";

/** An open document, the loading task that owns it, and its page worker; call {@link closePdf} when done. */
export interface OpenPdf {
  readonly pdfjs: PdfJs;
  readonly task: ReturnType<PdfJs["getDocument"]>;
  readonly doc: Awaited<ReturnType<PdfJs["getDocument"]>["promise"]>;
  /** Where pdf.js parses this document's pages; `worker.stop()` ends a page over its budget. */
  readonly worker: PageWorker;
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
  pdf.worker.stop();
}

/** Latin-1 view of bytes for cheap marker searches. */
function latin1(bytes: Uint8Array): string {
  return new TextDecoder("latin1").decode(bytes);
}

/**
 * Classify bytes pdf.js could not open: objects present but no `%%EOF`/`startxref`
 * → `truncated` (cut short); no object at all after the header → `corrupt`.
 */
export function classifyUnreadablePdf(bytes: Uint8Array): "truncated" | "corrupt" {
  const text = latin1(bytes);
  const hasObjects = /\d+\s+\d+\s+obj\b/.test(text);
  const tail = text.slice(-2048);
  const hasEnd = tail.includes("%%EOF") || tail.includes("startxref");
  return hasObjects && !hasEnd ? "truncated" : "corrupt";
}

/**
 * Open PDF bytes. An empty user password is tried implicitly by pdf.js (BR-09: owner-only
 * encryption opens); broken xref tables are rebuilt by pdf.js where it can.
 * Each document gets its own page worker (page-worker.ts: a thread, so budgets can stop it).
 * @throws ProcessingError `encrypted` (user password needed), `truncated`, `corrupt`,
 *   `pdf_engine_unavailable`
 */
export async function openPdf(bytes: Uint8Array): Promise<OpenPdf> {
  const pdfjs = await loadPdfJs();
  let fonts: string;
  try {
    fonts = standardFontDir();
  } catch (err) {
    throw new ProcessingError("pdf_engine_unavailable", {}, `pdf.js standard fonts cannot be resolved: ${(err as Error).message}`);
  }
  const worker = await startPageWorker(pdfjs);
  // pdf.js may transfer/detach the buffer it gets; keep our own copy for classification.
  const task = pdfjs.getDocument({
    ...(worker.handle ? { worker: worker.handle } : {}),
    data: new Uint8Array(bytes), // a plain copy (a Buffer's slice() is a view, and pdf.js refuses Buffers)
    standardFontDataUrl: fonts,
    verbosity: pdfjs.VerbosityLevel.ERRORS,
    disableFontFace: true,
    useSystemFonts: false,
  });
  // No onPassword handler: pdf.js then rejects with PasswordException ("No password given").
  try {
    return { pdfjs, task, doc: await task.promise, worker };
  } catch (err) {
    await task.destroy();
    worker.stop();
    if (err instanceof pdfjs.PasswordException || (err as Error)?.name === "PasswordException") {
      throw new ProcessingError("encrypted", {}, `pdf.js: ${(err as Error).message}`);
    }
    if (/fake worker|worker.*failed|Cannot find module/i.test(String((err as Error)?.message))) {
      // BR-11: the engine, not the file, is broken.
      throw new ProcessingError("pdf_engine_unavailable", {}, `pdf.js worker: ${(err as Error).message}`);
    }
    const reason = classifyUnreadablePdf(bytes);
    throw new ProcessingError(reason, { ext: "pdf", label: "PDF document", size: "none" }, `pdf.js: ${(err as Error)?.name}: ${(err as Error)?.message}`);
  }
}
