/**
 * The built-in self-check PDF (processors/pdf/self-check-pdf.ts, field case BR-11): it is exactly
 * what its comment says makePdf produced, its xref offsets point at their objects, and pdf.js
 * opens it and reads its text.
 */
import { describe, expect, test } from "vitest";
import { loadPdfJs, standardFontDir } from "../../processors/pdf/engine.ts";
import { SELF_CHECK_TEXT, selfCheckPdf } from "../../processors/pdf/self-check-pdf.ts";
import { makePdf } from "../../scripts/samples/index.ts";

describe("self-check PDF constant", () => {
  test("equals makePdf with the options named in its comment", () => {
    const fresh = makePdf({ pages: [[SELF_CHECK_TEXT]], pageSize: [200, 100], compress: false, idSeed: SELF_CHECK_TEXT });
    expect(Buffer.from(selfCheckPdf()).equals(Buffer.from(fresh))).toBe(true);
  });

  test("every xref offset and startxref points at the right place", () => {
    const text = Buffer.from(selfCheckPdf()).toString("latin1");
    const startxref = Number(/startxref\n(\d+)\n%%EOF\n$/.exec(text)![1]);
    expect(text.startsWith("xref\n0 6\n", startxref)).toBe(true);
    const entries = text.slice(startxref).split("\n").slice(3, 8);
    expect(entries).toHaveLength(5);
    entries.forEach((entry, i) => expect(text.startsWith(`${i + 1} 0 obj\n`, Number(entry.slice(0, 10)))).toBe(true));
  });

  test("pdf.js opens it: 1 page of 200×100 pt with the self-check text", async () => {
    const pdfjs = await loadPdfJs();
    const task = pdfjs.getDocument({ data: selfCheckPdf(), standardFontDataUrl: standardFontDir(), verbosity: pdfjs.VerbosityLevel.ERRORS });
    try {
      const doc = await task.promise;
      expect(doc.numPages).toBe(1);
      const page = await doc.getPage(1);
      expect(page.view).toEqual([0, 0, 200, 100]);
      const items = (await page.getTextContent()).items.map((i) => ("str" in i ? i.str : "")).join("");
      expect(items).toBe(SELF_CHECK_TEXT);
    } finally {
      await task.destroy();
    }
  });
});
