/**
 * The per-page budget (PDF_PAGE_BUDGET → `pdfPageBudgetMs`, processors/budget.ts) on real PDFs
 * with one page that is expensive for pdf.js (scripts/samples/heavy-page.ts), through the
 * warm pool child the worker uses (processors/pool/) and in-process.
 *
 * Deterministic without timing assertions: the budget counts the child's CPU time, not wall time
 * (processors/budget.ts), so what a page costs hardly depends on the machine's load. The heavy
 * pages cost seconds of pdf.js work (1,250,000 `Tj` operators to extract, ≈ 3–5 s of CPU on the
 * dev box; 20,000 full-page fills to draw, ≈ 3 s), the light pages and the fill page's text under
 * 0.15 s, and the tight budget sits between them (0.5 s); the generous budget (60 s) is far above
 * the heavy page. Under load 8–17 on 2 cores a page of 0.25 s of CPU took over 1 s of wall time,
 * which a wall-clock budget refused. The attempt's wall clock is 45 s, so a timeout that names a
 * page came from the page budget, not from the wall clock (whose params have no page); the heavy
 * pages are only as heavy as the margins need, because a generous run still has to finish within
 * that wall clock on a loaded machine (a 6 s page took over 45 s at load 21 on 2 cores).
 */
import { readFileSync, readdirSync } from "node:fs";
import { unzipSync } from "fflate";
import sharp from "sharp";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import type { ProcessorOptions } from "../../processors/types.ts";
import type { JobLimits } from "../../processors/pool/index.ts";
import { closePdf, openPdf } from "../../processors/pdf/open.ts";
import { processPdf } from "../../processors/pdf/process-pdf.ts";
import { renderPageJpeg } from "../../processors/pdf/render.ts";
import { extractText } from "../../processors/pdf/text.ts";
import { fillOps, makePdf, textShowOps } from "../../scripts/samples/index.ts";
import { testOptions } from "./support/fixtures.ts";
import { cleanupWorkDirs, refused, writeInput } from "./support/run.ts";
import { closeTestPool, testPool } from "../support/pool.ts";

/** Budget the heavy pages are far over and the light pages far under, ms of CPU time. */
const TIGHT_MS = 500;
/** Budget far over every page here, ms of CPU time. */
const GENEROUS_MS = 60_000;
/** Wall clock of one isolated attempt: far over the heavy pages, so it never decides a test. */
const LIMITS = { timeoutMs: 45_000, memoryMb: 1536 };
/** `Tj` operators on the text-heavy page (≈ 3–5 s of getTextContent's CPU time on the dev box; 200 screens). */
const TEXT_OPS = 1_250_000;
/** Full-page fills on the render-heavy page (≈ 3 s of CPU to draw at 1600 px on the dev box; its text ≈ 0.09 s). */
const FILLS = 20_000;
/** The light pages' lines; page 3's own line comes before its heavy operators. */
const LINES = [["Light page one"], ["Light page two"], ["Heavy page three"]];
/** Non-space characters of {@link LINES}. */
const LINE_CHARS = LINES.flat().join("").replace(/\s/g, "").length;

let textHeavy: Uint8Array;
let renderHeavy: Uint8Array;
let renderHeavyFirst: Uint8Array;

beforeAll(() => {
  textHeavy = makePdf({ pages: LINES, contents: [null, null, textShowOps(TEXT_OPS)] });
  renderHeavy = makePdf({ pages: LINES, contents: [null, null, fillOps(FILLS)] });
  renderHeavyFirst = makePdf({ pages: [["Heavy page one"], ["Light page two"]], contents: [fillOps(FILLS)] });
});

afterEach(cleanupWorkDirs);
afterAll(closeTestPool);

/** One job on the test pool (the pipeline's path). */
const viaPool = (path: string, options: ProcessorOptions, limits: Omit<JobLimits, "onProgress"> & { onProgress?: (done: number, total: number) => void }) =>
  testPool().process(path, options, limits);

/**
 * A page over its budget is stopped inside the child (its pdf.js thread is terminated), never by
 * killing it: the pool still has every child it had, none was replaced, and the next job works.
 */
async function sameChildrenStillWork(before: number[], dir: string): Promise<void> {
  const { path } = writeInput(makePdf({ pages: [["After the budget"]] }));
  expect((await viaPool(path, testOptions(dir, "after.pdf"), LIMITS)).facts.pages).toBe(1);
  expect(testPool().snapshot().map((c) => c.pid).sort()).toEqual(before);
}

/** Pids of the test pool's children, warm (both started and idle). */
async function warmPids(): Promise<number[]> {
  const pool = testPool();
  pool.warm();
  await expect.poll(() => pool.snapshot().filter((c) => c.state === "idle").length, { timeout: 60_000 }).toBe(pool.settings.size);
  return pool.snapshot().map((c) => c.pid).sort();
}

