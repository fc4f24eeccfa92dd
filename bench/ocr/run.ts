/**
 * bench/ocr/run.ts — OCR throughput on a 20-page scan, docket against ocrmypdf in the same run
 * (issue 13 §6; docs/benchmarks.md "OCR").
 *
 *   bun bench/ocr/run.ts [runs=3] [pages=20] [kind=g4]
 *
 * The scan: `pages` A4 pages at 300 dpi, 30 lines of 12 pt text each (4–6 words; English and Russian pages
 * alternating, words drawn from fixed lists with a seeded generator), made by ImageMagick and
 * libtiff (`g4`), or img2pdf (`phone`, `jpx`) — scripts/samples/scans.ts. Rows, interleaved run by
 * run, medians of `runs` after one warm-up run of the first row:
 *   docket, action default     bench/ocr/one.ts in its own process: the PDF processor on a warm pool child
 *                              (ProcessorPool.process), as a job runs; two lines: the job alone on the
 *                              warm child (wall, and CPU of the child + its Tesseracts), and the whole process:
 *                              text layer, page-1 preview, Tesseract on every page → .txt
 *   docket, action searchable  the same, plus the searchable PDF (Tesseract's text-only pages over
 *                              the originals with pdf-lib, re-opened by pdf.js)
 *   ocrmypdf, --output-type pdf  `ocrmypdf -l rus+eng --jobs N --output-type pdf --sidecar out.txt`
 *   ocrmypdf, default (PDF/A)  `ocrmypdf -l rus+eng --jobs N --sidecar out.txt` (Ghostscript PDF/A)
 * N = OCR_CONCURRENCY = cores for both. Every run is measured by GNU time: wall and CPU (user +
 * system of the whole process tree). Pages per minute, the speed ratio (higher is faster), the CPU
 * ratio (lower is cheaper), and each text's character error rate against the ground truth. The load
 * average is printed before and after: the machine is shared.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
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


/** A run's wall time and CPU time (user + system of the whole process tree, GNU time), ms, and the CER of its text. */
interface Run {
  readonly ms: number;
  readonly cpuMs: number;
  readonly cer: number;
  /** docket only: the job alone on the already warm child, as the bot runs it (bench/ocr/one.ts). */
  readonly job?: { readonly ms: number; readonly cpuMs: number };
}

/** Run `argv` under GNU time; returns wall and CPU ms and its stdout. */
function timed(argv: readonly string[]): { ms: number; cpuMs: number; stdout: string } {
  const report = join(dir, "time.txt");
  const t0 = performance.now();
  const p = Bun.spawnSync(["/usr/bin/time", "-f", "%U %S", "-o", report, ...argv], { stdout: "pipe", stderr: "pipe" });
  const ms = performance.now() - t0;
  if (p.exitCode !== 0) throw new Error(`${argv.slice(0, 3).join(" ")} failed (${p.exitCode}): ${p.stderr.toString().slice(-500)}`);
  const [user, sys] = readFileSync(report, "utf8").trim().split("\n").pop()!.split(" ").map(Number);
  return { ms, cpuMs: (user! + sys!) * 1000, stdout: p.stdout.toString() };
}

/** One docket run in its own process (bench/ocr/one.ts: a warm pool child, as a job runs). */
function docket(action: "default" | "searchable"): Run {
  const out = join(dir, "docket.txt");
  const { stdout, ...t } = timed([process.execPath, join(import.meta.dirname, "one.ts"), scanPath, action, out]);
  const job = JSON.parse(stdout.trim().split("\n").pop()!) as { jobMs: number; jobCpuMs: number };
  return { ...t, cer: cer(splitPages(readFileSync(out, "utf8"))), job: { ms: job.jobMs, cpuMs: job.jobCpuMs } };
}

