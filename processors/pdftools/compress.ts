/**
 * Compress (issue 15 item 4): re-encode the large raster images inside a PDF with sharp at the chosen
 * level's resolution and JPEG quality (processors/pdftools/action.ts `COMPRESS_LEVELS`); text, fonts and
 * vector content are not touched. An image is replaced only when its new encoding is smaller. The output
 * reports the size before and after; when it is not smaller than the input, the facts say so
 * (`notSmaller`) and no file is returned: the bot sends the original back by its `file_id`.
 */
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { inflateSync } from "node:zlib";
import { PDFArray, PDFDict, PDFName, PDFNumber, PDFRawStream, PDFRef, type PDFDocument } from "@cantoo/pdf-lib";
import sharp, { type Sharp } from "sharp";
import { outputFile } from "../naming.ts";
import { type Facts, type ProcessorOptions, type ProcessorResult } from "../types.ts";
import { COMPRESS_LEVELS, type CompressLevel } from "./action.ts";
import { loadPdf, savePdf } from "./load.ts";

/** Images smaller than this (encoded stream bytes) are left alone: re-encoding them saves nothing worth a generation loss. */
export const MIN_IMAGE_BYTES = 32 * 1024;

/** How many colour channels a simple colour space has, or null for one we do not re-encode (Indexed, Lab, DeviceN, …). */
function channelsOf(doc: PDFDocument, cs: unknown): 1 | 3 | null {
  const v = cs instanceof PDFRef ? doc.context.lookup(cs) : cs;
  if (v instanceof PDFName) return v === PDFName.of("DeviceGray") ? 1 : v === PDFName.of("DeviceRGB") ? 3 : null;
  if (v instanceof PDFArray && v.get(0) === PDFName.of("ICCBased")) {
    const stream = doc.context.lookup(v.get(1));
    const n = stream && "dict" in (stream as object) ? (stream as PDFRawStream).dict.get(PDFName.of("N")) : undefined;
    return n instanceof PDFNumber ? (n.asNumber() === 1 ? 1 : n.asNumber() === 3 ? 3 : null) : null;
  }
  return null;
}

/** The single filter of a stream (`DCTDecode`, `FlateDecode`), `none`, or null when there are several. */
function filterOf(dict: PDFDict): string | null {
  const f = dict.get(PDFName.of("Filter"));
  if (f === undefined) return "none";
  if (f instanceof PDFName) return f.decodeText();
  if (f instanceof PDFArray && f.size() === 1 && f.get(0) instanceof PDFName) return (f.get(0) as PDFName).decodeText();
  return null;
}

/** Longest page side of the document, points (the images are sized for a page this big at the level's dpi). */
function longestPageSide(doc: PDFDocument): number {
  let max = 0;
  for (const p of doc.getPages()) max = Math.max(max, p.getWidth(), p.getHeight());
  return max || 842;
}

/**
 * Re-encode one image stream when that makes it smaller; the new stream, or null to keep it.
 * Only 8-bit Gray/RGB images (DCT or Flate without a predictor, no Decode array, not a mask) are touched.
 */
async function reencode(doc: PDFDocument, stream: PDFRawStream, maxSide: number, quality: number): Promise<PDFRawStream | null> {
  const d = stream.dict;
  if (d.get(PDFName.of("Subtype")) !== PDFName.of("Image")) return null;
  if (stream.contents.byteLength < MIN_IMAGE_BYTES) return null;
  if (d.get(PDFName.of("ImageMask")) !== undefined || d.get(PDFName.of("Decode")) !== undefined) return null;
  const width = (d.get(PDFName.of("Width")) as PDFNumber | undefined)?.asNumber();
  const height = (d.get(PDFName.of("Height")) as PDFNumber | undefined)?.asNumber();
  const bpc = (d.get(PDFName.of("BitsPerComponent")) as PDFNumber | undefined)?.asNumber();
  const channels = channelsOf(doc, d.get(PDFName.of("ColorSpace")));
  const filter = filterOf(d);
  if (!width || !height || channels === null) return null;
  let img: Sharp;
  if (filter === "DCTDecode") img = sharp(stream.contents);
  else if (filter === "FlateDecode" && bpc === 8 && d.get(PDFName.of("DecodeParms")) === undefined) {
    const raw = inflateSync(stream.contents);
    if (raw.byteLength !== width * height * channels) return null;
    img = sharp(raw, { raw: { width, height, channels } });
  } else return null;
  const { data, info } = await img
    .resize({ width: maxSide, height: maxSide, fit: "inside", withoutEnlargement: true })
    .toColourspace(channels === 1 ? "b-w" : "srgb")
    .jpeg({ quality, mozjpeg: false })
    .toBuffer({ resolveWithObject: true });
  if (data.byteLength >= stream.contents.byteLength) return null;
  const dict = d.clone(doc.context);
  dict.set(PDFName.of("Filter"), PDFName.of("DCTDecode"));
  dict.delete(PDFName.of("DecodeParms"));
  dict.set(PDFName.of("Width"), PDFNumber.of(info.width));
  dict.set(PDFName.of("Height"), PDFNumber.of(info.height));
  dict.set(PDFName.of("BitsPerComponent"), PDFNumber.of(8));
  dict.set(PDFName.of("ColorSpace"), PDFName.of(info.channels === 1 ? "DeviceGray" : "DeviceRGB"));
  dict.set(PDFName.of("Length"), PDFNumber.of(data.byteLength));
  return PDFRawStream.of(dict, new Uint8Array(data));
}

/**
 * Compress the PDF at `inputPath` at `level`.
 * @returns `<name>-compressed.pdf` and facts `sizeBefore`, `sizeAfter` (bytes), `imagesRecoded`; or no
 *   output and `notSmaller: true` when the result would not be smaller than the input
 * @throws ProcessingError of {@link loadPdf} (`encrypted`, `corrupt`, `empty`, `too_many_pages`)
 */
export async function compressPdf(inputPath: string, options: ProcessorOptions, level: CompressLevel): Promise<ProcessorResult> {
  const { dpi, quality } = COMPRESS_LEVELS[level];
  const before = (await stat(inputPath)).size;
  const doc = await loadPdf(inputPath, options.maxPdfPages);
  const maxSide = Math.round((longestPageSide(doc) / 72) * dpi);
  let recoded = 0;
  const images = doc.context.enumerateIndirectObjects().filter(([, o]) => o instanceof PDFRawStream) as Array<[PDFRef, PDFRawStream]>;
  for (const [i, [ref, stream]] of images.entries()) {
    const next = await reencode(doc, stream, maxSide, quality);
    if (next) {
      doc.context.assign(ref, next);
      recoded++;
    }
    if (i % 16 === 0) options.onProgress?.(i + 1, images.length);
  }
  const path = join(options.workDir, "compressed.pdf");
  const saved = await savePdf(doc, path);
  const facts: Facts = { type: "application/pdf", label: "PDF document", pages: doc.getPageCount(), sizeBefore: before, sizeAfter: saved.size, imagesRecoded: recoded, level };
  if (saved.size >= before) return { outputs: [], facts: { ...facts, notSmaller: true } };
  return { outputs: [await outputFile(options, "compressed.pdf", "-compressed.pdf", "application/pdf", "document")], facts };
}
