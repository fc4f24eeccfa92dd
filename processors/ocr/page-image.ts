/**
 * The scan's own pixels as the OCR raster, without drawing the page (issue 13 §6: where docket's OCR
 * time went). A typical scanned page is one image painted over the whole page and nothing else. For
 * such a page, drawing it with pdf.js onto a canvas at the OCR resolution only resamples the image
 * pdf.js already decoded, and then the canvas's RGBA pixels are turned back into grey: measured on a
 * 300-dpi CCITT G4 page, ≈ 0.4–0.6 s of drawing and ≈ 0.15–0.3 s of conversion, against ≈ 20–30 ms
 * for the operator list and the decoded image (`bun bench/ocr/run.ts`, docs/benchmarks.md "OCR").
 * ocrmypdf pays ≈ 0.06–0.1 s per page for Ghostscript's `pngmono` raster of the same page.
 *
 * So when a page's operator list is exactly one upright image covering the page (save, transform,
 * dependency, paintImageXObject, restore, marked content), and the image's resolution is close to
 * the OCR resolution, the raster is the decoded image itself: a 1-bit image goes to Tesseract as PBM
 * unchanged (pdf.js's `GRAYSCALE_1BPP` rows are PBM's rows with the bits inverted), grey or colour as
 * 8-bit PGM (raster.ts), as bytes for Tesseract's stdin. Every other page is drawn as before.
 *
 * The rule "the input is always the raster docket renders, never the user's file" holds: the pixels
 * are pdf.js's decode of the page's image, written by docket as Netpbm; Tesseract never parses
 * the user's bytes.
 * Source: pdfjs-dist 6.5 `src/display/canvas.js` (`paintImageXObject`, `putBinaryImageData`:
 * `GRAYSCALE_1BPP` bit 1 = white, rows ⌈w/8⌉ bytes; `RGB_24BPP`; `RGBA_32BPP`), `src/shared/util.js`
 * (`ImageKind`, `OPS`).
 */
import { OVER_BUDGET, withBudget } from "../budget.ts";
import type { OpenPdf } from "../pdf/open.ts";
import { isImageDecodeWarning } from "../pdf/warnings.ts";
import { isBilevel, netpbm, rgbaToGrey } from "./raster.ts";

/** pdf.js `ImageKind` values (src/shared/util.js). */
const GRAYSCALE_1BPP = 1;
const RGB_24BPP = 2;
const RGBA_32BPP = 3;

/**
 * How far the image's resolution may be from the OCR resolution and still be used as it is
 * (a factor either way): 300-dpi OCR takes 225–400-dpi scans directly; others are drawn at the OCR dpi.
 */
const DPI_TOLERANCE = 4 / 3;
/** How far the image may miss the page's edges, as a share of the page's side. */
const COVER_TOLERANCE = 0.005;

/** A page raster taken from the page's one image. */
export interface DirectRaster {
  /** Netpbm bytes for Tesseract's stdin: P4 (1-bit) or P5 (8-bit grey); never written to disk. */
  readonly bytes: Uint8Array;
  readonly width: number;
  readonly height: number;
  /** The image's resolution on the page, dots per inch (rounded), passed to Tesseract. */
  readonly dpi: number;
}

/** What {@link directPageRaster} found. */
export type DirectOutcome =
  /** Written: the page is one upright image at a usable resolution. */
  | { readonly kind: "raster"; readonly raster: DirectRaster }
  /** Draw the page instead; `imageWarnings` are pdf.js's image-decode warnings met meanwhile. */
  | { readonly kind: "draw"; readonly imageWarnings: readonly string[] }
  /** The page paints no image at all: nothing a scanner made, so nothing to recognize. */
  | { readonly kind: "no_image" }
  /** Building the operator list took longer than the budget: pdf.js was stopped (the document is unusable). */
  | { readonly kind: "over_budget" };

type Matrix = readonly [number, number, number, number, number, number];

