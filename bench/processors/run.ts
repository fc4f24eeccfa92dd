/**
 * bench/processors/run.ts — docket's processors next to the usual command-line peers, one run,
 * printed table with medians and ratios.
 *
 *   bun bench/processors/run.ts [runs=5]
 *
 * Rows (each a separate process measured by GNU time: wall clock and peak RSS; median of N runs):
 *   PDF text   docket (pdf.js getTextContent, Bun)        vs poppler `pdftotext`
 *   PDF render docket (pdf.js + @napi-rs/canvas, page 1)  vs poppler `pdftoppm -jpeg -scale-to`
 *   image      docket (sharp: autoOrient, resize, JPEG)   vs ImageMagick `convert -auto-orient -resize -strip`
 * Inputs are written here (makePdf, uncompressed content streams: 1 page and 200 pages; a 12 MP noisy JPEG); when
 * ../shared/fixtures exists, its 200-page FlateDecode ledger is added. A missing tool is reported
 * and its rows are skipped. docket rows include Bun start-up and module import (cold process), so
 * an "in-process" column gives the warm time of the same step inside one long-lived process.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import sharp from "sharp";
import { makePdf } from "../../scripts/samples/index.ts";
import { median } from "../queue/stats.ts";
import { runTask } from "./task.ts";

const RUNS = Number(process.argv[2] ?? 5);
const here = fileURLToPath(new URL(".", import.meta.url));
const repoRoot = resolve(here, "../..");
const TASK = join(here, "task.ts");
const TIME = "/usr/bin/time";
const MAX_SIDE = 2000;

/** Path of a tool, or null with a printed note. */
function tool(name: string, candidates: string[], pkg: string): string | null {
  for (const c of candidates) if (existsSync(c)) return c;
  const found = Bun.which(name);
  if (found) return found;
  console.log(`! ${name} not found — install it: apt-get install -y ${pkg}; its rows are skipped`);
  return null;
}

/** One measured process run: wall ms and peak RSS in MB (from GNU time -v). */
function measure(cmd: string[]): { ms: number; rssMb: number } {
  // The report goes to a file (-o): reading it from a stderr pipe came back cut short under Bun.spawnSync.
  const report = join(dir, "time.txt");
  const t0 = performance.now();
  const p = Bun.spawnSync([TIME, "-v", "-o", report, ...cmd], { stdout: "ignore", stderr: "pipe" });
  const ms = performance.now() - t0; // GNU time's own wall clock has 10 ms resolution
  const err = readFileSync(report, "utf8");
  if (p.exitCode !== 0) throw new Error(`${cmd.join(" ")} failed (${p.exitCode}): ${p.stderr.toString().slice(-500)} ${err.slice(-300)}`);
  const rssKb = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(err)![1]);
  return { ms, rssMb: rssKb / 1024 };
}

/** Median wall and RSS over RUNS runs (one warm-up run first, not counted). */
function bench(cmd: string[]): { ms: number; rssMb: number } {
  measure(cmd);
  const runs = Array.from({ length: RUNS }, () => measure(cmd));
  return { ms: median(runs.map((r) => r.ms)), rssMb: median(runs.map((r) => r.rssMb)) };
}

/** Median warm time of the same step inside this process, ms. */
async function warm(op: string, input: string, out: string): Promise<number> {
  await runTask(op, input, out, MAX_SIDE);
  const xs: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await runTask(op, input, out, MAX_SIDE);
    xs.push(performance.now() - t0);
  }
  return median(xs);
}

