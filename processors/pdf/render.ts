/**
 * Page rendering with pdf.js onto an @napi-rs/canvas canvas, encoded as JPEG
 * (DESIGN.md stack: "@napi-rs/canvas for rendering"), or handed over as grey pixels for OCR.
 */
import { OVER_BUDGET, withBudget } from "../budget.ts";
import { loadCanvas, type NapiCanvas } from "./engine.ts";
import type { OpenPdf } from "./open.ts";
import { isImageDecodeWarning } from "./warnings.ts";

/** JPEG quality for rendered pages (0–100). */
const JPEG_QUALITY = 82;

/** How big to draw a page: longest side in px, or a resolution in dots per inch. */
export type RenderSize = { readonly maxSide: number } | { readonly dpi: number };

/** A drawn page. */
export interface RenderedPage {
  readonly canvas: InstanceType<NapiCanvas["Canvas"]>;
  readonly width: number;
  readonly height: number;
  /**
   * pdf.js's warnings while this page was drawn that say one of its images was not decoded
   * (warnings.ts); non-empty means the drawing lacks those images (a blank "scan").
   */
  readonly imageWarnings: readonly string[];
}

/** Canvas scale for `size` on a page of `widthPt` × `heightPt` (1 pt = 1/72 in). */
function scaleFor(size: RenderSize, widthPt: number, heightPt: number): number {
  if ("dpi" in size) return size.dpi / 72;
  return Math.min(4, size.maxSide / Math.max(widthPt, heightPt));
}

/**
 * Draw one page on a white canvas within the page budget.
 * @param pdf the open document
 * @param pageNumber 1-based page number
 * @param size longest side (never above 4× the page's size in points) or a resolution
 * @param budgetMs time allowed for this page, ms
 * @returns the canvas and the page's image-decode warnings, or null when the budget ran out
 *   (render cancelled and the page worker stopped: the document is unusable afterwards, close it)
 * @throws whatever pdf.js throws for a broken page
 */
export async function renderPage(pdf: OpenPdf, pageNumber: number, size: RenderSize, budgetMs: number): Promise<RenderedPage | null> {
  const { createCanvas } = await loadCanvas();
  pdf.worker.takeWarnings(); // what came before belongs to earlier work
  const page = await pdf.doc.getPage(pageNumber);
  try {
    const base = page.getViewport({ scale: 1 });
    const viewport = page.getViewport({ scale: scaleFor(size, base.width, base.height) });
    const canvas = createCanvas(Math.max(1, Math.round(viewport.width)), Math.max(1, Math.round(viewport.height)));
    const ctx = canvas.getContext("2d");
    // JPEG has no alpha: paint the page white first (pdf.js leaves transparent areas).
    ctx.fillStyle = "#ffffff";
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    const task = page.render({ canvas: canvas as never, canvasContext: ctx as never, viewport, background: "rgb(255,255,255)" });
    // Two things would keep the budget from seeing the drawing: pdf.js draws in ~15 ms slices
    // but resumes the next slice with a microtask (the budget timer never runs), and Skia in
    // @napi-rs/canvas only records the drawing, rasterizing it at the next pixel read or at
    // encode() (seconds for a heavy page, after the budget check). So after each slice: read
    // one pixel (rasterize what the slice recorded), then resume on the event loop.
    const rasterize = (): void => void ctx.getImageData(0, 0, 1, 1);
    task.onContinue = (resume: () => void) => {
      rasterize();
      setImmediate(resume);
    };
    const done = await withBudget(task.promise.then(rasterize), budgetMs);
    if (done === OVER_BUDGET) {
      task.cancel(); // stops drawing at the next slice
      pdf.worker.stop(); // stops building the operator list (the thread is terminated)
      await task.promise.catch(() => undefined);
      return null;
    }
    const imageWarnings = pdf.worker.takeWarnings().filter(isImageDecodeWarning);
    return { canvas, width: canvas.width, height: canvas.height, imageWarnings };
  } finally {
    page.cleanup();
  }
}

/** sharp's module (default export), or null when it cannot be loaded. */
type SharpFn = typeof import("sharp").default;
let sharpLoad: Promise<SharpFn | null> | undefined;

/**
 * sharp, imported once by name at run time: a `bun build` bundle of the PDF processor does not
 * carry sharp's native parts (BR-11: bundles must still render), and then Skia encodes.
 */
function loadSharp(): Promise<SharpFn | null> {
  const name = "sharp";
  sharpLoad ??= import(name).then(
    (m: { default: SharpFn }) => m.default,
    () => null,
  );
  return sharpLoad;
}

/**
 * A rendered page as JPEG (quality {@link JPEG_QUALITY}, 4:2:0) by sharp's libjpeg-turbo from the
 * canvas's pixels: about a third less time than Skia's own JPEG encoder at the same size
 * (issue 12, docs/benchmarks.md); Skia's when sharp is not there. The canvas is opaque (painted
 * white first), so its premultiplied RGBA is plain RGBA.
 */
async function encodeJpeg(canvas: RenderedPage["canvas"]): Promise<Uint8Array> {
  const sharp = await loadSharp();
  if (!sharp) return canvas.encode("jpeg", JPEG_QUALITY);
  return sharp(canvas.data(), { raw: { width: canvas.width, height: canvas.height, channels: 4 } })
    .removeAlpha()
    .jpeg({ quality: JPEG_QUALITY })
    .toBuffer();
}

/**
 * Render one page so its longest side is `maxSide` px (never above 4× the page's size in points), as JPEG.
 * @returns JPEG bytes with width/height in px and the page's image-decode warnings, or null when
 *   the budget ran out (see {@link renderPage})
 * @throws whatever pdf.js throws for a broken page
 */
export async function renderPageJpeg(
  pdf: OpenPdf,
  pageNumber: number,
  maxSide: number,
  budgetMs: number,
): Promise<{ jpeg: Uint8Array; width: number; height: number; imageWarnings: readonly string[] } | null> {
  const page = await renderPage(pdf, pageNumber, { maxSide }, budgetMs);
  if (!page) return null;
  const jpeg = await encodeJpeg(page.canvas);
  return { jpeg, width: page.width, height: page.height, imageWarnings: page.imageWarnings };
}