/** One ocrmypdf run; its sidecar text. */
function ocrmypdf(pdfa: boolean): Run {
  const side = join(dir, "ocrmypdf.txt");
  const { stdout: _, ...t } = timed(["ocrmypdf", "-q", "-l", "rus+eng", "--jobs", String(JOBS), ...(pdfa ? [] : ["--output-type", "pdf"]), "--sidecar", side, scanPath, join(dir, "ocrmypdf.pdf")]);
  return { ...t, cer: cer(sidecarPages(readFileSync(side, "utf8"))) };
}

/** Ends a `runs=0` call after the scan is written. */
class Done extends Error {}

const ROWS = [
  { name: "docket, action default (.txt + preview)", run: () => docket("default") },
  { name: "docket, action searchable (.txt + searchable PDF)", run: () => docket("searchable") },
  { name: "ocrmypdf --output-type pdf --sidecar", run: () => ocrmypdf(false) },
  { name: "ocrmypdf default (PDF/A) --sidecar", run: () => ocrmypdf(true) },
] as const;

try {
  if (!Bun.which("ocrmypdf")) throw new Error("ocrmypdf not found: apt-get install -y ocrmypdf");
  console.error(`making a ${PAGES}-page ${KIND} scan…`);
  writeFileSync(scanPath, await makeScanPdf(KIND, truth));
  if (keep) writeFileSync(keep, readFileSync(scanPath));
  if (RUNS === 0) throw new Done(); // runs=0: only make the scan (with BENCH_OCR_KEEP)
  console.error(`load before: ${load()}`);
  const results: Run[][] = ROWS.map(() => []);
  ROWS[0].run(); // warm-up: page cache, Tesseract's language data, Bun's module cache
  for (let i = 0; i < RUNS; i++) {
    for (const [j, row] of ROWS.entries()) {
      const r = row.run();
      results[j]!.push(r);
      const job = r.job ? ` (the job on the warm child: ${(r.job.ms / 1000).toFixed(1)} s wall, ${(r.job.cpuMs / 1000).toFixed(1)} s CPU)` : "";
      console.error(`run ${i + 1}: ${row.name}: ${(r.ms / 1000).toFixed(1)} s wall, ${(r.cpuMs / 1000).toFixed(1)} s CPU${job}, CER ${(r.cer * 100).toFixed(2)} %`);
    }
  }
  const loadAfter = load();
  const med = results.map((rs) => ({
    ms: median(rs.map((r) => r.ms)),
    cpuMs: median(rs.map((r) => r.cpuMs)),
    cer: median(rs.map((r) => r.cer)),
    ...(rs[0]?.job ? { job: { ms: median(rs.map((r) => r.job!.ms)), cpuMs: median(rs.map((r) => r.job!.cpuMs)) } } : {}),
  }));
  const ppm = (ms: number): number => (PAGES / ms) * 60_000;
  const peer = med[2]!;
  const peerA = med[3]!;
  console.log(`\n${PAGES}-page ${KIND} scan, 300 dpi, rus+eng, ${JOBS} Tesseract processes, ${RUNS} runs (medians); load average before: see above, after: ${loadAfter}\n`);
  console.log("| run | wall s | pages/min | speed vs ocrmypdf pdf | speed vs ocrmypdf PDF/A | CPU s | CPU vs ocrmypdf pdf | CER |");
  console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  const line = (name: string, ms: number, cpuMs: number, cerRate: number): string =>
    `| ${name} | ${(ms / 1000).toFixed(1)} | ${ppm(ms).toFixed(1)} | ${(peer.ms / ms).toFixed(2)}× | ${(peerA.ms / ms).toFixed(2)}× | ${(cpuMs / 1000).toFixed(1)} | ${(cpuMs / peer.cpuMs).toFixed(2)} | ${(cerRate * 100).toFixed(2)} % |`;
  for (const [j, row] of ROWS.entries()) {
    const m = med[j]!;
    if (m.job) console.log(line(`${row.name}: the job on a warm child (as the bot runs it)`, m.job.ms, m.job.cpuMs, m.cer));
    console.log(line(m.job ? `${row.name}: whole process (Bun start, child warm-up, job)` : row.name, m.ms, m.cpuMs, m.cer));
  }
} catch (err) {
  if (!(err instanceof Done)) throw err;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