/** `m × n` in PDF's row-vector convention (apply `m` first, then `n`), as pdf.js's `Util.transform(n, m)`. */
function multiply(n: Matrix, m: Matrix): Matrix {
  return [n[0] * m[0] + n[2] * m[1], n[1] * m[0] + n[3] * m[1], n[0] * m[2] + n[2] * m[3], n[1] * m[2] + n[3] * m[3], n[0] * m[4] + n[2] * m[5] + n[4], n[1] * m[4] + n[3] * m[5] + n[5]];
}

/** pdf.js operators that paint an image (src/shared/util.js `OPS`). */
const IMAGE_OPS = ["paintImageXObject", "paintInlineImageXObject", "paintInlineImageXObjectGroup", "paintImageXObjectRepeat", "paintImageMaskXObject", "paintImageMaskXObjectGroup", "paintImageMaskXObjectRepeat", "paintSolidColorImageMask"] as const;

/**
 * Whether an operator list paints any image. A page with neither a usable text layer nor an image
 * (a blank page, a cover with a one-word title, vector drawings) holds nothing a scanner made.
 */
export function paintsImage(ops: Record<string, number>, fnArray: readonly number[]): boolean {
  const paint = new Set(IMAGE_OPS.map((name) => ops[name]));
  return fnArray.some((fn) => paint.has(fn));
}

/**
 * The one image of a page's operator list and where it is painted, or null when the list holds
 * anything else (text, paths, several images, masks, graphics state, a clip…).
 * @param ops pdf.js `OPS`
 * @returns the image's object id and the matrix mapping the unit square to page space
 */
export function singleImage(ops: Record<string, number>, fnArray: readonly number[], argsArray: readonly unknown[]): { id: string; ctm: Matrix } | null {
  const neutral = new Set([ops.dependency, ops.beginMarkedContent, ops.beginMarkedContentProps, ops.endMarkedContent]);
  let ctm: Matrix = [1, 0, 0, 1, 0, 0];
  const stack: Matrix[] = [];
  let found: { id: string; ctm: Matrix } | null = null;
  for (let i = 0; i < fnArray.length; i++) {
    const fn = fnArray[i]!;
    const args = argsArray[i] as unknown[] | null;
    if (neutral.has(fn)) continue;
    if (fn === ops.save) stack.push(ctm);
    else if (fn === ops.restore) ctm = stack.pop() ?? ctm;
    else if (fn === ops.transform) ctm = multiply(ctm, args as unknown as Matrix);
    else if (fn === ops.paintImageXObject && !found && typeof args?.[0] === "string") found = { id: args[0], ctm };
    else return null;
  }
  return found;
}

/**
 * Whether the image painted by `ctm` is upright, unflipped and covers the page's box `view`
 * ([x0, y0, x1, y1], pt) to within {@link COVER_TOLERANCE}.
 */
export function coversPage(ctm: Matrix, view: readonly number[]): boolean {
  const [a, b, c, d, e, f] = ctm;
  const [x0, y0, x1, y1] = view as [number, number, number, number];
  const w = x1 - x0;
  const h = y1 - y0;
  const near = (v: number, want: number, side: number): boolean => Math.abs(v - want) <= COVER_TOLERANCE * side;
  return b === 0 && c === 0 && a > 0 && d > 0 && near(a, w, w) && near(d, h, h) && near(e, x0, w) && near(f, y0, h);
}

/** Invert a 1-bit image in place: pdf.js's 1 = white becomes PBM's 1 = black. */
function invertBits(bits: Uint8Array): void {
  for (let i = 0; i < bits.length; i++) bits[i] = ~bits[i]! & 0xff;
}

/** Grey pixels of pdf.js image data of `kind` (RGB or RGBA), BT.601 luma as raster.ts. */
function greyOf(kind: number, data: Uint8Array | Uint8ClampedArray, pixels: number): Uint8Array | null {
  if (kind === RGBA_32BPP) return rgbaToGrey(data, pixels);
  if (kind !== RGB_24BPP) return null;
  const grey = new Uint8Array(pixels);
  for (let i = 0, j = 0; i < pixels; i++, j += 3) grey[i] = (77 * data[j]! + 150 * data[j + 1]! + 29 * data[j + 2]!) >> 8;
  return grey;
}

