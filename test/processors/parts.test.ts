/**
 * The parts processor (processors/parts/build-pdf.ts; issue 13 item 5, issue 15 item 3): one PDF from an
 * album's files, in order — images as upright pages, PDFs with their pages and text kept; parts that are
 * not usable are named, not fatal; the output is re-opened with pdf.js.
 */
import { execFileSync } from "node:child_process";
import { describe, expect, test } from "vitest";
import sharp from "sharp";
import { PDFDocument } from "@cantoo/pdf-lib";
import { makeJpeg, makePdf } from "../../scripts/samples/index.ts";
import { buildPdfFromParts, imagePageSize } from "../../processors/parts/build-pdf.ts";
import { processFile } from "../../processors/process-file.ts";
import { ProcessingError } from "../../processors/types.ts";
import { testOptions, useWorkDir } from "./support/fixtures.ts";
import { pageTexts } from "./support/page-texts.ts";
import { toolPath, toolReady } from "../support/tools.ts";

const work = useWorkDir();
const put = async (name: string, bytes: Uint8Array | string): Promise<string> => work.put(name, bytes);

describe("parts → one PDF", () => {
  test("PDFs and an EXIF-rotated photo, in album order: PDF pages keep their text, the photo is an upright page", async () => {
    const a = await put("a", makePdf({ pages: [["Alpha one"], ["Alpha two"]] }));
    // Stored 200×100 with orientation 6: displayed 100×200 (portrait).
    const photo = await put("b", await makeJpeg(100, 200, { orientation: 6 }));
    const c = await put("c", makePdf({ pages: [["Gamma"]] }));
    const r = await processFile("/nonexistent", testOptions(work.dir(), null, { parts: [{ path: a, name: "a.pdf", n: 1 }, { path: photo, name: null, n: 2 }, { path: c, name: "c.pdf", n: 3 }] }));
    expect(r.facts).toMatchObject({ type: "application/pdf", pages: 4, parts: 3 });
    expect(r.facts.failedParts).toBeUndefined();
    expect(r.outputs.map((o) => [o.fileName, o.mime])).toEqual([["a.pdf", "application/pdf"]]);
    expect(await pageTexts(r.outputs[0]!.path)).toEqual(["Alpha one", "Alpha two", "", "Gamma"]);
    const doc = await PDFDocument.load(await Bun.file(r.outputs[0]!.path).bytes());
    const page3 = doc.getPage(2);
    expect([page3.getWidth(), page3.getHeight()]).toEqual([imagePageSize(100, 200).width, imagePageSize(100, 200).height]);
  });

  test("an encrypted PDF, a text file and an empty file are left out and named with their reasons; the rest makes the PDF", async () => {
    const locked = await put("l", makePdf({ pages: [["Secret"]], encrypt: { userPassword: "pw", ownerPassword: "pw" } }));
    const txt = await put("t", "plain text\n");
    const empty = await put("e", "");
    const img = await put("i", await makeJpeg(300, 150));
    const r = await buildPdfFromParts(
      [{ path: locked, name: "locked.pdf", n: 1 }, { path: txt, name: "notes.txt", n: 2 }, { path: empty, name: "zero.jpg", n: 3 }, { path: img, name: "i.jpg", n: 4 }],
      testOptions(work.dir()),
    );
    expect(r.facts).toMatchObject({ pages: 1, parts: 4 });
    expect((r.facts.failedParts as Array<{ part: number; name: string; reason: string }>).map((f) => [f.part, f.name, f.reason])).toEqual([
      [1, "locked.pdf", "encrypted"],
      [2, "notes.txt", "unsupported_type"],
      [3, "zero.jpg", "empty"],
    ]);
  });

  test("no usable part: the first part's reason; over MAX_PDF_PAGES: too_many_pages", async () => {
    const txt = await put("t", "plain text\n");
    await expect(buildPdfFromParts([{ path: txt, name: "notes.txt" }], testOptions(work.dir()))).rejects.toMatchObject({ reason: "unsupported_type" });
    const big = await put("b", makePdf({ pages: [["1"], ["2"], ["3"]] }));
    const err = await buildPdfFromParts([{ path: big, name: null }], testOptions(work.dir(), null, { maxPdfPages: 2 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProcessingError);
    expect(err).toMatchObject({ reason: "too_many_pages", params: { pages: 3, limit: 2 } });
  });

  test.skipIf(!toolReady("convert") || !toolReady("pdftoppm"))(
    "BMP parts (ImageMagick, 24-bit and 32-bit with alpha) become pages through the image processor's decoder: colours, orientation and aspect kept",
    async () => {
      const dir = work.dir();
      // 60×80, red above blue: a bottom-up BMP read the wrong way round would put blue on top.
      execFileSync(toolPath("convert")!, ["-size", "60x40", "xc:red", "xc:blue", "-append", `bmp3:${dir}/two.bmp`]);
      execFileSync(toolPath("convert")!, ["-size", "40x40", "xc:rgba(0,128,0,0.5)", `bmp:${dir}/alpha.bmp`]);
      const jpg = await put("j.jpg", await makeJpeg(300, 150));
      const r = await buildPdfFromParts(
        [{ path: `${dir}/two.bmp`, name: "two.bmp", n: 1 }, { path: `${dir}/alpha.bmp`, name: "alpha.bmp", n: 2 }, { path: jpg, name: "j.jpg", n: 3 }],
        testOptions(dir),
      );
      expect(r.facts.failedParts).toBeUndefined();
      expect(r.facts).toMatchObject({ pages: 3, parts: 3 });
      const doc = await PDFDocument.load(await Bun.file(r.outputs[0]!.path).bytes());
      expect(doc.getPages().map((p) => Math.round((p.getWidth() / p.getHeight()) * 100) / 100)).toEqual([0.75, 1, 2]);
      // Page 1 drawn by poppler: red in its top half, blue in its bottom half.
      execFileSync(toolPath("pdftoppm")!, ["-r", "10", "-f", "1", "-l", "2", "-png", r.outputs[0]!.path, `${dir}/page`]);
      const pixel = async (file: string, fx: number, fy: number) => {
        const { data, info } = await sharp(file).removeAlpha().raw().toBuffer({ resolveWithObject: true });
        const i = (Math.floor(info.height * fy) * info.width + Math.floor(info.width * fx)) * info.channels;
        return [data[i]!, data[i + 1]!, data[i + 2]!].map((v) => Math.round(v / 32) * 32);
      };
      expect(await pixel(`${dir}/page-1.png`, 0.5, 0.25)).toEqual([256, 0, 0]);
      expect(await pixel(`${dir}/page-1.png`, 0.5, 0.75)).toEqual([0, 0, 256]);
      // Page 2: the half-transparent green over the page's white.
      const [r2, g2, b2] = await pixel(`${dir}/page-2.png`, 0.5, 0.5);
      expect(g2).toBeGreaterThan(r2!);
      expect(g2).toBeGreaterThan(b2!);
    },
  );
});
