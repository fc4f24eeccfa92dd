/**
 * Text recognition of scanned PDF pages (issue 13 §3–4) on scans made here by Debian's tools: which
 * pages are recognized, the merged `.txt`, the limits (pages per file, per-page budget, total
 * time — each ends with what was recognized and says where it stopped), the searchable PDF
 * (re-opened by pdf.js, read back by poppler's pdftotext, rotated pages included), Tesseract bound
 * to its caller, and the start-up self-check.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { recognizePdfPages } from "../../processors/ocr/ocr-pdf.ts";
import { isBilevel, netpbm, rgbaToGrey } from "../../processors/ocr/raster.ts";
import { foldForCheck, ocrSelfCheck } from "../../processors/ocr/self-check.ts";
import { overlayPlacement } from "../../processors/ocr/searchable.ts";
import { recognizePage, TesseractStopped } from "../../processors/ocr/tesseract.ts";
import { closePdf, openPdf } from "../../processors/pdf/open.ts";
import { extractText } from "../../processors/pdf/text.ts";
import { characterErrorRate, splitPages } from "../../scripts/samples/cer.ts";
import { ENGLISH_LINES, makePdf, makeScanPdf, RUSSIAN_LINES } from "../../scripts/samples/index.ts";
import { toolPath, toolReady } from "../support/tools.ts";
import { testOcr } from "./support/ocr.ts";
import { cleanupWorkDirs, processBytes, workDir } from "./support/run.ts";

afterEach(cleanupWorkDirs);

const ready = (["tesseract", "convert", "tiff2pdf", "img2pdf", "opj_compress", "qpdf", "pdftoppm"] as const).every((t) => toolReady(t));

/** The `.txt` result of a processor run. */
const txt = (r: { outputs: readonly { fileName: string; path: string }[] }): string => readFileSync(r.outputs.find((o) => o.fileName.endsWith(".txt"))!.path, "utf8");

/** Three short scanned pages, one line each (fast to recognize). */
const SHORT = [["First scanned page of the contract"], ["Second scanned page of the contract"], ["Third scanned page of the contract"]];

/** recognizePdfPages' run over the three pages of {@link SHORT}: text only, `concurrency` Tesseracts at once. */
const shortRun = (concurrency: number) => ({
  ...testOcr({ concurrency }),
  pages: [1, 2, 3],
  dir: join(workDir(), "ocr"),
  pdfLayer: false,
  maxPixels: 50_000_000,
  renderBudgetMs: 30_000,
});

/** Tesseract processes (by process name, not the `sh` guard around them) reading an image under `dir`. */
function tesseractsIn(dir: string): string[] {
  const out = Bun.spawnSync(["pgrep", "-a", "-x", "tesseract"]).stdout.toString();
  return out.split("\n").filter((l) => l.includes(dir));
}

