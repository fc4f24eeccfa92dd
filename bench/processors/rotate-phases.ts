/**
 * Where the time of docket's rotate goes (issue 15 item 7): each phase of processors/pdftools/pages.ts
 * `rotatePdf` alone, in this process (warm: every phase runs once before it is timed), on the bench's
 * ledger (200 pages unless asked): pdf-lib load (at its default parse speed, 100 objects per event-loop tick, and with
 * no yields), setting each page's /Rotate, save (object streams or not; pdf-lib's default 50 objects per
 * tick, or no yields), the pdf.js check (open + page count + the rotation of pages read back) on the warm
 * page thread and in process (pdf.js's fake worker, what verifyPdf uses), a second pdf-lib parse of the
 * written bytes (an alternative read-back), and rotatePdf / processFile whole (as they are now: no
 * yields, object streams only where the input had them — this one has none — and every page's /Rotate
 * read back by pdf.js in process from the bytes), and qpdf's CLI on the same file for scale.
 * `bun bench/processors/rotate-phases.ts [runs=15] [pages=200]` (a larger ledger shows how the check grows).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { degrees, ParseSpeeds, PDFDocument } from "@cantoo/pdf-lib";
import { makePdf } from "../../scripts/samples/index.ts";
import { closePdf, openPdf } from "../../processors/pdf/open.ts";
import { verifyPdf } from "../../processors/pdftools/load.ts";
import { rotatePdf } from "../../processors/pdftools/pages.ts";
import { processFile } from "../../processors/process-file.ts";
import { median } from "../queue/stats.ts";
import { fmt, load } from "./measure.ts";

const RUNS = Number(process.argv[2] ?? 15);
const PAGES = Number(process.argv[3] ?? 200);
const dir = mkdtempSync(join(tmpdir(), "docket-bench-rotate-"));

/**
 * Median ms of each phase over `RUNS` rounds after one warm-up round; a round runs every phase once, in
 * order, so a burst of load on the shared machine falls on all phases alike rather than on one.
 */
async function timedRounds(phases: ReadonlyArray<readonly [string, () => Promise<unknown>]>): Promise<Array<[string, number]>> {
  const xs = phases.map(() => [] as number[]);
  for (let round = 0; round <= RUNS; round++) {
    for (const [i, [, f]] of phases.entries()) {
      const t0 = performance.now();
      await f();
      if (round > 0) xs[i]!.push(performance.now() - t0);
    }
  }
  return phases.map(([name], i) => [name, median(xs[i]!)]);
}

/** verifyPdf's pdf.js read (open, page count, every asked page's /Rotate) with the evaluator chosen. */
async function pdfjsRead(source: Uint8Array | string, pages: readonly number[], inProcess: boolean): Promise<number[]> {
  const pdf = await openPdf(source, { inProcess });
  try {
    return await Promise.all(pages.map(async (n) => (await pdf.doc.getPage(n)).rotate));
  } finally {
    await closePdf(pdf);
  }
}

