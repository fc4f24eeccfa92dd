/**
 * bench/ocr/run.ts — OCR throughput on a 20-page scan, docket against ocrmypdf in the same run
 * (issue 13 §6; docs/benchmarks.md "OCR").
 *
 *   bun bench/ocr/run.ts [runs=3] [pages=20] [kind=g4]
 *
 * The scan: `pages` A4 pages at 300 dpi, 30 lines of 12 pt text each (4–6 words) (English and Russian pages
 * alternating, words drawn from fixed lists with a seeded generator), made by ImageMagick and
 * libtiff (`g4`), or img2pdf (`phone`, `jpx`) — scripts/samples/scans.ts. Rows, interleaved run by
 * run, medians of `runs` after one warm-up run of the first row:
 *   docket, action default     the PDF processor on a warm pool child (ProcessorPool.process), as a job runs:
 *                              text layer, page-1 preview, Tesseract on every page → .txt
 *   docket, action searchable  the same, plus the searchable PDF (Tesseract's text-only pages over
 *                              the originals with pdf-lib, re-opened by pdf.js)
 *   ocrmypdf, --output-type pdf  `ocrmypdf -l rus+eng --jobs N --output-type pdf --sidecar out.txt`
 *   ocrmypdf, default (PDF/A)  `ocrmypdf -l rus+eng --jobs N --sidecar out.txt` (Ghostscript PDF/A)
 * N = OCR_CONCURRENCY = cores for both. Pages per minute, the ratio docket / ocrmypdf (higher is
 * faster), and each text's character error rate against the ground truth. The load average is
 * printed before and after: the machine is shared.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { ProcessorPool } from "../../processors/pool/index.ts";
import type { OcrOptions } from "../../processors/ocr/types.ts";
import { characterErrorRate, splitPages } from "../../scripts/samples/cer.ts";
import { makeScanPdf, type ScanKind } from "../../scripts/samples/index.ts";
import { mulberry32 } from "../../scripts/samples/prng.ts";
import { median } from "../queue/stats.ts";

const RUNS = Number(process.argv[2] ?? 3);
const PAGES = Number(process.argv[3] ?? 20);
const KIND = (process.argv[4] ?? "g4") as ScanKind;
const JOBS = Math.max(1, cpus().length);

const EN = "the contract supplier customer payment invoice within days notice party agreement delivery goods price terms written signed date period month year total amount bank transfer order schedule".split(" ");
const RU = "договор поставщик покупатель оплата счёт течение дней уведомление сторона соглашение поставка товар цена условия письменно подписан дата период месяц год сумма банк перевод заказ график".split(" ");

/** 30 lines of 4–6 words per page (the longest Russian line stays inside the page width); odd pages English, even pages Russian (1-based). */
function pageLines(page: number): string[] {
  const next = mulberry32(page * 7919);
  const rnd = (): number => next() / 2 ** 32;
  const words = page % 2 === 1 ? EN : RU;
  return Array.from({ length: 30 }, () => {
    const n = 4 + Math.floor(rnd() * 3);
    const line = Array.from({ length: n }, () => words[Math.floor(rnd() * words.length)]!).join(" ");
    // No line numbers: Tesseract reads a column of numbers as its own block, which reorders the text.
    return `${line[0]!.toUpperCase()}${line.slice(1)}.`;
  });
}

const dir = mkdtempSync(join(tmpdir(), "docket-bench-ocr-"));
const truth = Array.from({ length: PAGES }, (_, i) => pageLines(i + 1));
const scanPath = join(dir, "scan.pdf");
/** `BENCH_OCR_KEEP=<path>`: also write the scan there (to profile one run by hand). */
const keep = process.env.BENCH_OCR_KEEP;
const load = (): string => loadavg().map((l) => l.toFixed(2)).join(" ");

/** Mean CER over the pages of a text split into pages. */
function cer(pages: string[]): number {
  return truth.reduce((sum, lines, i) => sum + characterErrorRate(pages[i] ?? "", lines.join("\n")), 0) / truth.length;
}

/** ocrmypdf's sidecar separates pages with form feeds. */
const sidecarPages = (text: string): string[] => text.split("\f").map((p) => p.trim());

/** One warm child, as the bot runs one job: its Tesseracts are the parallel part. */
const pool = new ProcessorPool({ settings: { size: 1, recycleJobs: 1000, recycleRssBytes: 2 ** 31, idleMs: 3_600_000 } });

const ocr: OcrOptions = { languages: "rus+eng", dpi: 300, maxPages: 1000, pageBudgetMs: 600_000, totalMs: 3_600_000, concurrency: JOBS, searchableMaxBytes: 2 ** 31 };

