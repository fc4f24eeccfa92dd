/**
 * The parts processor (processors/parts/build-pdf.ts; issue 13 item 5, issue 15 item 3): one PDF from an
 * album's files, in order — images as upright pages, PDFs with their pages and text kept; parts that are
 * not usable are named, not fatal; the output is re-opened with pdf.js.
 */
import { describe, expect, test } from "vitest";
import { PDFDocument } from "@cantoo/pdf-lib";
import { makeJpeg, makePdf } from "../../scripts/samples/index.ts";
import { buildPdfFromParts, imagePageSize } from "../../processors/parts/build-pdf.ts";
import { processFile } from "../../processors/process-file.ts";
import { closePdf, openPdf } from "../../processors/pdf/open.ts";
import { ProcessingError } from "../../processors/types.ts";
import { testOptions, useWorkDir } from "./support/fixtures.ts";

const work = useWorkDir();
const put = async (name: string, bytes: Uint8Array | string): Promise<string> => work.put(name, bytes);

/** Text of every page of a PDF file, read by pdf.js. */
async function pageTexts(path: string): Promise<string[]> {
  const pdf = await openPdf(path);
  try {
    const out: string[] = [];
    for (let i = 1; i <= pdf.doc.numPages; i++) {
      const content = await (await pdf.doc.getPage(i)).getTextContent();
      out.push(content.items.map((x) => ("str" in x ? x.str : "")).join(""));
    }
    return out;
  } finally {
    await closePdf(pdf);
  }
}

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
});
