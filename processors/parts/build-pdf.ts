/**
 * The "parts" processor (issue 13 item 5, issue 15 item 3): the files of a multi-part job (an album)
 * become ONE PDF, pages in album order. An image becomes one page (auto-oriented; a JPEG or PNG without
 * an EXIF rotation is embedded as it is, anything else re-encoded by sharp), a PDF contributes all its
 * pages (pdf-lib `copyPages`: text and vectors kept). A BMP goes through the image processor's decoder
 * (processors/image/bmp.ts: sharp has no BMP loader). A part that is neither, or that cannot be read, is
 * left out and named in the facts (`failedParts`); the rest still makes the PDF. The output is written
 * with pdf-lib (the maintained `@cantoo/pdf-lib` fork) and opened again with pdf.js before it is returned.
 * With the chat's `searchable` setting (and OCR available) the album PDF then goes through the PDF
 * processor's OCR path: its `.txt` and the searchable PDF are returned instead.
 */
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { PDFDocument } from "@cantoo/pdf-lib";
import sharp from "sharp";
import { detectFile } from "../detect.ts";
import { bmpInput } from "../image/bmp.ts";
import { sharpFailure } from "../image/errors.ts";
import { outputFile } from "../naming.ts";
import { loadPdf, savePdf } from "../pdftools/load.ts";
import { processPdf } from "../pdf/process-pdf.ts";
import { ProcessingError, type Facts, type PartInput, type ProcessorOptions, type ProcessorResult } from "../types.ts";

/** Longest side of an image page, PostScript points (A4's long side, 297 mm): photos become A4-sized pages. */
export const IMAGE_PAGE_LONG_SIDE_PT = 842;

/** A part left out of the output: its 1-based album position, declared name and why (reason code + chat params). */
export interface FailedPart {
  readonly part: number;
  readonly name: string | null;
  readonly reason: string;
  readonly params: Readonly<Record<string, string | number>>;
}

/** Page size of an image page: the image's aspect ratio, long side {@link IMAGE_PAGE_LONG_SIDE_PT}. */
export function imagePageSize(width: number, height: number): { width: number; height: number } {
  const scale = IMAGE_PAGE_LONG_SIDE_PT / Math.max(width, height);
  return { width: width * scale, height: height * scale };
}

/** The encoded image to embed: the original bytes when pdf-lib can take them as they are, else a sharp re-encode. */
async function pageImage(path: string, maxInputPixels: number, ext: string, label: string): Promise<{ bytes: Uint8Array; png: boolean; width: number; height: number }> {
  if (ext === "bmp") {
    // sharp has no BMP loader: the image processor's decoder (bmp-ts, the pixel limit first), then JPEG, or PNG with alpha.
    const raw = await bmpInput(path, maxInputPixels);
    const alpha = raw.channels === 4;
    try {
      const { data, info } = alpha ? await raw.pipeline.png().toBuffer({ resolveWithObject: true }) : await raw.pipeline.jpeg({ quality: 90 }).toBuffer({ resolveWithObject: true });
      return { bytes: data, png: alpha, width: info.width, height: info.height };
    } catch (err) {
      throw sharpFailure(err, { ext, label });
    }
  }
  try {
    const meta = await sharp(path, { limitInputPixels: maxInputPixels }).metadata();
    const upright = meta.orientation === undefined || meta.orientation === 1;
    const simple = upright && (meta.pages ?? 1) === 1 && meta.width !== undefined && meta.height !== undefined;
    if (simple && meta.format === "jpeg" && meta.space !== "cmyk") return { bytes: await readFile(path), png: false, width: meta.width!, height: meta.height! };
    if (simple && meta.format === "png" && (meta.bitsPerSample ?? 8) <= 8) return { bytes: await readFile(path), png: true, width: meta.width!, height: meta.height! };
    // Everything else (WebP, TIFF, AVIF, HEIF, GIF, EXIF-rotated, CMYK): decode once, turn upright, re-encode.
    const img = sharp(path, { limitInputPixels: maxInputPixels }).rotate();
    const alpha = meta.hasAlpha === true;
    const { data, info } = alpha ? await img.png().toBuffer({ resolveWithObject: true }) : await img.toColourspace("srgb").jpeg({ quality: 90 }).toBuffer({ resolveWithObject: true });
    return { bytes: data, png: alpha, width: info.width, height: info.height };
  } catch (err) {
    throw sharpFailure(err, { ext, label });
  }
}