describe.skipIf(!ready)("OCR of scanned PDF pages", () => {
  test("a scan page and a text page: only the scan is recognized; the .txt merges both in page order", async () => {
    const dir = workDir();
    writeFileSync(join(dir, "scan.pdf"), await makeScanPdf("g4", [ENGLISH_LINES]));
    writeFileSync(join(dir, "text.pdf"), makePdf({ pages: [["This page has a real text layer with more than thirty-two characters."]] }));
    expect(Bun.spawnSync(["qpdf", "--empty", "--pages", join(dir, "scan.pdf"), join(dir, "text.pdf"), "--", join(dir, "mixed.pdf")]).exitCode).toBe(0);
    const r = await processBytes(readFileSync(join(dir, "mixed.pdf")), "mixed.pdf", { ocr: testOcr() });
    expect(r.facts.ocr).toEqual({ languages: "rus+eng", needed: 1, recognized: 1, pageBudgetS: 120, overBudget: [], failed: [], direct: [1], noImage: [] });
    const body = txt(r);
    expect(body.split("\n").filter((l) => l.startsWith("--- page"))).toEqual(["--- page 1 of 2 (recognized) ---", "--- page 2 of 2 ---"]);
    const [scan, text] = splitPages(body);
    expect(characterErrorRate(scan!, ENGLISH_LINES.join("\n"))).toBeLessThanOrEqual(0.02);
    expect(text).toBe("This page has a real text layer with more than thirty-two characters.");
    expect(r.facts.recognizedChars).toBe(scan!.replace(/\s+/g, "").length);
    expect(r.outputs.map((o) => o.fileName)).toEqual(["mixed.txt", "mixed-page1.jpg"]);
  }, 120_000);

  test("without OCR options nothing is recognized; with ocrUnavailable the facts say so", async () => {
    const pdf = await makeScanPdf("g4", [SHORT[0]!]);
    const off = await processBytes(pdf, "scan.pdf");
    expect([off.facts.ocr, off.facts.ocrUnavailable, off.outputs.map((o) => o.fileName)]).toEqual([undefined, undefined, ["scan-page1.jpg"]]);
    const unavailable = await processBytes(pdf, "scan.pdf", { ocrUnavailable: true });
    expect([unavailable.facts.ocr, unavailable.facts.ocrUnavailable]).toEqual([undefined, true]);
  }, 60_000);

  test("OCR_MAX_PAGES 2 of 3 pages: pages 1–2 recognized, the stop names page 3 and the limit", async () => {
    const r = await processBytes(await makeScanPdf("g4", SHORT), "three.pdf", { ocr: testOcr({ maxPages: 2 }) });
    expect(r.facts.ocr).toMatchObject({ needed: 3, recognized: 2, stop: { reason: "page_limit", page: 3, limit: 2 } });
    const pages = splitPages(txt(r));
    expect(pages.map((p) => foldForCheck(p))).toEqual([foldForCheck(SHORT[0]![0]!), foldForCheck(SHORT[1]![0]!), ""]);
  }, 120_000);

  test("stopped after the first page (what OCR_TIMEOUT does): page 1's text is kept, the stop names page 2", async () => {
    const bytes = await makeScanPdf("g4", SHORT);
    const pdf = await openPdf(bytes);
    const stop = new AbortController();
    try {
      const out = await recognizePdfPages(pdf, {
        ...shortRun(1),
        stopSignal: stop.signal,
        onProgress: (done) => {
          if (done === 1) stop.abort();
        },
      });
      expect(out.facts).toMatchObject({ recognized: 1, stop: { reason: "time_limit", page: 2, limit: 600 } });
      expect(foldForCheck(out.texts.get(1)!)).toBe(foldForCheck(SHORT[0]![0]!));
    } finally {
      await closePdf(pdf);
    }
  }, 120_000);

  test("a Tesseract that hangs on page 1 (no CPU, no end): stopped at the wall-clock backstop and killed; page 1 failed with the detail, pages 2–3 recognized", async () => {
    // A `tesseract` first on PATH that sleeps for page 1 and is the real one for the others.
    const bin = join(workDir(), "bin");
    mkdirSync(bin, { recursive: true });
    const marker = "61.25";
    writeFileSync(join(bin, "tesseract"), `#!/bin/sh\ncase "$2" in */page-1) exec sleep ${marker};; esac\nexec ${toolPath("tesseract")} "$@"\n`, { mode: 0o755 });
    const path = process.env.PATH;
    process.env.PATH = `${bin}:${path}`;
    const pdf = await openPdf(await makeScanPdf("g4", SHORT));
    try {
      const out = await recognizePdfPages(pdf, { ...shortRun(2), wallBackstopMs: 1500 });
      expect(out.facts).toMatchObject({ needed: 3, recognized: 2, failed: [1], overBudget: [] });
      expect(out.facts.failedDetail).toMatch(/^page 1: tesseract: still running after \d+ s of wall time, 0 s of CPU time: stopped as hung$/);
      expect(out.facts.stop).toBeUndefined();
      expect([2, 3].map((n) => foldForCheck(out.texts.get(n) ?? ""))).toEqual([foldForCheck(SHORT[1]![0]!), foldForCheck(SHORT[2]![0]!)]);
      // The hung tool was killed, not left behind.
      await expect.poll(() => Bun.spawnSync(["pgrep", "-f", `sleep ${marker}`]).stdout.toString().trim(), { timeout: 5000 }).toBe("");
    } finally {
      process.env.PATH = path;
      await closePdf(pdf);
    }
  }, 120_000);

  test("page rasters never reach the disk: Tesseract reads them on stdin, the work dir holds only its small outputs", async () => {
    const dir = workDir();
    let largest = 0;
    const seen = new Set<string>();
    const walk = (d: string): number => {
      let sum = 0;
      for (const e of readdirSync(d, { withFileTypes: true })) {
        const p = join(d, e.name);
        if (e.isDirectory()) sum += walk(p);
        else {
          seen.add(e.name);
          try {
            sum += statSync(p).size;
          } catch {
            // removed meanwhile
          }
        }
      }
      return sum;
    };
    const poll = setInterval(() => (largest = Math.max(largest, walk(dir))), 5);
    try {
      const r = await processBytes(await makeScanPdf("g4", SHORT), "three.pdf", { workDir: dir, ocr: testOcr() });
      expect(r.facts.ocr).toMatchObject({ needed: 3, recognized: 3 });
    } finally {
      clearInterval(poll);
    }
    expect([...seen].filter((n) => /\.(pgm|pbm|png|tiff?)$/.test(n))).toEqual([]);
    // A 300-dpi A4 page is 1 MB as PBM and 8.7 MB as PGM; what is written is text and previews.
    expect(largest).toBeLessThan(1_000_000);
  }, 120_000);

  test("OCR_TIMEOUT of 1 ms: nothing recognized, the file is still processed, the stop names page 1", async () => {
    const r = await processBytes(await makeScanPdf("g4", SHORT), "three.pdf", { ocr: testOcr({ totalMs: 1 }) });
    expect(r.facts.ocr).toMatchObject({ needed: 3, recognized: 0, stop: { reason: "time_limit", page: 1, limit: 1 } });
    expect(r.outputs.map((o) => o.fileName)).toEqual(["three-page1.jpg"]);
  }, 60_000);

  test("OCR_PAGE_BUDGET of 50 ms: every page is stopped, listed as over budget, and no Tesseract is left", async () => {
    const dir = workDir();
    const r = await processBytes(await makeScanPdf("g4", SHORT.slice(0, 2)), "two.pdf", { workDir: dir, ocr: testOcr({ pageBudgetMs: 50 }) });
    expect(r.facts.ocr).toMatchObject({ needed: 2, recognized: 0, pageBudgetS: 1, overBudget: [1, 2], failed: [] });
    expect(tesseractsIn(dir)).toEqual([]);
  }, 60_000);

  test("searchable PDF: the original images with an invisible text layer pdf.js and pdftotext read back", async () => {
    const source = await makeScanPdf("jpx", [ENGLISH_LINES, RUSSIAN_LINES]);
    const r = await processBytes(source, "scan.pdf", { action: "searchable", ocr: testOcr() });
    expect(r.outputs.map((o) => o.fileName)).toEqual(["scan.txt", "scan-searchable.pdf"]);
    const out = r.outputs[1]!.path;
    // Read by another reader than the one that checked it: poppler.
    const pdftotext = join(toolPath("pdftoppm")!, "../pdftotext");
    const pages = [1, 2].map((p) => Bun.spawnSync([pdftotext, "-f", String(p), "-l", String(p), out, "-"]).stdout.toString());
    expect(characterErrorRate(pages[0]!, ENGLISH_LINES.join("\n"))).toBeLessThanOrEqual(0.02);
    expect(characterErrorRate(pages[1]!, RUSSIAN_LINES.join("\n"))).toBeLessThanOrEqual(0.02);
    // The scan itself is unchanged: the same JPEG 2000 image streams (pdfimages lists them).
    const pdfimages = join(toolPath("pdftoppm")!, "../pdfimages");
    const list = (f: string) => Bun.spawnSync([pdfimages, "-list", f]).stdout.toString().split("\n").slice(2).filter(Boolean).map((l) => l.trim().split(/\s+/).slice(3, 9).join(" "));
    const dir = workDir();
    writeFileSync(join(dir, "source.pdf"), source);
    expect(list(out)).toEqual(list(join(dir, "source.pdf")));
    expect(list(out)).toHaveLength(2);
    // pdf.js sees the text layer too.
    const pdf = await openPdf(out);
    try {
      const { pageTexts } = await extractText(pdf, 10_000);
      expect(characterErrorRate(pageTexts[0]!, ENGLISH_LINES.join("\n"))).toBeLessThanOrEqual(0.02);
    } finally {
      await closePdf(pdf);
    }
  }, 180_000);

  test("searchable PDF of a page stored sideways and shown upright by /Rotate 90: the text layer reads in order", async () => {
    const r = await processBytes(await makeScanPdf("g4", [ENGLISH_LINES], { storedRotation: 90 }), "turned.pdf", { action: "searchable", ocr: testOcr() });
    expect(r.facts.ocr).toMatchObject({ recognized: 1 });
    const pdftotext = join(toolPath("pdftoppm")!, "../pdftotext");
    const back = Bun.spawnSync([pdftotext, r.outputs.find((o) => o.fileName.endsWith(".pdf"))!.path, "-"]).stdout.toString();
    expect(characterErrorRate(back, ENGLISH_LINES.join("\n"))).toBeLessThanOrEqual(0.02);
  }, 120_000);

  test("searchable on a PDF that has a text layer on every page: no PDF, the facts say why", async () => {
    const r = await processBytes(makePdf({ pages: [["A born-digital page with plenty of real text in its layer."]] }), "digital.pdf", { action: "searchable", ocr: testOcr() });
    expect([r.facts.ocr, r.facts.searchableSkipped, r.outputs.map((o) => o.fileName)]).toEqual([undefined, "every page already has a text layer", ["digital.txt"]]);
  }, 60_000);

  test("searchable over searchableMaxBytes: the text is delivered, the PDF is skipped with the reason", async () => {
    const r = await processBytes(await makeScanPdf("g4", [SHORT[0]!]), "scan.pdf", { action: "searchable", ocr: testOcr({ searchableMaxBytes: 1000 }) });
    expect(r.outputs.map((o) => o.fileName)).toEqual(["scan.txt"]);
    expect(r.facts.searchableSkipped).toMatch(/^source is \d+ bytes, over the 1000-byte upload limit$/);
  }, 60_000);
});