describe("page budget through the processor pool", () => {
  test("text: the heavy page 3 over a tight budget → processing_timeout {page: 3}, light pages passed, the same children work on", async () => {
    const { dir, path } = writeInput(textHeavy);
    const before = await warmPids();
    const progress: [number, number][] = [];
    const err = await refused(
      viaPool(path, testOptions(dir, "heavy.pdf", { pdfPageBudgetMs: TIGHT_MS }), { ...LIMITS, onProgress: (d, t) => progress.push([d, t]) }),
    );
    expect(err.reason).toBe("processing_timeout");
    expect(err.params).toEqual({ seconds: 1, page: 3 });
    expect(err.message).toBe(`text of page 3 took over ${TIGHT_MS} ms of CPU time`);
    // Pages 1 and 2 finished inside the same budget (progress is reported after a page is done).
    expect(progress[0]).toEqual([1, 3]);
    expect(progress.every(([done]) => done <= 2)).toBe(true);
    expect(readdirSync(dir).sort()).toEqual(["source.bin"]); // no .txt left
    await sameChildrenStillWork(before, dir);
  }, 90_000);

  test("text: the same file with a generous budget → every character of the heavy page extracted", async () => {
    const { dir, path } = writeInput(textHeavy);
    const { facts, outputs } = await viaPool(path, testOptions(dir, "heavy.pdf", { pdfPageBudgetMs: GENEROUS_MS }), LIMITS);
    expect(facts.pages).toBe(3);
    expect(facts.textChars).toBe(LINE_CHARS + 2 * TEXT_OPS); // `w0` … `w9`: two characters per Tj
    const txt = readFileSync(outputs.find((o) => o.fileName === "heavy.txt")!.path, "utf8");
    expect(txt.startsWith("--- page 1 of 3 ---\nLight page one\n")).toBe(true);
    expect(txt).toContain("--- page 3 of 3 ---\nHeavy page three");
    expect(facts.previewWidth).toBeGreaterThan(0);
  }, 90_000);

  test("render (`pages`): the heavy page 3 over a tight budget → processing_timeout {page: 3}; generous → all pages drawn", async () => {
    const { dir, path } = writeInput(renderHeavy);
    const before = await warmPids();
    const err = await refused(viaPool(path, testOptions(dir, "fills.pdf", { action: "pages", pdfPageBudgetMs: TIGHT_MS }), LIMITS));
    expect(err.reason).toBe("processing_timeout");
    expect(err.params).toEqual({ seconds: 1, page: 3 });
    expect(err.message).toBe(`render of page 3 took over ${TIGHT_MS} ms of CPU time`); // text extraction of page 3 passed
    await sameChildrenStillWork(before, dir);

    const ok = await viaPool(path, testOptions(dir, "fills.pdf", { action: "pages", pdfPageBudgetMs: GENEROUS_MS }), LIMITS);
    expect(ok.facts.renderedPages).toBe(3);
    const entries = unzipSync(readFileSync(ok.outputs[0]!.path));
    expect(Object.keys(entries)).toEqual(["page-1.jpg", "page-2.jpg", "page-3.jpg"]);
    // The last fill is 0.9 grey over the whole page: 0.9 × 255 ≈ 230 everywhere.
    const stats = await sharp(entries["page-3.jpg"]!).stats();
    for (const ch of stats.channels.slice(0, 3)) {
      expect(Math.round(ch.mean)).toBeGreaterThanOrEqual(228);
      expect(Math.round(ch.mean)).toBeLessThanOrEqual(231);
    }
  }, 120_000);
});

describe("page budget in-process: the over-budget page is stopped, not abandoned", () => {
  test("extractText over budget → ProcessingError page 3, the pdf.js thread has ended, close does not hang", async () => {
    const pdf = await openPdf(textHeavy);
    expect(pdf.worker.mode).toBe("thread");
    const err = await refused(extractText(pdf, TIGHT_MS));
    expect([err.reason, err.params]).toEqual(["processing_timeout", { seconds: 1, page: 3 }]);
    expect(pdf.worker.stopped).toBe(true);
    await pdf.worker.ended; // the thread's `close` event: its parse loop was terminated
    await closePdf(pdf);
  }, 90_000);

  test("renderPageJpeg over budget → null, render cancelled and the thread ended", async () => {
    const pdf = await openPdf(renderHeavy);
    expect(await renderPageJpeg(pdf, 1, 1600, GENEROUS_MS)).not.toBeNull(); // a light page first
    expect(await renderPageJpeg(pdf, 3, 1600, TIGHT_MS)).toBeNull();
    expect(pdf.worker.stopped).toBe(true);
    await pdf.worker.ended;
    await closePdf(pdf);
  }, 90_000);

  test("preview of a heavy page 1 over budget → skipped, the text result still delivered", async () => {
    const { dir, path } = writeInput(renderHeavyFirst);
    const r = await processPdf(path, testOptions(dir, "cover.pdf", { pdfPageBudgetMs: TIGHT_MS }));
    expect(r.facts.previewSkipped).toBe("page 1 render over budget");
    expect(r.facts.previewWidth).toBeUndefined();
    expect(r.outputs.map((o) => o.fileName)).toEqual(["cover.txt"]);
    expect(readFileSync(r.outputs[0]!.path, "utf8")).toContain("--- page 2 of 2 ---\nLight page two");
  }, 90_000);
});