/** A fresh work dir for one whole run, removed after. */
async function inWorkDir(f: (workDir: string) => Promise<unknown>): Promise<void> {
  const workDir = mkdtempSync(join(dir, "w-"));
  try {
    await f(workDir);
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

try {
  const line = (i: number) => `Ledger line ${i}: account ${1000 + i}, amount ${(i * 37.5).toFixed(2)} EUR, reference REF-${i * 7}`;
  const ledger = join(dir, "ledger.pdf");
  await Bun.write(ledger, makePdf({ pages: Array.from({ length: PAGES }, (_, n) => [`Ledger page ${n + 1}`, ...Array.from({ length: 30 }, (_, i) => line((n + 1) * 100 + i))]) }));
  const bytes = await readFile(ledger);
  const loaded = (parseSpeed: number) => PDFDocument.load(bytes, { updateMetadata: false, parseSpeed });
  const rotated = async () => {
    const doc = await loaded(ParseSpeeds.Fastest);
    for (const p of doc.getPages()) p.setRotation(degrees((p.getRotation().angle + 90) % 360));
    return doc;
  };
  const doc = await rotated();
  const out = join(dir, "out.pdf");
  const packed = await doc.save({ useObjectStreams: true, objectsPerTick: Number.POSITIVE_INFINITY });
  const written = await doc.save({ useObjectStreams: false, objectsPerTick: Number.POSITIVE_INFINITY });
  await writeFile(out, written);
  const every = Array.from({ length: PAGES }, (_, i) => i + 1);
  const rows = await timedRounds([
    ["read the file", () => readFile(ledger)],
    ["pdf-lib load, default parse speed (yields every 100 objects)", () => loaded(ParseSpeeds.Slow)],
    ["pdf-lib load, no yields", () => loaded(ParseSpeeds.Fastest)],
    ["load (no yields) + set /Rotate on every page", rotated],
    ["load + rotate + save, object streams, no yields (a fresh document each time)", async () => (await rotated()).save({ useObjectStreams: true, objectsPerTick: Number.POSITIVE_INFINITY })],
    ["load + rotate + save, no object streams, no yields", async () => (await rotated()).save({ useObjectStreams: false, objectsPerTick: Number.POSITIVE_INFINITY })],
    ["save again, object streams, default 50 objects per tick", () => doc.save({ useObjectStreams: true })],
    ["save again, object streams, no yields", () => doc.save({ useObjectStreams: true, objectsPerTick: Number.POSITIVE_INFINITY })],
    ["save again, no object streams, no yields", () => doc.save({ useObjectStreams: false, objectsPerTick: Number.POSITIVE_INFINITY })],
    ["pdf.js on the page thread, bytes: open + page count", () => pdfjsRead(written, [], false)],
    ["pdf.js on the page thread, bytes: + every page's /Rotate (the check before)", () => pdfjsRead(written, every, false)],
    ["pdf.js in process, bytes: open + page count", () => pdfjsRead(written, [], true)],
    ["pdf.js in process, bytes: + the first and the last page", () => pdfjsRead(written, [1, PAGES], true)],
    ["pdf.js in process, bytes: + every page's /Rotate", () => pdfjsRead(written, every, true)],
    ["pdf.js in process, the file by ranges: + every page's /Rotate", () => pdfjsRead(out, every, true)],
    ["pdf.js in process, bytes with object streams: + every page's /Rotate", () => pdfjsRead(packed, every, true)],
    ["verifyPdf (the check now: in process, bytes, every page, counts compared)", () => verifyPdf(written, PAGES, every)],
    ["pdf-lib parse of the written bytes + every page's /Rotate (alternative read-back)", async () => (await PDFDocument.load(written, { parseSpeed: ParseSpeeds.Fastest, updateMetadata: false })).getPages().map((p) => p.getRotation().angle)],
    ["write the output file", () => writeFile(join(dir, "w.pdf"), written)],
    ["rotatePdf whole (load, rotate, save, write, check)", () => inWorkDir((workDir) => rotatePdf(ledger, { workDir, maxPdfPages: 100_000, declaredName: "bench.pdf" } as never, 90, null))],
    ["processFile whole (+ stat, detect, action parse: what a pool job runs)", () => inWorkDir((workDir) => processFile(ledger, { workDir, maxInputPixels: 100_000_000, maxOutputSide: 2560, maxPdfPages: 100_000, pdfPageBudgetMs: 60_000, action: "rotate:90", declaredName: "bench.pdf" }))],
    ["qpdf --rotate=+90 (its CLI, a fresh process: for scale)", async () => Bun.spawnSync(["qpdf", ledger, "--rotate=+90", join(dir, "q.pdf")])],
  ]);
  console.log(`\n# rotate phases — ${PAGES}-page ledger (${fmt(bytes.byteLength / 1024)} KB), median of ${RUNS} after a warm-up; Bun ${Bun.version}; load ${load()}\n`);
  console.log("| phase | ms |\n| --- | ---: |");
  for (const [name, ms] of rows) console.log(`| ${name} | ${fmt(ms, 1)} |`);
  console.log(`\nload after: ${load()}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