describe("page rasters for Tesseract", () => {
  test("a black-and-white page becomes 1-bit PBM (1 = black, rows padded to bytes); a grey one stays 8-bit PGM", () => {
    // 10×2: row 0 black from x=0 to 8, row 1 white but x=9 black.
    const grey = new Uint8Array(20).fill(255);
    grey.fill(0, 0, 9);
    grey[19] = 0;
    expect(isBilevel(grey)).toBe(true);
    expect([...netpbm(grey, 10, 2, true)]).toEqual([...new TextEncoder().encode("P4\n10 2\n"), 0xff, 0x80, 0x00, 0x40]);
    const photo = Uint8Array.from({ length: 1000 }, (_, i) => i % 256);
    expect(isBilevel(photo)).toBe(false);
    expect([...netpbm(photo.subarray(0, 4), 2, 2, false)]).toEqual([...new TextEncoder().encode("P5\n2 2\n255\n"), 0, 1, 2, 3]);
    expect([...rgbaToGrey(Uint8Array.from([255, 255, 255, 255, 0, 0, 0, 255, 255, 0, 0, 255]), 3)]).toEqual([255, 0, 76]);
  });
});

describe.skipIf(!ready)("Tesseract runs", () => {
  test("overlayPlacement maps the displayed page back for each /Rotate", () => {
    const box = { x: 10, y: 20, width: 600, height: 800 };
    expect([0, 90, 180, 270, -90, 450].map((r) => overlayPlacement(box, r))).toEqual([
      { x: 10, y: 20, width: 600, height: 800, rotate: 0 },
      { x: 610, y: 20, width: 800, height: 600, rotate: 90 },
      { x: 610, y: 820, width: 600, height: 800, rotate: 180 },
      { x: 10, y: 820, width: 800, height: 600, rotate: 270 },
      { x: 10, y: 820, width: 800, height: 600, rotate: 270 },
      { x: 610, y: 20, width: 800, height: 600, rotate: 90 },
    ]);
  });

  test("a run over its budget (30 ms of CPU time) throws TesseractStopped(budget) and leaves no process", async () => {
    const dir = workDir();
    const png = join(dir, "page.png");
    expect(Bun.spawnSync(["convert", "-size", "2480x3508", "xc:white", "-pointsize", "50", "-annotate", "+200+300", "Budget test page", png]).exitCode).toBe(0);
    const err = await recognizePage({ imagePath: png, outBase: join(dir, "out"), languages: "rus+eng", dpi: 300, budgetMs: 30 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TesseractStopped);
    expect((err as TesseractStopped).why).toBe("budget");
    await expect.poll(() => tesseractsIn(dir)).toEqual([]);
  }, 60_000);

  test("the budget is Tesseract's CPU time: a run held still (SIGSTOP) for longer than its budget, then let go, is recognized", async () => {
    const dir = workDir();
    const png = join(dir, "page.png");
    expect(Bun.spawnSync(["convert", "-size", "2480x3508", "xc:white", "-pointsize", "60", "-annotate", "+200+300", "Budget test page", png]).exitCode).toBe(0);
    const run = recognizePage({ imagePath: png, outBase: join(dir, "out"), languages: "eng", dpi: 300, budgetMs: 5_000 });
    await expect.poll(() => tesseractsIn(dir).length).toBe(1);
    const pid = Number(tesseractsIn(dir)[0]!.split(" ")[0]);
    process.kill(pid, "SIGSTOP"); // no CPU time passes while the wall clock does (a wall-clock budget stopped it at 5 s)
    await Bun.sleep(6_000); // the scenario: held longer than the budget
    process.kill(pid, "SIGCONT");
    expect((await run).text).toContain("Budget test page");
  }, 60_000);

  test("a Tesseract that makes no progress (SIGSTOPped) is stopped at the wall-clock backstop as hung, and killed", async () => {
    const dir = workDir();
    const png = join(dir, "page.png");
    expect(Bun.spawnSync(["convert", "-size", "2480x3508", "xc:white", "-pointsize", "60", "-annotate", "+200+300", "Hung test page", png]).exitCode).toBe(0);
    const run = recognizePage({ imagePath: png, outBase: join(dir, "out"), languages: "eng", dpi: 300, budgetMs: 60_000, wallBackstopMs: 2_000 }).catch((e: unknown) => e);
    await expect.poll(() => tesseractsIn(dir).length).toBe(1);
    process.kill(Number(tesseractsIn(dir)[0]!.split(" ")[0]), "SIGSTOP");
    const err = await run;
    expect(err).toBeInstanceOf(TesseractStopped);
    expect([(err as TesseractStopped).why, (err as TesseractStopped).message]).toEqual(["hung", expect.stringMatching(/^tesseract: still running after \d+ s of wall time, [\d.]+ s of CPU time: stopped as hung$/)]);
    await expect.poll(() => tesseractsIn(dir)).toEqual([]);
  }, 60_000);

  test("when the process that started Tesseract is SIGKILLed, Tesseract dies with it", async () => {
    const dir = workDir();
    const png = join(dir, "page.png");
    const lines = Array.from({ length: 60 }, (_, i) => ["-annotate", `+100+${100 + i * 55}`, `Line ${i} of a page that keeps Tesseract busy for a while`]).flat();
    expect(Bun.spawnSync(["convert", "-size", "2480x3508", "xc:white", "-pointsize", "40", ...lines, png]).exitCode).toBe(0);
    const script = join(dir, "run.ts");
    writeFileSync(script, `import { recognizePage } from ${JSON.stringify(join(import.meta.dirname, "../../processors/ocr/tesseract.ts"))};\nawait recognizePage({ imagePath: ${JSON.stringify(png)}, outBase: ${JSON.stringify(join(dir, "out"))}, languages: "rus+eng", dpi: 300, budgetMs: 600000 });\n`);
    const parent = Bun.spawn([process.execPath, script], { stdout: "ignore", stderr: "ignore" });
    await expect.poll(() => tesseractsIn(dir).length).toBe(1);
    parent.kill("SIGKILL");
    await parent.exited;
    await expect.poll(() => tesseractsIn(dir)).toEqual([]);
  }, 60_000);

  test("self-check: ok with rus+eng; a language without data is named with its Debian package; an empty TESSDATA_PREFIX names both", async () => {
    expect(await ocrSelfCheck("rus+eng")).toMatchObject({ ok: true, languages: "rus+eng", version: expect.stringMatching(/^5\./) });
    expect(await ocrSelfCheck("rus+xyz")).toEqual({ ok: false, missing: "Tesseract language data not installed: xyz (OCR_LANGUAGES=rus+xyz; Debian package tesseract-ocr-xyz)" });
    const saved = process.env.TESSDATA_PREFIX;
    process.env.TESSDATA_PREFIX = workDir();
    try {
      expect(await ocrSelfCheck("rus+eng")).toEqual({ ok: false, missing: `Tesseract language data not installed: rus, eng (OCR_LANGUAGES=rus+eng; Debian package tesseract-ocr-rus tesseract-ocr-eng)` });
    } finally {
      if (saved === undefined) delete process.env.TESSDATA_PREFIX;
      else process.env.TESSDATA_PREFIX = saved;
    }
  }, 60_000);
});
