/**
 * The PDF processor (docs/processors.md "PDF"): facts (pages, version, title/author/
 * producer, encryption, text characters, page-1 size), the text layer as UTF-8 .txt with
 * recognized pages merged in (issue 13: pages without a usable text layer go through Tesseract
 * when `options.ocr` is set), a JPEG preview of page 1; action `pages` renders every page into a
 * ZIP of JPEGs; action `searchable` returns the .txt and the original pages with an invisible
 * text layer (`-searchable.pdf`).
 */
import { Zip, ZipPassThrough } from "fflate";
import { join } from "node:path";
import { pageOverBudget } from "../budget.ts";
import { outputFile } from "../naming.ts";
import { ProcessingError, type Facts, type ProcessorOptions, type ProcessorOutput, type ProcessorResult } from "../types.ts";
import { closePdf, openPdf, type OpenPdf } from "./open.ts";
import { renderPageJpeg } from "./render.ts";
import { SEARCHABLE_NOT_NEEDED } from "../ocr/types.ts";
import { recognizeNeeded, pagesNeedingOcr, searchablePdf } from "./ocr-step.ts";
import { extractText, mergeRecognized } from "./text.ts";

/** Longest side of the page-1 preview, px (also capped by options.maxOutputSide). */
const PREVIEW_MAX_SIDE = 2000;
/** Longest side of each page in the `pages` ZIP, px (also capped by options.maxOutputSide). */
const PAGES_MAX_SIDE = 1600;
/** Longest metadata string kept in facts, characters. */
const MAX_META = 200;

/** A metadata string from the PDF Info dictionary, trimmed and bounded, or undefined. */
function metaString(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  // eslint-disable-next-line no-control-regex
  const s = value.replace(/[\x00-\x1f]/g, " ").trim();
  return s ? s.slice(0, MAX_META) : undefined;
}

/** Facts from the document's Info dictionary and page 1 geometry. */
async function documentFacts(pdf: OpenPdf): Promise<Record<string, unknown>> {
  const { info } = (await pdf.doc.getMetadata()) as { info: Record<string, unknown> };
  const page1 = await pdf.doc.getPage(1);
  const vp = page1.getViewport({ scale: 1 });
  page1.cleanup();
  return {
    pdfVersion: metaString(info.PDFFormatVersion),
    title: metaString(info.Title),
    author: metaString(info.Author),
    producer: metaString(info.Producer),
    encrypted: info.EncryptFilterName != null,
    linearized: info.IsLinearized === true,
    pageWidthPt: Math.round(vp.width),
    pageHeightPt: Math.round(vp.height),
  };
}

/** Most pdf.js image-decode warnings kept in the facts (the log line shows them; the count is the page list). */
const MAX_FACT_WARNINGS = 5;

/**
 * What pdf.js could not decode, collected over the pages drawn (issue 13 §2): the pages whose
 * drawing lacks an image, and the first warnings. Stored as facts `undecodedPages` (1-based, in
 * order) and `imageWarnings`; the engine logs them at warning with the job id and the chat says
 * "page images could not be decoded".
 */
class UndecodedImages {
  readonly pages: number[] = [];
  readonly warnings: string[] = [];

  /** Record page `n`'s image-decode warnings (none, or the page already noted: nothing recorded). */
  note(n: number, warnings: readonly string[]): void {
    if (warnings.length === 0 || this.pages.includes(n)) return;
    this.pages.push(n);
    for (const w of warnings) if (this.warnings.length < MAX_FACT_WARNINGS) this.warnings.push(`page ${n}: ${w}`);
  }

  /** Add the facts, when there is anything to say. */
  addTo(facts: Record<string, unknown>): void {
    if (this.pages.length === 0) return;
    facts.undecodedPages = [...this.pages].sort((a, b) => a - b);
    facts.imageWarnings = this.warnings;
  }
}

