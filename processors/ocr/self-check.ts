/**
 * Start-up self-check of text recognition (issue 13 "Bad input and faults": missing language data
 * is a start-up failure, not a per-job crash). It checks, in order, and names the first thing missing
 * together with the Debian package that brings it:
 * 1. `tesseract --version` answers with major version ≥ 5 (package `tesseract-ocr`);
 * 2. `tesseract --list-langs` lists every language of the setting (`tesseract-ocr-<lang>`);
 * 3. the built-in text page (pdf/self-check-pdf.ts) rendered by pdf.js at 300 dpi is recognized
 *    with those languages as "docket pdf self-check" (edit distance ≤ 3 after folding Cyrillic
 *    look-alikes, which `rus` as the primary language may produce for Latin letters).
 * Never throws.
 */
import { distance } from "fastest-levenshtein";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { closePdf, openPdf } from "../pdf/open.ts";
import { renderPage } from "../pdf/render.ts";
import { SELF_CHECK_TEXT, selfCheckPdf } from "../pdf/self-check-pdf.ts";
import { pageRaster } from "./raster.ts";
import { recognizePage, tesseractEnv } from "./tesseract.ts";

/** Result of {@link ocrSelfCheck}. */
export type OcrSelfCheck =
  | { readonly ok: true; readonly version: string; readonly languages: string; readonly ms: number }
  | { readonly ok: false; readonly missing: string };

/** Cyrillic letters that look like Latin ones, folded for the comparison. */
const LOOKALIKES: Readonly<Record<string, string>> = { а: "a", с: "c", е: "e", о: "o", р: "p", х: "x", у: "y", к: "k", т: "t", н: "h", в: "b", м: "m", і: "i" };

/** Lower-case, Cyrillic look-alikes folded to Latin, whitespace collapsed. */
export function foldForCheck(text: string): string {
  return [...text.toLowerCase()].map((c) => LOOKALIKES[c] ?? c).join("").replace(/\s+/g, " ").trim();
}

/** Run a Tesseract command; resolves its exit code and output (stdout + stderr), or null when it cannot start. */
async function tesseract(args: readonly string[]): Promise<{ code: number; out: string } | null> {
  try {
    const p = Bun.spawn(["tesseract", ...args], { stdin: "ignore", stdout: "pipe", stderr: "pipe", env: tesseractEnv() });
    const [code, out, err] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
    return { code, out: `${out}\n${err}` };
  } catch {
    return null;
  }
}

/**
 * Check that Tesseract 5 with `languages` recognizes a built-in page.
 * @param languages Tesseract languages joined by `+` (OCR_LANGUAGES)
 */
export async function ocrSelfCheck(languages: string): Promise<OcrSelfCheck> {
  const t0 = performance.now();
  const version = await tesseract(["--version"]);
  if (!version || version.code !== 0) return { ok: false, missing: "tesseract is not installed or does not run (Debian package tesseract-ocr)" };
  const v = /tesseract\s+v?(\d+)\.(\d+)\.(\d+)/i.exec(version.out);
  if (!v || Number(v[1]) < 5) return { ok: false, missing: `Tesseract 5 is needed, found ${v ? v.slice(1).join(".") : "an unknown version"} (Debian package tesseract-ocr)` };
  const list = await tesseract(["--list-langs"]);
  const installed = new Set((list?.out ?? "").split("\n").map((l) => l.trim()).filter((l) => /^[a-z_]+$/i.test(l)));
  const wanted = languages.split("+").filter(Boolean);
  const absent = wanted.filter((l) => !installed.has(l));
  if (wanted.length === 0) return { ok: false, missing: `OCR_LANGUAGES is empty` };
  if (absent.length > 0) {
    const pkgs = absent.map((l) => `tesseract-ocr-${l.replace(/_/g, "-").toLowerCase()}`).join(" ");
    return { ok: false, missing: `Tesseract language data not installed: ${absent.join(", ")} (OCR_LANGUAGES=${languages}; Debian package ${pkgs})` };
  }
  const dir = await mkdtemp(join(tmpdir(), "docket-ocr-check-"));
  try {
    const pdf = await openPdf(selfCheckPdf());
    let image: Uint8Array;
    try {
      const page = await renderPage(pdf, 1, { dpi: 300 }, 30_000);
      if (!page) return { ok: false, missing: "OCR self-check: the built-in page did not render within 30 s" };
      image = pageRaster(page.canvas.getContext("2d").getImageData(0, 0, page.width, page.height).data, page.width, page.height);
    } finally {
      await closePdf(pdf);
    }
    const { text } = await recognizePage({ imageBytes: image, outBase: join(dir, "page"), languages, dpi: 300, budgetMs: 60_000 });
    const got = foldForCheck(text);
    if (distance(got, SELF_CHECK_TEXT) > 3) return { ok: false, missing: `Tesseract (${languages}) read the built-in page as ${JSON.stringify(got.slice(0, 80))}, not ${JSON.stringify(SELF_CHECK_TEXT)}` };
    return { ok: true, version: v.slice(1).join("."), languages, ms: Math.round(performance.now() - t0) };
  } catch (err) {
    return { ok: false, missing: `OCR self-check failed: ${(err as Error).message}` };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
