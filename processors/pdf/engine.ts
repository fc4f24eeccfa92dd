/**
 * Loading pdf.js on Bun (DESIGN.md "Known pitfalls"; field case BR-11):
 * - the legacy build `pdfjs-dist/legacy/build/pdf.mjs`; its DOMMatrix polyfill comes from
 *   `@napi-rs/canvas`, so a missing canvas makes the import itself throw;
 * - each document's pages are parsed in a worker thread (page-worker.ts) so per-page budgets
 *   can stop a busy page; as the fallback, the worker module is also imported here (it
 *   publishes itself as `globalThis.pdfjsWorker`), so pdf.js can run its "fake worker" in this
 *   (child) process without resolving `./pdf.worker.mjs` at run time (bundled builds broke on
 *   that); `workerSrc` is also set to a resolved URL when there is one;
 * - `standardFontDataUrl` points at `node_modules/pdfjs-dist/standard_fonts/`.
 * Loading is lazy and cached; a failure becomes ProcessingError `pdf_engine_unavailable`.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { ProcessingError } from "../types.ts";
import { startPageWorker } from "./page-worker.ts";
import { SELF_CHECK_TEXT, selfCheckPdf } from "./self-check-pdf.ts";
import { decodersCheckPdf, failedKinds } from "./self-check-decoders.ts";

/** The pdf.js module namespace (legacy build). */
export type PdfJs = typeof import("pdfjs-dist/legacy/build/pdf.mjs");

/** The @napi-rs/canvas module namespace. */
export type NapiCanvas = typeof import("@napi-rs/canvas");

let loading: Promise<PdfJs> | undefined;
let loadingCanvas: Promise<NapiCanvas> | undefined;

/**
 * Import @napi-rs/canvas once per process (dynamic, so a missing package fails PDFs with a
 * reason instead of breaking the import of every processor).
 * @throws ProcessingError `pdf_engine_unavailable`
 */
export function loadCanvas(): Promise<NapiCanvas> {
  loadingCanvas ??= import("@napi-rs/canvas").catch((err: unknown) => {
    throw new ProcessingError("pdf_engine_unavailable", {}, `@napi-rs/canvas is not installed or does not load: ${(err as Error).message}`);
  });
  return loadingCanvas;
}

/** Absolute directory (with trailing slash) of one of pdfjs-dist's data folders. */
function pdfjsDataDir(name: "standard_fonts" | "wasm" | "cmaps"): string {
  const pkg = fileURLToPath(import.meta.resolve("pdfjs-dist/package.json"));
  return `${pkg.slice(0, pkg.lastIndexOf("/") + 1)}${name}/`;
}

/** Absolute directory (with trailing slash) of pdf.js's standard font data. */
export function standardFontDir(): string {
  return pdfjsDataDir("standard_fonts");
}

/**
 * The data pdf.js loads at run time besides its code, as `getDocument` options (absolute
 * directories with a trailing slash; pdf.js on Node/Bun reads them with `fs`):
 * - `standardFontDataUrl`: the 14 standard fonts;
 * - `wasmUrl`: `jbig2.wasm` (JBIG2 and CCITT fax images) and `openjpeg.wasm` (JPEG 2000). Without it
 *   pdf.js 6 cannot decode those images and draws the page without them, all white (issue 13 §1);
 * - `cMapUrl`: the predefined CMaps of CID fonts whose CMap is not embedded (CJK text).
 * Not passed: `iccUrl` — pdf.js applies ICC profiles only with `useWorkerFetch` (browser fetch, a
 * synchronous XMLHttpRequest), which Node/Bun lack; it uses the alternate colour space instead.
 * @throws Error when pdfjs-dist cannot be resolved
 */
export function pdfjsDataOptions(): { standardFontDataUrl: string; wasmUrl: string; cMapUrl: string; cMapPacked: true } {
  return { standardFontDataUrl: pdfjsDataDir("standard_fonts"), wasmUrl: pdfjsDataDir("wasm"), cMapUrl: pdfjsDataDir("cmaps"), cMapPacked: true };
}

/** Translate an import failure into "what is missing" for the operator (BR-11). */
function explainLoadFailure(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  if (/DOMMatrix|Path2D|ImageData/.test(msg)) return `@napi-rs/canvas is missing or broken (pdf.js needs its DOMMatrix polyfill): ${msg}`;
  if (/worker/i.test(msg)) return `pdf.js worker module could not be loaded: ${msg}`;
  if (/Cannot find (module|package)/.test(msg)) return `pdfjs-dist is not installed: ${msg}`;
  return `pdf.js failed to load: ${msg}`;
}

/**
 * Import and configure pdf.js once per process.
 * @throws ProcessingError `pdf_engine_unavailable` (detail names what is missing)
 */
export function loadPdfJs(): Promise<PdfJs> {
  loading ??= (async () => {
    await loadCanvas(); // pdf.js polyfills DOMMatrix/Path2D from it; without it v6 only warns, then breaks
    try {
      // Evaluating the worker module publishes `globalThis.pdfjsWorker`; pdf.js then runs it in-process.
      await import("pdfjs-dist/legacy/build/pdf.worker.mjs");
      if (!(globalThis as { pdfjsWorker?: { WorkerMessageHandler?: unknown } }).pdfjsWorker?.WorkerMessageHandler) {
        throw new Error("pdf.js worker module did not publish globalThis.pdfjsWorker");
      }
      const pdfjs = await import("pdfjs-dist/legacy/build/pdf.mjs");
      try {
        pdfjs.GlobalWorkerOptions.workerSrc = import.meta.resolve("pdfjs-dist/legacy/build/pdf.worker.mjs");
      } catch {
        // A bundle carries the worker inside (globalThis.pdfjsWorker above); no file to point at.
      }
      if (typeof (globalThis as { DOMMatrix?: unknown }).DOMMatrix !== "function") throw new Error("DOMMatrix is not defined after loading pdf.js");
      return pdfjs;
    } catch (err) {
      throw new ProcessingError("pdf_engine_unavailable", {}, explainLoadFailure(err));
    }
  })();
  // A failed load stays failed for this process: the self-check reports it once at start.
  return loading;
}