const dir = mkdtempSync(join(tmpdir(), "docket-bench-proc-"));
try {
  const pdftotext = tool("pdftotext", ["/usr/bin/pdftotext"], "poppler-utils");
  const pdftoppm = tool("pdftoppm", ["/usr/bin/pdftoppm"], "poppler-utils");
  // /usr/bin/convert first: a PATH wrapper may stand in front of the real ImageMagick.
  const convert = tool("convert", ["/usr/bin/convert"], "imagemagick");
  if (!existsSync(TIME)) {
    console.log(`! ${TIME} not found — install it: apt-get install -y time`);
    process.exit(1);
  }

  const line = (i: number): string => `Ledger line ${i}: account ${1000 + i}, amount ${(i * 37.5).toFixed(2)} EUR, reference REF-${i * 7}`;
  const page = (n: number, of: number): string[] => [`Ledger page ${n} of ${of}`, ...Array.from({ length: 30 }, (_, i) => line(n * 100 + i))];
  const pdfs: [string, string][] = [
    ["1 page (raw)", join(dir, "small.pdf")],
    ["200 pages (raw)", join(dir, "p200.pdf")],
  ];
  await Bun.write(pdfs[0]![1], makePdf({ pages: [page(1, 1)], compress: false }));
  await Bun.write(pdfs[1]![1], makePdf({ pages: Array.from({ length: 200 }, (_, i) => page(i + 1, 200)), compress: false }));
  const ledger = resolve(repoRoot, "../shared/fixtures/pdf_text_200pages.pdf");
  if (existsSync(ledger)) pdfs.push(["200 pages (fixture ledger)", ledger]);
  const photo = join(dir, "photo.jpg");
  await Bun.write(
    photo,
    await sharp({ create: { width: 4000, height: 3000, channels: 3, background: "#6080a0", noise: { type: "gaussian", mean: 120, sigma: 30 } } })
      .jpeg({ quality: 90 })
      .toBuffer(),
  );

  type Row = { task: string; input: string; docket: { ms: number; rssMb: number }; warmMs: number; peer: string; other: { ms: number; rssMb: number } | null };
  const rows: Row[] = [];
  for (const [label, file] of pdfs) {
    const docket = bench([process.execPath, TASK, "text", file, join(dir, "d.txt")]);
    const other = pdftotext ? bench([pdftotext, file, join(dir, "p.txt")]) : null;
    rows.push({ task: "PDF text", input: label, docket, warmMs: await warm("text", file, join(dir, "d.txt")), peer: "pdftotext", other });
  }
  for (const [label, file] of pdfs) {
    const docket = bench([process.execPath, TASK, "render", file, join(dir, "d.jpg"), String(MAX_SIDE)]);
    const other = pdftoppm ? bench([pdftoppm, "-f", "1", "-l", "1", "-jpeg", "-scale-to", String(MAX_SIDE), file, join(dir, "p")]) : null;
    rows.push({ task: "PDF page-1 render", input: label, docket, warmMs: await warm("render", file, join(dir, "d.jpg")), peer: "pdftoppm", other });
  }
  const work = join(dir, "imgwork");
  mkdirSync(work);
  {
    const docket = bench([process.execPath, TASK, "image", photo, work, "2560"]);
    const other = convert ? bench([convert, photo, "-auto-orient", "-resize", "2560x2560>", "-strip", "-quality", "85", join(dir, "c.jpg")]) : null;
    rows.push({ task: "image re-encode", input: "JPEG 4000×3000 → 2560", docket, warmMs: await warm("image", photo, work), peer: "convert", other });
  }

  const fmt = (n: number, d = 0): string => n.toFixed(d);
  console.log(`\nProcessors vs CLI peers — median of ${RUNS} runs per cell (cold process incl. start-up; wall from spawn to exit, peak RSS from GNU time -v), Bun ${Bun.version}, ${cpus().length} CPUs\n`);
  console.log("| task | input | docket ms | docket warm ms | docket peak RSS MB | peer | peer ms | peer peak RSS MB | time ratio docket/peer | RSS ratio |");
  console.log("| --- | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |");
  for (const r of rows) {
    const o = r.other;
    console.log(
      `| ${r.task} | ${r.input} | ${fmt(r.docket.ms)} | ${fmt(r.warmMs)} | ${fmt(r.docket.rssMb)} | ${r.peer} | ${o ? fmt(o.ms) : "n/a"} | ${o ? fmt(o.rssMb) : "n/a"} | ${o ? fmt(r.docket.ms / Math.max(o.ms, 1), 1) : "n/a"} | ${o ? fmt(r.docket.rssMb / o.rssMb, 1) : "n/a"} |`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