/**
 * Render every page into `<workDir>/pages.zip` (stored, not deflated: JPEG is compressed already).
 * A page whose images pdf.js could not decode is still included, marked in its entry name
 * (`page-3-images-not-decoded.jpg`), so the user sees which pages are incomplete.
 */
async function writePagesZip(pdf: OpenPdf, options: ProcessorOptions, maxSide: number, undecoded: UndecodedImages): Promise<number> {
  const sink = Bun.file(join(options.workDir, "pages.zip")).writer();
  let failure: Error | null = null;
  // FileSink.write answers a promise when it has to wait, and a failed write (a full disk) only rejects
  // that promise — end() still resolves. Unwatched, the ZIP would be cut short and the rejection would be
  // unhandled (the processor child dies); every write's outcome is awaited and its error thrown instead.
  const writes: Promise<unknown>[] = [];
  const zip = new Zip((err, chunk) => {
    if (err) failure = err;
    else {
      const wrote = sink.write(chunk);
      if (wrote instanceof Promise) writes.push(wrote.catch((e: Error) => (failure ??= e)));
    }
  });
  const pages = pdf.doc.numPages;
  const digits = String(pages).length;
  let rendered = 0;
  for (let n = 1; n <= pages; n++) {
    const img = await renderPageJpeg(pdf, n, maxSide, options.pdfPageBudgetMs);
    if (!img) throw pageOverBudget("render", n, options.pdfPageBudgetMs);
    undecoded.note(n, img.imageWarnings);
    const mark = img.imageWarnings.length > 0 ? "-images-not-decoded" : "";
    const entry = new ZipPassThrough(`page-${String(n).padStart(digits, "0")}${mark}.jpg`);
    zip.add(entry);
    entry.push(img.jpeg, true);
    rendered++;
    options.onProgress?.(n, pages);
  }
  zip.end();
  await sink.end();
  await Promise.all(writes);
  if (failure) throw failure;
  return rendered;
}

/**
 * What pdf.js throws after the document opened (a page tree with a bad or missing kid, a
 * circular reference, an undecodable content stream) is a property of the file, the same on
 * every try: `corrupt` with the chat params of an unreadable PDF, never a crash that is
 * retried and blamed on memory (audit of issue 5, gap 1). Our own refusals pass unchanged.
 */
function brokenAfterOpen(err: unknown): unknown {
  if (err instanceof ProcessingError) return err;
  // A system error of our own writes (ENOSPC, EACCES) is not the file's fault.
  if (typeof (err as { code?: unknown })?.code === "string" && typeof (err as { syscall?: unknown }).syscall === "string") return err;
  const what = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return new ProcessingError("corrupt", { ext: "pdf", label: "PDF document", size: "none" }, `pdf.js after open: ${what.slice(0, 300)}`);
}

/** Render page 1 as the preview, unless it is drawn without its images or over budget (then say why in the facts). */
async function addPreview(pdf: OpenPdf, options: ProcessorOptions, outputs: ProcessorOutput[], facts: Record<string, unknown>, undecoded: UndecodedImages): Promise<void> {
  const preview = await renderPageJpeg(pdf, 1, Math.min(options.maxOutputSide, PREVIEW_MAX_SIDE), options.pdfPageBudgetMs);
  if (!preview) {
    facts.previewSkipped = "page 1 render over budget";
    return;
  }
  undecoded.note(1, preview.imageWarnings);
  if (preview.imageWarnings.length > 0) {
    // A page drawn without its images looks blank: never present it as the page.
    facts.previewSkipped = "page 1 images could not be decoded";
    return;
  }
  await Bun.write(join(options.workDir, "preview.jpg"), preview.jpeg);
  outputs.push(await outputFile(options, "preview.jpg", "-page1.jpg", "image/jpeg", "document"));
  facts.previewWidth = preview.width;
  facts.previewHeight = preview.height;
}