/** Result of {@link pdfEngineSelfCheck}. */
export type PdfSelfCheck =
  | {
      readonly ok: true;
      readonly version: string;
      readonly ms: number;
      /** Where pdf.js parses pages (page-worker.ts): `in-process` means per-page budgets cannot preempt a busy page. */
      readonly pageWorker: "thread" | "in-process";
    }
  | { readonly ok: false; readonly missing: string };

/**
 * Startup self-check (BR-11): import pdf.js, start the page worker the processor uses
 * (page-worker.ts), open the built-in one-page PDF (self-check-pdf.ts), read its text and render
 * it with @napi-rs/canvas; check the standard fonts directory; then render the built-in scan page
 * (CCITT G4, JBIG2, JPEG 2000 images; self-check-decoders.ts) and check each image has ink where
 * it should (issue 13 §1: without pdf.js's wasm decoders scans render blank).
 * Never throws; the service logs `missing` and then refuses PDFs with
 * `pdf_engine_unavailable` (or refuses to start — the caller's choice).
 */
export async function pdfEngineSelfCheck(): Promise<PdfSelfCheck> {
  const t0 = performance.now();
  let fonts: string;
  try {
    fonts = standardFontDir();
    if (!existsSync(`${fonts}FoxitSerif.pfb`)) return { ok: false, missing: `pdf.js standard fonts not found in ${fonts}` };
  } catch (err) {
    return { ok: false, missing: `pdfjs-dist standard_fonts cannot be resolved: ${(err as Error).message}` };
  }
  let pdfjs: PdfJs;
  try {
    pdfjs = await loadPdfJs();
  } catch (err) {
    return { ok: false, missing: (err as Error).message };
  }
  const worker = await startPageWorker(pdfjs);
  const task = pdfjs.getDocument({
    data: selfCheckPdf(),
    standardFontDataUrl: fonts,
    verbosity: pdfjs.VerbosityLevel.ERRORS,
    ...(worker.handle ? { worker: worker.handle } : {}),
  });
  try {
    const doc = await task.promise;
    const page = await doc.getPage(1);
    const text = (await page.getTextContent()).items.map((i) => ("str" in i ? i.str : "")).join("");
    if (!text.includes(SELF_CHECK_TEXT)) return { ok: false, missing: `pdf.js text extraction returned ${JSON.stringify(text)}` };
    const { createCanvas } = await loadCanvas();
    const viewport = page.getViewport({ scale: 0.5 });
    const canvas = createCanvas(Math.ceil(viewport.width), Math.ceil(viewport.height));
    await page.render({ canvas: canvas as never, canvasContext: canvas.getContext("2d") as never, viewport }).promise;
    page.cleanup();
  } catch (err) {
    return { ok: false, missing: `pdf.js could not open the built-in PDF: ${(err as Error).message}` };
  } finally {
    await task.destroy();
    worker.release();
  }
  const decoders = await decodersSelfCheck(pdfjs);
  if (decoders) return { ok: false, missing: decoders };
  return { ok: true, version: pdfjs.version, ms: Math.round(performance.now() - t0), pageWorker: worker.mode };
}

/**
 * Render the built-in scan page (self-check-decoders.ts: a CCITT G4, a JBIG2 and a JPEG 2000 image)
 * the way the processor opens documents (open.ts: `wasmUrl` and the other data folders) and check
 * each image came out (issue 13 §1).
 * @returns null when all three decoded, else what is missing, naming each kind, its module and
 *   pdf.js's first warning
 */
async function decodersSelfCheck(pdfjs: PdfJs): Promise<string | null> {
  let pdf: Awaited<ReturnType<typeof import("./open.ts").openPdf>> | null = null;
  try {
    const { openPdf, closePdf } = await import("./open.ts");
    const { renderPage } = await import("./render.ts");
    pdf = await openPdf(await decodersCheckPdf());
    const page = await renderPage(pdf, 1, { dpi: 72 }, 30_000);
    await closePdf(pdf);
    pdf = null;
    if (!page) return "pdf.js image decoders: the built-in scan page did not render within 30 s";
    const pixels = page.canvas.getContext("2d").getImageData(0, 0, page.width, page.height).data;
    const failed = failedKinds(pixels, page.width, page.height);
    if (failed.length === 0) return null;
    const names = failed.map((k) => `${k.name} (needs ${k.module})`).join(", ");
    const warning = page.imageWarnings[0] ? `; pdf.js: ${page.imageWarnings[0]}` : "";
    return `pdf.js ${pdfjs.version} cannot decode scanned images: ${names}${warning}; reinstall with \`bun install\``;
  } catch (err) {
    return `pdf.js image decoders: the built-in scan page failed: ${(err as Error).message}`;
  } finally {
    if (pdf) await (await import("./open.ts")).closePdf(pdf).catch(() => undefined);
  }
}