/** One docket run through the isolated child; returns ms and the CER of the .txt. */
async function docket(action: "default" | "searchable"): Promise<{ ms: number; cer: number }> {
  const work = mkdtempSync(join(dir, "w-"));
  const t0 = performance.now();
  const r = await pool.process(scanPath, { workDir: work, declaredName: "scan.pdf", action, maxInputPixels: 100_000_000, maxOutputSide: 2560, maxPdfPages: 1000, pdfPageBudgetMs: 60_000, ocr }, { timeoutMs: 3_600_000, memoryMb: 4096 });
  const ms = performance.now() - t0;
  const ocrFacts = r.facts.ocr as { recognized: number } | undefined;
  if (ocrFacts?.recognized !== PAGES) throw new Error(`docket recognized ${ocrFacts?.recognized} of ${PAGES} pages`);
  if (action === "searchable" && !r.outputs.some((o) => o.fileName.endsWith("-searchable.pdf"))) throw new Error(`no searchable PDF: ${String(r.facts.searchableSkipped)}`);
  const text = readFileSync(r.outputs.find((o) => o.fileName.endsWith(".txt"))!.path, "utf8");
  rmSync(work, { recursive: true, force: true });
  return { ms, cer: cer(splitPages(text)) };
}

/** One ocrmypdf run; returns ms and the CER of its sidecar text. */
function ocrmypdf(pdfa: boolean): { ms: number; cer: number } {
  const out = join(dir, "ocrmypdf.pdf");
  const side = join(dir, "ocrmypdf.txt");
  const argv = ["ocrmypdf", "-q", "-l", "rus+eng", "--jobs", String(JOBS), ...(pdfa ? [] : ["--output-type", "pdf"]), "--sidecar", side, scanPath, out];
  const t0 = performance.now();
  const p = Bun.spawnSync(argv, { stdout: "ignore", stderr: "pipe" });
  const ms = performance.now() - t0;
  if (p.exitCode !== 0) throw new Error(`ocrmypdf failed (${p.exitCode}): ${p.stderr.toString().slice(-500)}`);
  return { ms, cer: cer(sidecarPages(readFileSync(side, "utf8"))) };
}

/** Ends a `runs=0` call after the scan is written. */
class Done extends Error {}

const ROWS = [
  { name: "docket, action default (.txt + preview)", run: () => docket("default") },
  { name: "docket, action searchable (.txt + searchable PDF)", run: () => docket("searchable") },
  { name: "ocrmypdf --output-type pdf --sidecar", run: async () => ocrmypdf(false) },
  { name: "ocrmypdf default (PDF/A) --sidecar", run: async () => ocrmypdf(true) },
] as const;

try {
  if (!Bun.which("ocrmypdf")) throw new Error("ocrmypdf not found: apt-get install -y ocrmypdf");
  console.error(`making a ${PAGES}-page ${KIND} scan…`);
  writeFileSync(scanPath, await makeScanPdf(KIND, truth));
  if (keep) writeFileSync(keep, readFileSync(scanPath));
  if (RUNS === 0) throw new Done(); // runs=0: only make the scan (with BENCH_OCR_KEEP)
  console.error(`load before: ${load()}`);
  const results: Array<Array<{ ms: number; cer: number }>> = ROWS.map(() => []);
  await ROWS[0].run(); // warm-up: page cache, Tesseract's language data, Bun's module cache
  for (let i = 0; i < RUNS; i++) {
    for (const [j, row] of ROWS.entries()) {
      const r = await row.run();
      results[j]!.push(r);
      console.error(`run ${i + 1}: ${row.name}: ${(r.ms / 1000).toFixed(1)} s, CER ${(r.cer * 100).toFixed(2)} %`);
    }
  }
  const loadAfter = load();
  const med = results.map((rs) => ({ ms: median(rs.map((r) => r.ms)), cer: median(rs.map((r) => r.cer)) }));
  const ppm = (ms: number): number => (PAGES / ms) * 60_000;
  const peer = med[2]!.ms;
  const peerA = med[3]!.ms;
  console.log(`\n${PAGES}-page ${KIND} scan, 300 dpi, rus+eng, ${JOBS} Tesseract processes, ${RUNS} runs (medians); load average before: see above, after: ${loadAfter}\n`);
  console.log("| run | wall s | pages/min | speed vs ocrmypdf --output-type pdf | speed vs ocrmypdf PDF/A | CER |");
  console.log("| --- | ---: | ---: | ---: | ---: | ---: |");
  for (const [j, row] of ROWS.entries()) {
    const m = med[j]!;
    console.log(`| ${row.name} | ${(m.ms / 1000).toFixed(1)} | ${ppm(m.ms).toFixed(1)} | ${(peer / m.ms).toFixed(2)}× | ${(peerA / m.ms).toFixed(2)}× | ${(m.cer * 100).toFixed(2)} % |`);
  }
} catch (err) {
  if (!(err instanceof Done)) throw err;
} finally {
  await pool.close();
  rmSync(dir, { recursive: true, force: true });
}
