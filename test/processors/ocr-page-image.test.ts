/**
 * The OCR raster taken from a scanned page's own image (processors/ocr/page-image.ts; issue 13 §6,
 * where docket's OCR time went): on a plain scan it is the same pixels the drawn page gives, bit for
 * bit on a 1-bit page; every page that is not one upright image at a usable resolution is drawn as
 * before; a page whose image failed to decode keeps its warnings; a page that paints no image at
 * all (a one-line cover, a blank page) is not a scan and is never drawn for Tesseract.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { recognizePdfPages } from "../../processors/ocr/ocr-pdf.ts";
import { coversPage, directPageRaster, paintsImage, singleImage } from "../../processors/ocr/page-image.ts";
import { rgbaToGrey } from "../../processors/ocr/raster.ts";
import { loadPdfJs } from "../../processors/pdf/engine.ts";
import { closePdf, openPdf, type OpenPdf } from "../../processors/pdf/open.ts";
import { renderPage } from "../../processors/pdf/render.ts";
import { makePdf, makeScanPdf, relabelAsJbig2 } from "../../scripts/samples/index.ts";
import { toolReady } from "../support/tools.ts";
import { testOcr } from "./support/ocr.ts";
import { cleanupWorkDirs, processBytes, workDir } from "./support/run.ts";

afterEach(cleanupWorkDirs);

const ready = (["tesseract", "convert", "tiff2pdf", "img2pdf", "qpdf"] as const).every((t) => toolReady(t));

/** Open `bytes` as a PDF (written into a fresh work dir); closed by the caller. */
async function open(bytes: Uint8Array): Promise<{ pdf: OpenPdf; dir: string }> {
  const dir = workDir();
  writeFileSync(join(dir, "in.pdf"), bytes);
  return { pdf: await openPdf(join(dir, "in.pdf")), dir };
}

/** The grey pixels of page `n` drawn by pdf.js at `dpi` (what the OCR path used for every page before). */
async function drawnGrey(pdf: OpenPdf, n: number, dpi: number): Promise<{ grey: Uint8Array; width: number; height: number }> {
  const drawn = (await renderPage(pdf, n, { dpi }, 60_000))!;
  const rgba = drawn.canvas.getContext("2d").getImageData(0, 0, drawn.width, drawn.height).data;
  return { grey: rgbaToGrey(rgba, drawn.width * drawn.height), width: drawn.width, height: drawn.height };
}

/** Pixels of a Netpbm file (P4 unpacked to 0 = black / 255 = white, or P5 as is). */
function netpbmPixels(bytes: Uint8Array): { grey: Uint8Array; width: number; height: number } {
  const head = new TextDecoder("latin1").decode(bytes.subarray(0, 40));
  const m = /^(P4|P5)\n(\d+) (\d+)\n(?:255\n)?/.exec(head)!;
  const [width, height] = [Number(m[2]), Number(m[3])];
  const body = bytes.subarray(m[0].length);
  if (m[1] === "P5") return { grey: body.slice(0, width * height), width, height };
  const stride = Math.ceil(width / 8);
  const grey = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) grey[y * width + x] = body[y * stride + (x >> 3)]! & (0x80 >> (x & 7)) ? 0 : 255;
  return { grey, width, height };
}

describe("which pages are one upright image over the page (pure)", () => {
  test("singleImage: save/transform/dependency/image/restore → the image and its matrix; text, a second image or a clip → null", async () => {
    const { OPS } = await loadPdfJs();
    const ops = OPS as unknown as Record<string, number>;
    const scan = [ops.save!, ops.transform!, ops.dependency!, ops.paintImageXObject!, ops.restore!];
    const args = [null, [595.2, 0, 0, 841.92, 0, 0], ["img_p0_1"], ["img_p0_1", 2480, 3508], null];
    expect(singleImage(ops, scan, args)).toEqual({ id: "img_p0_1", ctm: [595.2, 0, 0, 841.92, 0, 0] });
    // Nested transforms compose: a 2× scale then a move.
    expect(singleImage(ops, [ops.transform!, ops.transform!, ops.paintImageXObject!], [[2, 0, 0, 2, 0, 0], [10, 0, 0, 20, 5, 5], ["im"]])).toEqual({ id: "im", ctm: [20, 0, 0, 40, 10, 10] });
    expect(singleImage(ops, [...scan, ops.showText!], [...args, [[]]])).toBeNull();
    expect(singleImage(ops, [...scan, ops.paintImageXObject!], [...args, ["img_p0_2", 10, 10]])).toBeNull();
    expect(singleImage(ops, [ops.save!, ops.clip!, ops.paintImageXObject!, ops.restore!], [null, null, ["im"], null])).toBeNull();
    expect(singleImage(ops, [ops.save!, ops.paintImageMaskXObject!, ops.restore!], [null, [{}], null])).toBeNull();
    expect(singleImage(ops, [ops.save!, ops.restore!], [null, null])).toBeNull();
  });

  test("paintsImage: any image operator, masks and inline images included; text and paths are not", async () => {
    const ops = (await loadPdfJs()).OPS as unknown as Record<string, number>;
    for (const op of ["paintImageXObject", "paintInlineImageXObject", "paintImageMaskXObject", "paintSolidColorImageMask", "paintImageXObjectRepeat"]) expect(paintsImage(ops, [ops.save!, ops[op]!, ops.restore!])).toBe(true);
    expect(paintsImage(ops, [ops.beginText!, ops.showText!, ops.endText!, ops.constructPath!, ops.fill!])).toBe(false);
  });

  test("coversPage: the page box to within 0.5 %, upright and unflipped; a flipped, turned, smaller or offset image does not", () => {
    const view = [0, 0, 595.2, 841.92];
    expect(coversPage([595.2, 0, 0, 841.92, 0, 0], view)).toBe(true);
    expect(coversPage([596, 0, 0, 842.5, 0.5, -0.5], view)).toBe(true);
    expect(coversPage([595.2, 0, 0, -841.92, 0, 841.92], view)).toBe(false);
    expect(coversPage([0, 841.92, -595.2, 0, 595.2, 0], view)).toBe(false);
    expect(coversPage([500, 0, 0, 841.92, 0, 0], view)).toBe(false);
    expect(coversPage([595.2, 0, 0, 841.92, 20, 0], view)).toBe(false);
    // A crop box that does not start at the origin.
    expect(coversPage([500, 0, 0, 700, 50, 60], [50, 60, 550, 760])).toBe(true);
  });
});