/**
 * Process a PDF file.
 * @param inputPath the source (may have junk before `%PDF-`)
 * @param options limits (maxPdfPages, pdfPageBudgetMs, maxOutputSide) and workDir
 * @throws ProcessingError `encrypted`, `truncated`, `corrupt`, `empty` (0 pages),
 *   `too_many_pages` ({pages, limit}), `processing_timeout` (a page over its budget),
 *   `pdf_engine_unavailable`; `corrupt` for anything pdf.js throws after the open
 */
export async function processPdf(inputPath: string, options: ProcessorOptions): Promise<ProcessorResult> {
  const pdf = await openPdf(inputPath, { maxImagePixels: options.maxInputPixels });
  try {
    const pages = pdf.doc.numPages;
    if (pages === 0) throw new ProcessingError("empty", { what: "pdf" }, "PDF has 0 pages");
    if (pages > options.maxPdfPages) {
      throw new ProcessingError("too_many_pages", { pages, limit: options.maxPdfPages }, `PDF has ${pages} pages, cap ${options.maxPdfPages}`);
    }
    const meta = await documentFacts(pdf);
    const outputs: ProcessorOutput[] = [];
    const layer = await extractText(pdf, options.pdfPageBudgetMs, options.action === "pages" ? undefined : options.onProgress);
    const facts: Record<string, unknown> = { type: "application/pdf", label: "PDF document", pages, ...meta, textChars: layer.chars };

    const undecoded = new UndecodedImages();
    if (options.action === "pages") {
      facts.renderedPages = await writePagesZip(pdf, options, Math.min(options.maxOutputSide, PAGES_MAX_SIDE), undecoded);
      outputs.push(await outputFile(options, "pages.zip", "-pages.zip", "application/zip", "document"));
    } else {
      const searchable = options.action === "searchable";
      // The preview first: a page over the OCR budget stops pdf.js, and nothing can be drawn after.
      if (!searchable) await addPreview(pdf, options, outputs, facts, undecoded);
      let text = layer.text;
      let chars = layer.chars;
      if (options.ocr) {
        // A preview over its budget stopped pdf.js (render.ts: the document is unusable after; a
        // page not yet loaded would never answer): recognition reads the file again on a fresh thread.
        const again = pdf.worker.stopped ? await openPdf(inputPath, { maxImagePixels: options.maxInputPixels }) : null;
        const ocr = await recognizeNeeded(again ?? pdf, layer.pageChars, options.ocr, options, searchable).finally(() => again && closePdf(again));
        if (ocr) {
          facts.ocr = ocr.facts;
          for (const [n, w] of ocr.imageWarnings) undecoded.note(n, w);
          text = mergeRecognized(layer.pageTexts, ocr.texts);
          const recognizedChars = [...ocr.texts.values()].reduce((sum, t) => sum + t.replace(/\s+/g, "").length, 0);
          facts.recognizedChars = recognizedChars;
          chars += recognizedChars;
          if (searchable && ocr.facts.recognized > 0) {
            const made = await searchablePdf(inputPath, ocr, pages, options.ocr, options);
            if ("path" in made) outputs.push(await outputFile(options, "searchable.pdf", "-searchable.pdf", "application/pdf", "document"));
            else facts.searchableSkipped = made.skipped;
          }
        } else if (searchable) facts.searchableSkipped = SEARCHABLE_NOT_NEEDED;
      } else if (options.ocrUnavailable && pagesNeedingOcr(layer.pageChars).length > 0) {
        facts.ocrUnavailable = true;
      }
      if (chars > 0) {
        await Bun.write(join(options.workDir, "text.txt"), text);
        outputs.unshift(await outputFile(options, "text.txt", ".txt", "text/plain; charset=utf-8", "document"));
      }
    }
    undecoded.addTo(facts);
    for (const k of Object.keys(facts)) if (facts[k] === undefined) delete facts[k];
    return { outputs, facts: facts as Facts };
  } catch (err) {
    throw brokenAfterOpen(err);
  } finally {
    await closePdf(pdf);
  }
}
