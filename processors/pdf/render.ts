/**
 * Page rendering with pdf.js onto an @napi-rs/canvas canvas, encoded as JPEG
 * (DESIGN.md stack: "@napi-rs/canvas for rendering").
 */
import { OVER_BUDGET, withBudget } from "../budget.ts";
import { loadCanvas } from "./engine.ts";
import type { OpenPdf } from "./open.ts";

/** JPEG quality for rendered pages (0–100). */
const JPEG_QUALITY = 82;

/**
 * Render one page so its longest side is `maxSide` px (never above 4× the page's size in points).
 * @param pdf the open document
 * @param pageNumber 1-based page number
 * @param maxSide longest side of the image, px
 * @param budgetMs time allowed for this page, ms
 * @returns JPEG bytes with width/height in px, or null when the budget ran out (render
 *   cancelled and the page worker stopped: the document is unusable afterwards, close it)
 * @throws whatever pdf.js throws for a broken page
 */
export async function renderPageJpeg(
  pdf: OpenPdf,
  pageNumber: number,
  maxSide: number,
  budgetMs: number,
): Promise<{ jpeg: Uint8Array; width: number; height: number } | null> {
  const { createCanvas } = await loadCanvas();
  const page = await pdf.doc.getPage(pageNumber);
  try {
    const base = page.getViewport({ scale: 1 });
    const scale = Math.min(4, maxSide / Math.max(base.width, base.height));
    const viewport = page.getViewport({ scale });
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
    const jpeg = await canvas.encode("jpeg", JPEG_QUALITY);
    return { jpeg, width: canvas.width, height: canvas.height };
  } finally {
    page.cleanup();
  }
}