/** Append the pages of PDF part `path` to `out`; throws ProcessingError (`encrypted`, `truncated`, `corrupt`, `empty`). */
async function appendPdf(out: PDFDocument, path: string): Promise<number> {
  const src = await loadPdf(path);
  for (const page of await out.copyPages(src, src.getPageIndices())) out.addPage(page);
  return src.getPageCount();
}

/**
 * Build one PDF from `parts` (album order).
 * @param parts the parts on disk, in album order (1-based `n` kept in the facts)
 * @param options limits (maxInputPixels, maxPdfPages) and the attempt's workDir
 * @returns one output (`<first part's name or "album">.pdf`) and facts `{ pages, parts, failedParts }`
 * @throws ProcessingError the first part's reason when no part could be used; `too_many_pages` over
 *   MAX_PDF_PAGES; `processing_crashed` when pdf.js does not read the written PDF back with its pages
 */
export async function buildPdfFromParts(parts: readonly PartInput[], options: ProcessorOptions): Promise<ProcessorResult> {
  const out = await PDFDocument.create();
  const failed: FailedPart[] = [];
  let firstError: ProcessingError | null = null;
  let used = 0;
  for (const [i, part] of parts.entries()) {
    const n = part.n ?? i + 1;
    try {
      const { size } = await stat(part.path);
      if (size === 0) throw new ProcessingError("empty", { what: "file" }, `part ${n} is 0 bytes`);
      const d = await detectFile(part.path);
      if (d.kind === "image") {
        const img = await pageImage(part.path, options.maxInputPixels, d.ext, d.label);
        const embedded = img.png ? await out.embedPng(img.bytes) : await out.embedJpg(img.bytes);
        const box = imagePageSize(img.width, img.height);
        out.addPage([box.width, box.height]).drawImage(embedded, { x: 0, y: 0, width: box.width, height: box.height });
      } else if (d.kind === "pdf") {
        await appendPdf(out, part.path);
      } else {
        throw new ProcessingError("unsupported_type", { ext: d.ext, label: d.label }, `part ${n} is ${d.label} (${d.mime})`);
      }
      used++;
    } catch (err) {
      if (!(err instanceof ProcessingError)) throw err;
      firstError ??= err;
      failed.push({ part: n, name: part.name, reason: err.reason, params: err.params });
    }
    if (out.getPageCount() > options.maxPdfPages) {
      throw new ProcessingError("too_many_pages", { pages: out.getPageCount(), limit: options.maxPdfPages }, `album has over ${options.maxPdfPages} pages`);
    }
    options.onProgress?.(i + 1, parts.length);
  }
  if (used === 0) throw firstError ?? new ProcessingError("empty", { what: "file" }, "album without parts");
  const pages = out.getPageCount();
  const albumPath = join(options.workDir, "album.pdf");
  await savePdf(out, albumPath);
  const named = parts.find((p) => p.name)?.name ?? null;
  const facts: Facts = { type: "application/pdf", label: "PDF document", pages, parts: parts.length, ...(failed.length > 0 ? { failedParts: failed } : {}) };
  const album = await outputFile({ ...options, declaredName: named }, "album.pdf", ".pdf", "application/pdf", "album");
  if (options.action === "searchable" && options.ocr) {
    // The chat asked for searchable PDFs (issue 13 item 5): the album's pages are recognized like any
    // scan (processors/pdf, the OCR path) and come back with their text and an invisible text layer.
    const { parts: _parts, ...rest } = options;
    const ocr = await processPdf(albumPath, { ...rest, declaredName: named ?? "album.pdf" });
    const searchable = ocr.outputs.some((o) => o.mime === "application/pdf");
    return { outputs: searchable ? ocr.outputs : [album, ...ocr.outputs], facts: { ...ocr.facts, ...facts } };
  }
  return { outputs: [album], facts };
}
