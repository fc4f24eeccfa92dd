/**
 * bench/processors/run.ts — docket's processing, measured side by side in one run (issue 12):
 *
 *   bun bench/processors/run.ts [runs=5] [--only steps,phases,batch,memory,pipeline]
 *
 * Sections (each prints a markdown table; the load average is printed with each):
 *   steps     one step at a time through a warm pool child vs a cold process vs the CLI peer
 *             (pdftotext, pdftoppm, ImageMagick `convert`); child peak RSS (steps.ts)
 *   phases    where the image step's time goes, phase by phase (image-phases.ts)
 *   batch     100 small PDFs through pools of 1 … cores + 1 children: throughput, CPU use (batch.ts)
 *   memory    one warm child's resident set from warm-up through 500 jobs (memory.ts)
 *   pipeline  the real bot on the shared fixture set: the `processed` line's ms (pipeline.ts;
 *             needs ../shared/fixtures, else skipped with a note)
 * Inputs are made here (makePdf with uncompressed content streams: 1 page and 200 pages of 31
 * lines; a 12 MP and a 48 MP noisy JPEG); the shared fixture set's 200-page FlateDecode ledger is
 * added when ../shared/fixtures exists. A missing tool is reported and its rows say n/a.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import sharp from "sharp";
import { makePdf } from "../../scripts/samples/index.ts";
import { batchSection } from "./batch.ts";
import { imagePhasesSection } from "./image-phases.ts";
import { inputsOf, memorySection } from "./memory.ts";
import { TIME, load } from "./measure.ts";
import { pipelineSection } from "./pipeline.ts";
import { stepsSection } from "./steps.ts";

const args = process.argv.slice(2);
const RUNS = Number(args.find((a) => /^\d+$/.test(a)) ?? 5);
const onlyArg = args.find((a) => a.startsWith("--only"))?.split("=")[1] ?? (args.includes("--only") ? args[args.indexOf("--only") + 1] : undefined);
const only = new Set((onlyArg ?? "steps,phases,batch,memory,pipeline").split(","));
const repoRoot = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const fixtures = resolve(repoRoot, "../shared/fixtures");

/** Path of a tool, or null with a printed note. */
function tool(name: string, candidates: string[], pkg: string): string | null {
  for (const c of candidates) if (existsSync(c)) return c;
  const found = Bun.which(name);
  if (found) return found;
  console.log(`! ${name} not found — install it: apt-get install -y ${pkg}; its rows say n/a`);
  return null;
}

/** A noisy JPEG of `w`×`h` (noise: every block carries data, like a photo's detail). */
async function noisyJpeg(path: string, w: number, h: number): Promise<void> {
  await Bun.write(path, await sharp({ create: { width: w, height: h, channels: 3, background: "#6080a0", noise: { type: "gaussian", mean: 120, sigma: 30 } } }).jpeg({ quality: 90 }).toBuffer());
}

const dir = mkdtempSync(join(tmpdir(), "docket-bench-proc-"));
try {
  if (!existsSync(TIME)) {
    console.log(`! ${TIME} not found — install it: apt-get install -y time`);
    process.exit(1);
  }
  const peers = {
    pdftotext: tool("pdftotext", ["/usr/bin/pdftotext"], "poppler-utils"),
    pdftoppm: tool("pdftoppm", ["/usr/bin/pdftoppm"], "poppler-utils"),
    // /usr/bin/convert first: a PATH wrapper may stand in front of the real ImageMagick.
    convert: tool("convert", ["/usr/bin/convert"], "imagemagick"),
  };
  const line = (i: number): string => `Ledger line ${i}: account ${1000 + i}, amount ${(i * 37.5).toFixed(2)} EUR, reference REF-${i * 7}`;
  const page = (n: number, of: number): string[] => [`Ledger page ${n} of ${of}`, ...Array.from({ length: 30 }, (_, i) => line(n * 100 + i))];
  const pdfs: [string, string][] = [
    ["1 page (raw)", join(dir, "small.pdf")],
    ["200 pages (raw)", join(dir, "p200.pdf")],
  ];
  await Bun.write(pdfs[0]![1], makePdf({ pages: [page(1, 1)], compress: false }));
  await Bun.write(pdfs[1]![1], makePdf({ pages: Array.from({ length: 200 }, (_, i) => page(i + 1, 200)), compress: false }));
  if (existsSync(join(fixtures, "pdf_text_200pages.pdf"))) pdfs.push(["200 pages (fixture ledger)", join(fixtures, "pdf_text_200pages.pdf")]);
  const photo = join(dir, "photo.jpg");
  const big = join(dir, "big.jpg");
  await noisyJpeg(photo, 4000, 3000);
  await noisyJpeg(big, 8000, 6000);

  const versions = `Bun ${Bun.version}, sharp ${sharp.versions.sharp} (libvips ${sharp.versions.vips}), ${cpus().length} CPUs (${cpus()[0]?.model ?? "?"})`;
  console.log(`\n# bench/processors — median of ${RUNS} runs per cell after one warm-up; ${versions}; load average at start ${load()}\n`);
  if (only.has("steps")) {
    console.log(`## Steps: warm pool child vs cold process vs CLI peer (load before: ${load()})\n`);
    console.log(await stepsSection({ pdfs, photo }, peers, RUNS, dir));
    console.log(`\nload after: ${load()}\n`);
  }
  if (only.has("phases")) {
    console.log(`## Image phases (load before: ${load()})\n`);
    console.log(await imagePhasesSection(photo, big, RUNS, dir));
    console.log(`\nload after: ${load()}\n`);
  }
  if (only.has("batch")) {
    console.log(`## Batch (load before: ${load()})\n`);
    console.log(await batchSection(dir));
    console.log("");
  }
  if (only.has("memory")) {
    console.log(`## Memory of one warm child (load before: ${load()})\n`);
    const mix = existsSync(join(fixtures, "MANIFEST.tsv")) ? inputsOf(fixtures) : [...pdfs.map(([, f]) => f), photo];
    console.log(`${mix.length} files (${existsSync(join(fixtures, "MANIFEST.tsv")) ? "the shared fixture set" : "the bench's own inputs"}) in turn, 500 jobs.\n`);
    console.log(await memorySection(mix, 500, dir));
    console.log(`\nload after: ${load()}\n`);
  }
  if (only.has("pipeline")) {
    console.log(`## Pipeline: the processing step as the bot runs it (load before: ${load()})\n`);
    if (existsSync(join(fixtures, "MANIFEST.tsv"))) console.log(await pipelineSection(fixtures, Math.max(2, Math.min(RUNS, 4)), dir));
    else console.log(`skipped: ${fixtures} is absent (the shared fixture set is not shipped)`);
    console.log(`\nload after: ${load()}\n`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
