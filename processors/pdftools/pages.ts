/**
 * Rotate, extract and split (issue 15 items 2 and 5) with pdf-lib: rotation sets each page's `/Rotate`
 * (no re-rendering: text and vectors stay as they are); extract copies the chosen pages into one new PDF,
 * split into one PDF per range. Each output keeps the source's use of object streams (load.ts
 * `usesObjectStreams`) and is opened again with pdf.js before it is returned.
 */
import { join } from "node:path";
import { degrees, PDFDocument } from "@cantoo/pdf-lib";
import { outputFile } from "../naming.ts";
import { pagesOf, type PageRange } from "../page-ranges.ts";
import { ProcessingError, type Facts, type ProcessorOptions, type ProcessorOutput, type ProcessorResult } from "../types.ts";
import type { Rotation } from "./action.ts";
import { loadPdf, savePdf, usesObjectStreams } from "./load.ts";
import { viewedAngle } from "../pdf/rotation.ts";

/** A range past the document's end: the range was checked against the page count at the press, so the file is not the one checked. */
function checkRanges(ranges: readonly PageRange[], pages: number): void {
  const bad = ranges.find((r) => r.to > pages);
  if (bad) throw new ProcessingError("corrupt", { ext: "pdf", label: "PDF document", size: "none" }, `range ${bad.from}-${bad.to} past the end of a ${pages}-page PDF`);
}

/**
 * Turn pages clockwise by `by` degrees (added to each page's own rotation as viewers show it: {@link viewedAngle}).
 * @param ranges pages to turn (null: all)
 * @returns one output `<name>-rotated.pdf`; facts `pages`, `rotated` (pages turned), `degrees`
 */
export async function rotatePdf(inputPath: string, options: ProcessorOptions, by: Rotation, ranges: readonly PageRange[] | null): Promise<ProcessorResult> {
  const doc = await loadPdf(inputPath, options.maxPdfPages);
  const pages = doc.getPageCount();
  if (ranges) checkRanges(ranges, pages);
  const chosen = new Set(ranges ? pagesOf(ranges) : Array.from({ length: pages }, (_, i) => i + 1));
  const want: number[] = [];
  for (const [i, page] of doc.getPages().entries()) {
    const angle = (viewedAngle(page.getRotation().angle) + (chosen.has(i + 1) ? by : 0)) % 360;
    page.setRotation(degrees(angle));
    want.push(angle);
  }
  // pdf.js must see the rotation written (issue 15: outputs opened and checked before `ready`): every
  // page's /Rotate is read back — the turned ones turned, the others as they were.
  const all = want.map((_, i) => i + 1);
  const saved = await savePdf(doc, join(options.workDir, "rotated.pdf"), all, usesObjectStreams(doc));
  const wrong = all.find((n) => saved.rotations.get(n) !== want[n - 1]);
  if (wrong !== undefined) throw new ProcessingError("processing_crashed", {}, `pdf.js reads page ${wrong} rotated ${saved.rotations.get(wrong)}°, ${want[wrong - 1]}° was written`);
  const facts: Facts = { type: "application/pdf", label: "PDF document", pages, rotated: chosen.size, degrees: by };
  return { outputs: [await outputFile(options, "rotated.pdf", "-rotated.pdf", "application/pdf", "document")], facts };
}

/** A new document with pages `numbers` (1-based, in order) of `src`. */
async function pick(src: PDFDocument, numbers: readonly number[]): Promise<PDFDocument> {
  const out = await PDFDocument.create();
  for (const page of await out.copyPages(src, numbers.map((n) => n - 1))) out.addPage(page);
  return out;
}

/**
 * Extract pages into one PDF, in the order given.
 * @returns one output `<name>-pages-<ranges>.pdf`; facts `pages` (of the source), `extracted`
 */
export async function extractPdf(inputPath: string, options: ProcessorOptions, ranges: readonly PageRange[], label: string): Promise<ProcessorResult> {
  const src = await loadPdf(inputPath, options.maxPdfPages);
  checkRanges(ranges, src.getPageCount());
  const numbers = pagesOf(ranges);
  await savePdf(await pick(src, numbers), join(options.workDir, "extract.pdf"), [], usesObjectStreams(src));
  const facts: Facts = { type: "application/pdf", label: "PDF document", pages: src.getPageCount(), extracted: numbers.length, outputPages: numbers.length };
  return { outputs: [await outputFile(options, "extract.pdf", `-pages-${label}.pdf`, "application/pdf", "document")], facts };
}

/**
 * Split into one PDF per range (in the order given).
 * @returns outputs `<name>-<from>-<to>.pdf`, one per range; facts `pages` (of the source), `parts`
 */
export async function splitPdf(inputPath: string, options: ProcessorOptions, ranges: readonly PageRange[]): Promise<ProcessorResult> {
  const src = await loadPdf(inputPath, options.maxPdfPages);
  checkRanges(ranges, src.getPageCount());
  const outputs: ProcessorOutput[] = [];
  for (const [i, r] of ranges.entries()) {
    const name = `split-${i}.pdf`;
    await savePdf(await pick(src, pagesOf([r])), join(options.workDir, name), [], usesObjectStreams(src));
    outputs.push(await outputFile(options, name, r.from === r.to ? `-p${r.from}.pdf` : `-p${r.from}-${r.to}.pdf`, "application/pdf", "document"));
    options.onProgress?.(i + 1, ranges.length);
  }
  const facts: Facts = { type: "application/pdf", label: "PDF document", pages: src.getPageCount(), splitParts: ranges.length };
  return { outputs, facts };
}
