/**
 * The PDF tools (issue 15): rotate by page rotation, extract and split by page ranges, compress the
 * raster images (text kept), "to PDF" for an image; bad input with the existing reason codes. Outputs are
 * read back with pdf.js (page counts, rotations, text) and pdf-lib.
 */
import { describe, expect, test, vi } from "vitest";
import { makeJpeg, makePdf } from "../../scripts/samples/index.ts";
import { processFile } from "../../processors/process-file.ts";
import { closePdf, openPdf } from "../../processors/pdf/open.ts";
import { formatAction, parseAction } from "../../processors/pdftools/action.ts";
import { verifyPdf } from "../../processors/pdftools/load.ts";
import { formatRanges, pagesOf, parseRanges } from "../../processors/page-ranges.ts";
import { testOptions, useWorkDir } from "./support/fixtures.ts";

const work = useWorkDir();
const put = async (name: string, bytes: Uint8Array | string): Promise<string> => work.put(name, bytes);

/** pdf.js's view of a PDF: per page its text and rotation. */
async function view(path: string): Promise<Array<{ text: string; rotate: number }>> {
  const pdf = await openPdf(path);
  try {
    const out = [];
    for (let i = 1; i <= pdf.doc.numPages; i++) {
      const page = await pdf.doc.getPage(i);
      const content = await page.getTextContent();
      out.push({ text: content.items.map((x) => ("str" in x ? x.str : "")).join(""), rotate: page.rotate });
    }
    return out;
  } finally {
    await closePdf(pdf);
  }
}

const fivePages = () => makePdf({ pages: [["P1"], ["P2"], ["P3"], ["P4"], ["P5"]] });
const run = (path: string, action: string, name = "doc.pdf") => processFile(path, testOptions(work.dir(), name, { action }));

describe("page ranges", () => {
  test("parsed against the page count, canonical text, refusals named", () => {
    const r = parseRanges(" 1-3, 7 ,10-", 12);
    expect(r).toEqual({ ok: true, ranges: [{ from: 1, to: 3 }, { from: 7, to: 7 }, { from: 10, to: 12 }] });
    expect(r.ok && formatRanges(r.ranges)).toBe("1-3,7,10-12");
    expect(r.ok && pagesOf(r.ranges)).toEqual([1, 2, 3, 7, 10, 11, 12]);
    expect(parseRanges("-2", 5)).toEqual({ ok: true, ranges: [{ from: 1, to: 2 }] });
    expect(parseRanges("1-3,9", 5)).toEqual({ ok: false, problem: { kind: "past_end", item: "9", pages: 5 } });
    expect(parseRanges("4-2", 5)).toEqual({ ok: false, problem: { kind: "backwards", item: "4-2" } });
    expect(parseRanges("abc", 5)).toEqual({ ok: false, problem: { kind: "syntax", item: "abc" } });
    expect(parseRanges("0", 5).ok).toBe(false);
    expect(parseRanges("", 5).ok).toBe(false);
  });

  test("actions round-trip through their variant strings; others are no action", () => {
    for (const v of ["rotate:90", "rotate:270:1-3,7", "extract:2,4-5", "split:1-2,3-5", "compress:ebook", "compress:strong", "topdf"]) expect(formatAction(parseAction(v)!)).toBe(v);
    for (const v of ["default", "pages", "searchable", "rotate:45", "compress:max", "extract:", "split:x"]) expect(parseAction(v)).toBeNull();
  });
});