describe.skipIf(!ready)("the raster of a plain scan is its own image", () => {
  test("300-dpi CCITT G4 page → 1-bit PBM at 300 dpi, bit for bit what drawing the page at 300 dpi gives", async () => {
    const { pdf, dir } = await open(await makeScanPdf("g4", [["A fax page of the contract"]]));
    try {
      const r = await directPageRaster(pdf, 1, 300, 60_000);
      expect(r.kind).toBe("raster");
      if (r.kind !== "raster") return;
      expect([new TextDecoder().decode(r.raster.bytes.subarray(0, 2)), r.raster.width, r.raster.height, r.raster.dpi]).toEqual(["P4", 2480, 3508, 300]);
      const own = netpbmPixels(r.raster.bytes);
      const drawn = await drawnGrey(pdf, 1, 300);
      expect([own.width, own.height]).toEqual([drawn.width, drawn.height]);
      let differ = 0;
      let ink = 0;
      for (let i = 0; i < own.grey.length; i++) {
        if (own.grey[i] === 0) ink++;
        if (own.grey[i] !== (drawn.grey[i]! < 128 ? 0 : 255)) differ++;
      }
      expect(differ).toBe(0);
      expect(ink).toBeGreaterThan(1000); // the text is there, black on white (not inverted)
      expect(ink).toBeLessThan(own.grey.length / 10);
    } finally {
      await closePdf(pdf);
    }
  }, 60_000);

  test("grey JPEG phone scan → 8-bit PGM whose pixels are the drawn page's to within 2 grey levels on average", async () => {
    const { pdf, dir } = await open(await makeScanPdf("phone", [["A phone photo of a page"]]));
    try {
      const r = await directPageRaster(pdf, 1, 300, 60_000);
      expect(r.kind).toBe("raster");
      if (r.kind !== "raster") return;
      expect(new TextDecoder().decode(r.raster.bytes.subarray(0, 2))).toBe("P5");
      const own = netpbmPixels(r.raster.bytes);
      const drawn = await drawnGrey(pdf, 1, r.raster.dpi);
      expect([own.width, own.height]).toEqual([drawn.width, drawn.height]);
      let sum = 0;
      for (let i = 0; i < own.grey.length; i++) sum += Math.abs(own.grey[i]! - drawn.grey[i]!);
      expect(sum / own.grey.length).toBeLessThan(2);
    } finally {
      await closePdf(pdf);
    }
  }, 60_000);

  test("drawn instead: a page shown turned by /Rotate, a resolution far from OCR_DPI; a page of text is no_image", async () => {
    const turned = await open(await makeScanPdf("g4", [["Turned page"]], { storedRotation: 90 }));
    const text = await open(makePdf({ pages: [["Only a text layer here"]] }));
    try {
      expect((await directPageRaster(turned.pdf, 1, 300, 60_000)).kind).toBe("draw");
      expect((await directPageRaster(text.pdf, 1, 300, 60_000)).kind).toBe("no_image"); // not a scan at all
      // 300-dpi image, OCR at 600 or 150 dpi: outside 4/3 either way.
      const g4 = await open(await makeScanPdf("g4", [["Any page"]]));
      try {
        expect((await directPageRaster(g4.pdf, 1, 600, 60_000)).kind).toBe("draw");
        expect((await directPageRaster(g4.pdf, 1, 150, 60_000)).kind).toBe("draw");
        expect((await directPageRaster(g4.pdf, 1, 240, 60_000)).kind).toBe("raster");
      } finally {
        await closePdf(g4.pdf);
      }
    } finally {
      await closePdf(turned.pdf);
      await closePdf(text.pdf);
    }
  }, 60_000);

  test("through recognizePdfPages: plain scan pages are listed as direct, a turned page is drawn, and the text is read either way", async () => {
    const dir = workDir();
    writeFileSync(join(dir, "plain.pdf"), await makeScanPdf("g4", [["First plain page of the deed"], ["Second plain page of the deed"]]));
    writeFileSync(join(dir, "turned.pdf"), await makeScanPdf("g4", [["Third page stored sideways"]], { storedRotation: 90 }));
    expect(Bun.spawnSync(["qpdf", "--empty", "--pages", join(dir, "plain.pdf"), join(dir, "turned.pdf"), "--", join(dir, "mixed.pdf")]).exitCode).toBe(0);
    const pdf = await openPdf(join(dir, "mixed.pdf"));
    try {
      const out = await recognizePdfPages(pdf, { ...testOcr(), pages: [1, 2, 3], dir: join(dir, "ocr"), pdfLayer: false, maxPixels: 100_000_000, renderBudgetMs: 60_000 });
      expect(out.facts).toMatchObject({ needed: 3, recognized: 3, direct: [1, 2], failed: [], overBudget: [] });
      expect(out.texts.get(1)).toContain("First plain page");
      expect(out.texts.get(2)).toContain("Second plain page");
      expect(out.texts.get(3)).toContain("stored sideways");
    } finally {
      await closePdf(pdf);
    }
  }, 120_000);

  test("a scan whose image cannot be decoded (relabelled JBIG2) is drawn, and its decode warning is kept for the page", async () => {
    const dir = workDir();
    writeFileSync(join(dir, "bad.pdf"), relabelAsJbig2(await makeScanPdf("g4", [["Relabelled page"]])));
    const pdf = await openPdf(join(dir, "bad.pdf"));
    try {
      const out = await recognizePdfPages(pdf, { ...testOcr(), pages: [1], dir: join(dir, "ocr"), pdfLayer: false, maxPixels: 100_000_000, renderBudgetMs: 60_000 });
      expect(out.facts.direct).toEqual([]);
      expect(out.imageWarnings.get(1)?.[0]).toMatch(/Unable to decode image ".+": "Jbig2Error/);
    } finally {
      await closePdf(pdf);
    }
  }, 60_000);
});

describe.skipIf(!ready)("a page without text and without any image is not a scan", () => {
  test("a one-line cover (vector text under 32 characters) beside a scan: the cover is noImage, only the scan is needed and recognized", async () => {
    const dir = workDir();
    writeFileSync(join(dir, "cover.pdf"), makePdf({ pages: [["Invoice 12"]] }));
    writeFileSync(join(dir, "scan.pdf"), await makeScanPdf("g4", [["The scanned second page of the invoice"]]));
    expect(Bun.spawnSync(["qpdf", "--empty", "--pages", join(dir, "cover.pdf"), join(dir, "scan.pdf"), "--", join(dir, "both.pdf")]).exitCode).toBe(0);
    const events: [number, number][] = [];
    const r = await processBytes(readFileSync(join(dir, "both.pdf")), "both.pdf", { ocr: testOcr({ maxPages: 1 }), onProgress: (d, t, stage) => stage === "ocr" && events.push([d, t]) });
    // The stage starts at the scan, before its Tesseract, and ends with the page done.
    expect([events[0], events.at(-1)]).toEqual([[0, 1], [1, 1]]);
    // maxPages 1 is not used up by the cover: the scan on page 2 is still recognized.
    expect(r.facts.ocr).toMatchObject({ needed: 1, recognized: 1, noImage: [1], direct: [2] });
    expect((r.facts.ocr as { stop?: unknown }).stop).toBeUndefined();
  }, 60_000);

  test("short text pages only (the kill test's invoices): no recognition at all, no OCR stage, no OCR facts, the text and preview as without OCR", async () => {
    const stages: (string | undefined)[] = [];
    const r = await processBytes(makePdf({ pages: [["Invoice 12"], ["Page 2 of 12"]] }), "invoice.pdf", { ocr: testOcr(), onProgress: (_d, _t, stage) => stages.push(stage) });
    expect([r.facts.ocr, r.facts.recognizedChars]).toEqual([undefined, undefined]);
    // It never entered the "ocr" stage: no recognition allowance, no "recognizing page" status.
    expect(stages.filter((s) => s === "ocr")).toEqual([]);
    expect(r.outputs.map((o) => o.fileName)).toEqual(["invoice.txt", "invoice-page1.jpg"]);
  }, 60_000);
});
