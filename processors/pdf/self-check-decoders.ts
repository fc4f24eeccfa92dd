/**
 * The built-in scan page of the start-up self-check (issue 13 §1): one PDF page with the three
 * image kinds that pdf.js decodes only with its wasm modules (`pdfjs-dist/wasm/`), each a 64×32
 * bitmap whose left half is black and right half white:
 * - CCITT G4 (`/CCITTFaxDecode`, K −1): fax-style scans (`tiff2pdf` of a Group 4 TIFF);
 * - JBIG2 (`/JBIG2Decode`, embedded stream): a page-information segment, an immediate generic
 *   region coded with MMR, end of page (ITU-T T.88 §7.4.8, §7.4.6, §6.2.6);
 * - JPEG 2000 (`/JPXDecode`): a raw J2K codestream (ISO/IEC 15444-1 annex A).
 * How the bytes were made (once): ImageMagick `convert -size 64x32 xc:white -fill black -draw
 * "rectangle 0,0 31,31"`, then `-compress Group4` to a TIFF (its one strip is {@link G4_64x32}),
 * and `opj_compress` of the same grey image to `.j2k` ({@link J2K_64x32}).
 * test/processors/decoders.test.ts regenerates both with those tools and checks the render.
 */

/** CCITT Group 4 data of the 64×32 bitmap (left half black), as in the TIFF strip. */
export const G4_64x32 = "26a0d5fffffffffffffffffffffff8008008";

/** The same bitmap as a JPEG 2000 codestream (8-bit grey, lossless), base64. */
export const J2K_64x32 =
  "/0//UQApAAAAAABAAAAAIAAAAAAAAAAAAAAAQAAAACAAAAAAAAAAAAABBwEB/1IADAAAAAEABQQEAAH/XAATQEBISFBISFBISFBISFBISFD/ZAAlAAFDcmVhdGVkIGJ5IE9wZW5KUEVHIHZlcnNpb24gMi41LjD/kAAKAAAAAABQAAH/k9+AIAe5yH/H2gYACbQLx9oMAA4Fx6kiGc/AJCFt7iP1qnePzs/AQDXyPbBcwOYiu7smAEg+xRfH2g4AXvrFMS7/f//Z";

/** Width and height of each built-in bitmap, px. */
export const BITMAP = { width: 64, height: 32 } as const;

/** One image kind of the check page: what it is called in a failure, and its place on the page. */
export interface DecoderKind {
  /** Operator-facing name of the decoder. */
  readonly name: string;
  /** The pdf.js module that decodes it (what is missing when it fails). */
  readonly module: string;
  /** Left edge of the image on the page, pt (each is 64 × 32 pt, at y 10). */
  readonly x: number;
}

/** The three kinds, left to right on the 240 × 52 pt page. */
export const DECODER_KINDS: readonly DecoderKind[] = [
  { name: "CCITT fax (CCITTFaxDecode)", module: "pdfjs-dist/wasm/jbig2.wasm", x: 8 },
  { name: "JBIG2 (JBIG2Decode)", module: "pdfjs-dist/wasm/jbig2.wasm", x: 88 },
  { name: "JPEG 2000 (JPXDecode)", module: "pdfjs-dist/wasm/openjpeg.wasm", x: 168 },
];

/** Page size of the check page, pt. */
export const CHECK_PAGE = { width: 240, height: 52, imageY: 10 } as const;

/** Bytes of a hex string. */
function fromHex(hex: string): Uint8Array {
  return Uint8Array.from(hex.match(/../g)!, (h) => parseInt(h, 16));
}

/** A 32-bit big-endian number as 4 bytes. */
function u32(n: number): number[] {
  return [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
}

/**
 * A JBIG2 embedded stream (no file header; PDF 32000-1 §7.4.7) holding one page with one
 * MMR-coded generic region: MMR is the T.6 (G4) code, so the G4 bytes are the region's data.
 * Segment header: number (4), flags (type; 1-byte page association), referred-to count 0,
 * page 1, data length (4) — T.88 §7.2.
 */
export function jbig2Mmr(g4: Uint8Array, width: number, height: number): Uint8Array {
  const segment = (num: number, type: number, data: number[]): number[] => [...u32(num), type, 0, 1, ...u32(data.length), ...data];
  const pageInfo = [...u32(width), ...u32(height), ...u32(0), ...u32(0), 0, 0, 0]; // T.88 §7.4.8: no resolution, flags 0, no striping
  const region = [...u32(width), ...u32(height), ...u32(0), ...u32(0), 0, /* generic region flags: MMR */ 1, ...g4]; // §7.4.1 + §7.4.6.2
  return Uint8Array.from([...segment(0, 48, pageInfo), ...segment(1, 38, region), ...segment(2, 49, [])]);
}

/**
 * The check page as PDF bytes, written with pdf-lib (a maintained PDF writer; the image streams are
 * stored as given, with their own filters).
 */
export async function decodersCheckPdf(): Promise<Uint8Array> {
  const { PDFDocument, PDFName, concatTransformationMatrix, drawObject, popGraphicsState, pushGraphicsState } = await import("@cantoo/pdf-lib");
  const doc = await PDFDocument.create();
  const page = doc.addPage([CHECK_PAGE.width, CHECK_PAGE.height]);
  const { width, height } = BITMAP;
  const g4 = fromHex(G4_64x32);
  const common = { Type: "XObject", Subtype: "Image", Width: width, Height: height };
  const streams = [
    doc.context.stream(g4, { ...common, BitsPerComponent: 1, ColorSpace: "DeviceGray", Filter: "CCITTFaxDecode", DecodeParms: { K: -1, Columns: width, Rows: height } }),
    doc.context.stream(jbig2Mmr(g4, width, height), { ...common, BitsPerComponent: 1, ColorSpace: "DeviceGray", Filter: "JBIG2Decode" }),
    doc.context.stream(Uint8Array.from(atob(J2K_64x32), (c) => c.charCodeAt(0)), { ...common, Filter: "JPXDecode" }),
  ];
  for (const [i, stream] of streams.entries()) {
    const name = `Im${i}`;
    page.node.setXObject(PDFName.of(name), doc.context.register(stream));
    page.pushOperators(pushGraphicsState(), concatTransformationMatrix(width, 0, 0, height, DECODER_KINDS[i]!.x, CHECK_PAGE.imageY), drawObject(name), popGraphicsState());
  }
  return doc.save({ useObjectStreams: false });
}

/** Grey level of an RGBA pixel (0 black … 255 white). */
function grey(data: Uint8ClampedArray, i: number): number {
  return (data[i]! + data[i + 1]! + data[i + 2]!) / 3;
}

/**
 * Which kinds did not come out right on a render of the check page at 1 px per pt: the centre of
 * each image's left half must be dark (< 64) and of its right half light (> 192).
 * @param rgba the canvas pixels (RGBA, row-major)
 * @param canvasWidth px per row
 * @param canvasHeight rows
 * @returns the kinds that failed, in page order (empty: all decoded)
 */
export function failedKinds(rgba: Uint8ClampedArray, canvasWidth: number, canvasHeight: number): DecoderKind[] {
  // The page's y axis points up; the canvas's down.
  const y = Math.round(canvasHeight - (CHECK_PAGE.imageY + BITMAP.height / 2));
  const at = (x: number): number => grey(rgba, (y * canvasWidth + Math.round(x)) * 4);
  return DECODER_KINDS.filter((k) => !(at(k.x + BITMAP.width / 4) < 64 && at(k.x + (3 * BITMAP.width) / 4) > 192));
}