describe("PDF tools", () => {
  test("rotate 90° all pages, and 180° for pages 2-3 on top of a page's own rotation: /Rotate set, text untouched", async () => {
    const src = await put("s", fivePages());
    const all = await run(src, "rotate:90");
    expect(all.outputs.map((o) => o.fileName)).toEqual(["doc-rotated.pdf"]);
    expect((await view(all.outputs[0]!.path)).map((p) => [p.text, p.rotate])).toEqual([["P1", 90], ["P2", 90], ["P3", 90], ["P4", 90], ["P5", 90]]);
    const again = await put("r", await Bun.file(all.outputs[0]!.path).bytes());
    const some = await run(again, "rotate:180:2-3");
    expect((await view(some.outputs[0]!.path)).map((p) => p.rotate)).toEqual([90, 270, 270, 90, 90]);
    expect(some.facts).toMatchObject({ pages: 5, rotated: 2, degrees: 180 });
  });

  test("extract keeps the order given; split makes one PDF per range", async () => {
    const src = await put("s", fivePages());
    const ex = await run(src, "extract:4,1-2");
    expect(ex.outputs.map((o) => o.fileName)).toEqual(["doc-pages-4,1-2.pdf"]);
    expect((await view(ex.outputs[0]!.path)).map((p) => p.text)).toEqual(["P4", "P1", "P2"]);
    const sp = await run(src, "split:1-2,3,4-5");
    expect(sp.outputs.map((o) => o.fileName)).toEqual(["doc-p1-2.pdf", "doc-p3.pdf", "doc-p4-5.pdf"]);
    expect(await Promise.all(sp.outputs.map(async (o) => (await view(o.path)).map((p) => p.text)))).toEqual([["P1", "P2"], ["P3"], ["P4", "P5"]]);
    expect(sp.facts).toMatchObject({ pages: 5, splitParts: 3 });
  });

  test("compress re-encodes a large page image, keeps the text, reports before/after; an image-less PDF is not smaller", async () => {
    const jpeg = await makeJpeg(2400, 3400, { quality: 98 });
    const src = await put("s", makePdf({ pages: [["Keep this text"]], images: [{ jpeg, width: 2400, height: 3400, colorSpace: "DeviceRGB" }] }));
    const r = await run(src, "compress:ebook");
    expect(r.facts).toMatchObject({ imagesRecoded: 1, level: "ebook" });
    const { sizeBefore, sizeAfter } = r.facts as unknown as { sizeBefore: number; sizeAfter: number };
    expect(sizeAfter).toBeLessThan(sizeBefore / 2);
    expect(r.outputs[0]!.size).toBe(sizeAfter);
    expect((await view(r.outputs[0]!.path)).map((p) => p.text)).toEqual(["Keep this text"]);
    const plain = await run(await put("p", makePdf({ pages: [["tiny"]] })), "compress:strong");
    expect(plain.outputs).toEqual([]);
    expect(plain.facts).toMatchObject({ notSmaller: true });
  });

  test("to PDF: an image becomes a one-page PDF; bad input fails with the existing reason codes", async () => {
    const img = await put("i", await makeJpeg(300, 200));
    const r = await run(img, "topdf", "photo.jpg");
    expect(r.outputs.map((o) => o.fileName)).toEqual(["photo.pdf"]);
    expect(r.facts).toMatchObject({ pages: 1 });
    const locked = await put("l", makePdf({ pages: [["x"]], encrypt: { userPassword: "pw", ownerPassword: "pw" } }));
    await expect(run(locked, "rotate:90")).rejects.toMatchObject({ reason: "encrypted" });
    await expect(run(await put("z", makePdf({ pages: [] })), "split:1")).rejects.toMatchObject({ reason: "empty" });
    await expect(run(await put("d", new TextEncoder().encode("%PDF-1.4\n1 0 obj\n<<")), "compress:ebook")).rejects.toMatchObject({ reason: "truncated" });
    await expect(run(img, "rotate:90", "photo.jpg")).rejects.toMatchObject({ reason: "not_pdf" });
    await expect(processFile(await put("s", fivePages()), testOptions(work.dir(), "doc.pdf", { action: "rotate:90", maxPdfPages: 4 }))).rejects.toMatchObject({ reason: "too_many_pages" });
  });

  test("the pdf.js check before ready: every asked page's /Rotate, from the bytes or the file; a wrong page count is processing_crashed", async () => {
    const { PDFDocument, degrees } = await import("@cantoo/pdf-lib");
    const doc = await PDFDocument.load(makePdf({ pages: Array.from({ length: 70 }, (_, i) => [`P${i + 1}`]) }));
    doc.getPages().forEach((p, i) => p.setRotation(degrees((i % 4) * 90)));
    const bytes = await doc.save();
    const every = Array.from({ length: 70 }, (_, i) => i + 1);
    const fromBytes = await verifyPdf(bytes, 70, every);
    // 70 pages: more than one batch of reads; each page's own angle, none borrowed from another.
    expect(every.map((n) => fromBytes.rotations.get(n))).toEqual(every.map((n) => ((n - 1) % 4) * 90));
    const fromFile = await verifyPdf(await put("r.pdf", bytes), 70, [3, 70]);
    expect([...fromFile.rotations]).toEqual([[3, 180], [70, 90]]);
    await expect(verifyPdf(bytes, 71)).rejects.toMatchObject({ reason: "processing_crashed" });
    await expect(verifyPdf(new TextEncoder().encode("%PDF-1.4\nnot a pdf"), 1)).rejects.toMatchObject({ reason: "processing_crashed" });
  });

  test("rotate is not ready when pdf.js reads a page turned otherwise than written (the check's answer for page 4 falsified)", async () => {
    const src = await put("s", fivePages());
    vi.resetModules();
    vi.doMock("../../processors/pdftools/load.ts", async (importOriginal) => {
      const real = await importOriginal<typeof import("../../processors/pdftools/load.ts")>();
      const savePdf: typeof real.savePdf = async (...args) => {
        const saved = await real.savePdf(...args);
        return { ...saved, rotations: new Map([...saved.rotations].map(([n, r]) => [n, n === 4 ? (r + 90) % 360 : r])) };
      };
      return { ...real, savePdf };
    });
    try {
      const { rotatePdf } = await import("../../processors/pdftools/pages.ts");
      await expect(rotatePdf(src, testOptions(work.dir(), "doc.pdf"), 90, null)).rejects.toMatchObject({ reason: "processing_crashed", message: "pdf.js reads page 4 rotated 180°, 90° was written" });
    } finally {
      vi.doUnmock("../../processors/pdftools/load.ts");
      vi.resetModules();
    }
  });

  test("a page's own /Rotate is taken as viewers show it: 45 (no multiple of 90) as 0, -90 as 270, 450 as 90", async () => {
    const { PDFDocument, PDFName, PDFNumber } = await import("@cantoo/pdf-lib");
    const doc = await PDFDocument.load(fivePages());
    [45, -90, 450].forEach((r, i) => doc.getPage(i).node.set(PDFName.of("Rotate"), PDFNumber.of(r)));
    const r = await run(await put("odd", await doc.save()), "rotate:90");
    expect((await view(r.outputs[0]!.path)).map((p) => p.rotate)).toEqual([90, 0, 180, 90, 90]);
  });

  test("page tools keep the source's object streams, as qpdf does by default: none in, none out; packed in, packed out", async () => {
    const { PDFDocument } = await import("@cantoo/pdf-lib");
    const { readFile } = await import("node:fs/promises");
    const packed = (b: Uint8Array) => Buffer.from(b).includes("/ObjStm");
    const plainIn = fivePages();
    const packedIn = await (await PDFDocument.load(plainIn)).save({ useObjectStreams: true });
    expect([packed(plainIn), packed(packedIn)]).toEqual([false, true]);
    for (const [i, [bytes, want]] of ([[plainIn, false], [packedIn, true]] as const).entries()) {
      for (const action of ["rotate:90", "extract:2-3", "split:1-2,3-5"]) {
        const r = await run(await put(`in-${i}-${action.split(":")[0]}`, bytes), action);
        for (const o of r.outputs) expect([action, packed(await readFile(o.path))]).toEqual([action, want]);
      }
    }
  });
});