/**
 * Page `pageNumber`'s OCR raster from its one image, when it is a plain scan (module comment).
 * @param dpi the OCR resolution asked for (OCR_DPI, already lowered to fit the raster caps)
 * @param budgetMs time allowed for pdf.js to build the page's operator list and decode its image, ms
 * @returns the raster, `draw` (draw the page instead), `no_image`, or `over_budget`
 * @throws whatever pdf.js throws for a broken page
 */
export async function directPageRaster(pdf: OpenPdf, pageNumber: number, dpi: number, budgetMs: number): Promise<DirectOutcome> {
  pdf.worker.takeWarnings(); // what came before belongs to earlier work
  const page = await pdf.doc.getPage(pageNumber);
  try {
    const ops = pdf.pdfjs.OPS as unknown as Record<string, number>;
    const image = async (): Promise<{ width: number; height: number; kind: number; data: Uint8Array } | null | "none"> => {
      const list = await page.getOperatorList();
      if (!paintsImage(ops, list.fnArray)) return "none";
      if (page.rotate % 360 !== 0) return null;
      const one = singleImage(ops, list.fnArray, list.argsArray);
      if (!one || !coversPage(one.ctm, page.view)) return null;
      const objs = one.id.startsWith("g_") ? page.commonObjs : page.objs;
      const data = await new Promise<unknown>((resolve) => objs.get(one.id, resolve));
      const img = data as { width?: number; height?: number; kind?: number; data?: Uint8Array } | null;
      if (!img?.data || !img.width || !img.height || !img.kind) return null; // e.g. an ImageBitmap
      return { width: img.width, height: img.height, kind: img.kind, data: img.data };
    };
    const img = await withBudget(image(), budgetMs);
    if (img === OVER_BUDGET) {
      pdf.worker.stop();
      return { kind: "over_budget" };
    }
    if (img === "none") {
      // A decode failure leaves no paint operator behind: such a page is drawn (and its warning kept).
      const warnings = pdf.worker.takeWarnings().filter(isImageDecodeWarning);
      return warnings.length > 0 ? { kind: "draw", imageWarnings: warnings } : { kind: "no_image" };
    }
    if (!img) return draw(pdf);
    const [x0, y0, x1, y1] = page.view as [number, number, number, number];
    const dpiX = img.width / ((x1 - x0) / 72);
    const dpiY = img.height / ((y1 - y0) / 72);
    const usable = Math.abs(dpiX - dpiY) <= 0.02 * dpiX && dpiX <= dpi * DPI_TOLERANCE && dpiX >= dpi / DPI_TOLERANCE;
    if (!usable) return draw(pdf);
    const warnings = pdf.worker.takeWarnings().filter(isImageDecodeWarning);
    if (warnings.length > 0) return { kind: "draw", imageWarnings: warnings };
    let bytes: Uint8Array;
    if (img.kind === GRAYSCALE_1BPP) {
      const stride = Math.ceil(img.width / 8);
      if (img.data.length < stride * img.height) return draw(pdf);
      const header = new TextEncoder().encode(`P4\n${img.width} ${img.height}\n`);
      bytes = new Uint8Array(header.length + stride * img.height);
      bytes.set(header);
      bytes.set(img.data.subarray(0, stride * img.height), header.length);
      invertBits(bytes.subarray(header.length));
    } else {
      const grey = greyOf(img.kind, img.data, img.width * img.height);
      if (!grey) return draw(pdf);
      bytes = netpbm(grey, img.width, img.height, isBilevel(grey));
    }
    return { kind: "raster", raster: { bytes, width: img.width, height: img.height, dpi: Math.round(dpiX) } };
  } finally {
    page.cleanup();
  }
}

/** The "draw it" outcome with the image-decode warnings pdf.js gave so far. */
function draw(pdf: OpenPdf): DirectOutcome {
  return { kind: "draw", imageWarnings: pdf.worker.takeWarnings().filter(isImageDecodeWarning) };
}
