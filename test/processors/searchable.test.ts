/**
 * The searchable PDF's writer (processors/ocr/searchable.ts) without Tesseract: text-only layer PDFs
 * made here stand in for Tesseract's. It loads and saves with the pool child's pdf-lib options
 * (processors/pdf-lib-options.ts: no `setTimeout(0)` every 100 parsed / 50 written objects), and the
 * output still opens in pdf.js with every page and each overlaid page's text layer.
 */
import { afterEach, describe, expect, test, vi } from "vitest";
import { makePdf } from "../../scripts/samples/index.ts";
import { writeSearchablePdf } from "../../processors/ocr/searchable.ts";
import { useWorkDir } from "./support/fixtures.ts";
import { pageTexts } from "./support/page-texts.ts";

const work = useWorkDir();
afterEach(() => {
  vi.restoreAllMocks();
});

describe("writeSearchablePdf", () => {
  test("a 120-page source (≈ 240 objects) is read and written without one event-loop yield; pdf.js reads every page and the two layers", async () => {
    // Each page is a page object and a content stream: past pdf-lib's 100-objects-per-yield parse and
    // 50-per-yield write defaults several times over.
    const source = work.put("source.pdf", makePdf({ pages: Array.from({ length: 120 }, (_, i) => [`Original page ${i + 1}`]) }));
    const layers = new Map([
      [1, work.put("layer-1.pdf", makePdf({ pages: [["Recognized words of the first page"]] }))],
      [120, work.put("layer-120.pdf", makePdf({ pages: [["Recognized words of the last page"]] }))],
    ]);
    const out = `${work.dir()}/searchable.pdf`;
    const timers = vi.spyOn(globalThis, "setTimeout");
    const overlaid = await writeSearchablePdf(source, layers, out);
    const yields = timers.mock.calls.length;
    timers.mockRestore();
    expect([overlaid, yields]).toEqual([2, 0]);
    const texts = await pageTexts(out);
    expect(texts).toHaveLength(120);
    expect(texts[0]).toContain("Original page 1");
    expect(texts[0]).toContain("Recognized words of the first page");
    expect(texts[1]).toBe("Original page 2");
    expect(texts[119]).toContain("Original page 120");
    expect(texts[119]).toContain("Recognized words of the last page");
  }, 60_000);
});
