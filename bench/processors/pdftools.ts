/**
 * bench/processors/pdftools.ts — docket's PDF tools (issue 15 item 7) against qpdf (merge, split, rotate)
 * and Ghostscript pdfwrite /ebook (compress), same files, same run:
 *
 *   bun bench/processors/pdftools.ts [runs=3] [action…]   (e.g. `… 21 rotate`: only that row)
 *
 * docket's tool runs as the bot runs it: a `process` job on a warm pool child (a fresh child per row;
 * its peak RSS over the row); also as a fresh process (bench/processors/pdftool-one.ts, start-up
 * included). The peer is its CLI in a fresh process under GNU time (wall clock, peak RSS). Each row is
 * `runs` rounds after one warm-up round, a round being one of each (warm job, peer, fresh process), so
 * the ratio's two sides see the same load; the row gives the medians, their ratio, and the median of the
 * rounds' own ratios. Output sizes in KB. For compress, image quality is compared by PSNR of page 1
 * rendered at 100 dpi (pdftoppm) against the input's render. Inputs are generated here: a 200-page
 * text PDF, two 100-page halves, and a 10-page PDF of 2400×3400 photo-like JPEGs (q95).
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import sharp from "sharp";
import { makePdf } from "../../scripts/samples/index.ts";
import { ProcessorPool, peakResidentBytes } from "../../processors/pool/index.ts";
import type { ProcessorOptions } from "../../processors/types.ts";
import { BENCH_LIMITS, fmt, load, measureProcess, settled, warmUp } from "./measure.ts";

const RUNS = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 3);
/** Rows to run (action names or their starts, e.g. `rotate`); none: all. */
const ONLY = process.argv.slice(2).filter((a) => !/^\d+$/.test(a));
const repoRoot = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const one = join(repoRoot, "bench/processors/pdftool-one.ts");
const dir = mkdtempSync(join(tmpdir(), "docket-bench-pdftools-"));

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** One run of `cmd` (which writes into a fresh `out` dir) under GNU time: ms, peak RSS MB, total output KB. */
function runProcess(cmd: (out: string) => string[]): { ms: number; rss: number; kb: number } {
  const out = join(dir, `out-${Math.random().toString(36).slice(2)}`);
  mkdirSync(out);
  try {
    const r = measureProcess(cmd(out), dir);
    const kb = readdirSync(out).filter((f) => f.endsWith(".pdf")).reduce((n, f) => n + statSync(join(out, f)).size, 0) / 1024;
    return { ms: r.ms, rss: r.rssMb, kb };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** One `process` job of `variant` on the warm `pool`: ms from the call to the reply, output KB. */
async function runJob(pool: ProcessorPool, variant: string, inputs: readonly string[]): Promise<{ ms: number; kb: number }> {
  const workDir = join(dir, `w-${Math.random().toString(36).slice(2)}`);
  mkdirSync(workDir);
  try {
    const limits = { maxInputPixels: 100_000_000, maxOutputSide: 2560, maxPdfPages: 5000, pdfPageBudgetMs: 60_000 };
    const options: ProcessorOptions =
      variant === "merge" ? { workDir, ...limits, parts: inputs.map((path, n) => ({ path, name: null, n: n + 1 })) } : { workDir, ...limits, action: variant, declaredName: "bench.pdf" };
    await settled(pool);
    const t0 = performance.now();
    const r = await pool.run("process", { inputPath: inputs[0]!, options }, BENCH_LIMITS);
    const ms = performance.now() - t0;
    return { ms, kb: r.outputs.reduce((n, o) => n + o.size, 0) / 1024 };
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

/** A row's medians: docket on the warm child, docket as a fresh process, the peer; and the median of the rounds' own warm / peer ratios. */
interface Row {
  readonly warm: { ms: number; rss: number; kb: number };
  readonly fresh: { ms: number };
  readonly peer: { ms: number; rss: number; kb: number };
  readonly roundRatio: number;
}

/**
 * `RUNS` rounds after one warm-up round, each round one `process` job of `variant` on one warm pool
 * child (fresh per row), then the peer's CLI, then docket as a fresh process — interleaved, so a burst
 * of load on the shared machine falls on both sides of the ratio alike. The child's peak RSS is over the row.
 */
async function measureRow(variant: string, inputs: readonly string[], cold: (out: string) => string[], peer: (out: string) => string[]): Promise<Row> {
  const pool = new ProcessorPool({ settings: { size: 1, recycleJobs: 1_000_000, recycleRssBytes: 2 ** 40, idleMs: 3_600_000 } });
  try {
    await warmUp(pool);
    const w: number[] = [];
    const f: number[] = [];
    const p: number[] = [];
    const prss: number[] = [];
    const ratios: number[] = [];
    let kb = 0;
    let pkb = 0;
    for (let i = 0; i <= RUNS; i++) {
      const job = await runJob(pool, variant, inputs);
      const other = runProcess(peer);
      const fresh = runProcess(cold);
      kb = job.kb;
      pkb = other.kb;
      if (i === 0) continue;
      w.push(job.ms);
      p.push(other.ms);
      prss.push(other.rss);
      f.push(fresh.ms);
      ratios.push(job.ms / other.ms);
    }
    await settled(pool);
    const peak = (await peakResidentBytes(pool.snapshot()[0]!.pid)) ?? 0;
    return { warm: { ms: median(w), rss: peak / 2 ** 20, kb }, fresh: { ms: median(f) }, peer: { ms: median(p), rss: median(prss), kb: pkb }, roundRatio: median(ratios) };
  } finally {
    await pool.close();
  }
}

/** PSNR (dB) of page 1 of `pdf` against page 1 of `ref`, both rendered by pdftoppm at 100 dpi in grey. */
async function psnr(pdf: string, ref: string): Promise<number> {
  const render = async (p: string, stem: string) => {
    Bun.spawnSync(["pdftoppm", "-r", "100", "-gray", "-png", "-f", "1", "-l", "1", "-singlefile", p, join(dir, stem)]);
    return sharp(join(dir, `${stem}.png`)).greyscale().raw().toBuffer({ resolveWithObject: true });
  };
  const a = await render(pdf, "a");
  const b = await render(ref, "b");
  if (a.info.width !== b.info.width || a.info.height !== b.info.height) return Number.NaN;
  let se = 0;
  for (let i = 0; i < a.data.length; i++) se += (a.data[i]! - b.data[i]!) ** 2;
  const mse = se / a.data.length;
  return mse === 0 ? Number.POSITIVE_INFINITY : 10 * Math.log10((255 * 255) / mse);
}

try {
  if (!Bun.which("qpdf") || !Bun.which("gs")) {
    console.log("! qpdf and gs are needed — apt-get install -y qpdf ghostscript");
    process.exit(1);
  }
  const line = (i: number) => `Ledger line ${i}: account ${1000 + i}, amount ${(i * 37.5).toFixed(2)} EUR, reference REF-${i * 7}`;
  const page = (n: number) => [`Ledger page ${n}`, ...Array.from({ length: 30 }, (_, i) => line(n * 100 + i))];
  const p200 = join(dir, "p200.pdf");
  const a100 = join(dir, "a100.pdf");
  const b100 = join(dir, "b100.pdf");
  await Bun.write(p200, makePdf({ pages: Array.from({ length: 200 }, (_, i) => page(i + 1)) }));
  await Bun.write(a100, makePdf({ pages: Array.from({ length: 100 }, (_, i) => page(i + 1)) }));
  await Bun.write(b100, makePdf({ pages: Array.from({ length: 100 }, (_, i) => page(i + 101)) }));
  const photos = join(dir, "photos.pdf");
  const images = [];
  for (let i = 0; i < 10; i++) {
    // A smooth gradient with noise: photo-like, so JPEG sizes are realistic.
    const base = sharp({ create: { width: 2400, height: 3400, channels: 3, background: { r: 40 + i * 20, g: 120, b: 200 - i * 10 }, noise: { type: "gaussian", mean: 128, sigma: 18 } } });
    const jpeg = new Uint8Array(await base.blur(1.2).jpeg({ quality: 95 }).toBuffer());
    images.push({ jpeg, width: 2400, height: 3400, colorSpace: "DeviceRGB" as const });
  }
  await Bun.write(photos, makePdf({ pages: images.map((_, i) => [`Photo page ${i + 1}`]), images }));

  console.log(`\n# bench/processors/pdftools — median of ${RUNS} interleaved rounds per row after one warm-up; Bun ${Bun.version}; load average at start ${load()}\n`);
  const rows: string[] = [
    "| action | input | docket ms (warm child) | docket ms (fresh process) | qpdf/gs ms | time ratio (warm / peer) | median of the rounds' ratios | docket child peak RSS MB | peer RSS MB | docket KB | peer KB |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  ];
  const docket = (variant: string, ...inputs: string[]) => ({ variant, inputs, cold: (out: string) => ["bun", one, variant, out, ...inputs] });
  const cases: Array<[string, string, ReturnType<typeof docket>, (out: string) => string[]]> = [
    ["merge", "2 × 100 pages", docket("merge", a100, b100), (out) => ["qpdf", "--empty", "--pages", a100, b100, "--", join(out, "m.pdf")]],
    ["split", "200 pages → 1-100, 101-200", docket("split:1-100,101-200", p200), (out) => ["sh", "-c", `qpdf ${p200} --pages . 1-100 -- ${join(out, "a.pdf")} && qpdf ${p200} --pages . 101-200 -- ${join(out, "b.pdf")}`]],
    ["rotate 90°", "200 pages", docket("rotate:90", p200), (out) => ["qpdf", p200, "--rotate=+90", join(out, "r.pdf")]],
    ["compress", "10 photo pages (2400×3400, q95)", docket("compress:ebook", photos), (out) => ["gs", "-q", "-dNOPAUSE", "-dBATCH", "-dSAFER", "-sDEVICE=pdfwrite", "-dPDFSETTINGS=/ebook", `-sOutputFile=${join(out, "c.pdf")}`, photos]],
  ];
  for (const [action, input, ours, peer] of cases.filter(([action]) => ONLY.length === 0 || ONLY.some((o) => action.startsWith(o)))) {
    const r = await measureRow(ours.variant, ours.inputs, ours.cold, peer);
    rows.push(
      `| ${action} | ${input} | ${fmt(r.warm.ms)} | ${fmt(r.fresh.ms)} | ${fmt(r.peer.ms)} | ${fmt(r.warm.ms / r.peer.ms, 2)}× | ${fmt(r.roundRatio, 2)}× | ${fmt(r.warm.rss)} | ${fmt(r.peer.rss)} | ${fmt(r.warm.kb)} | ${fmt(r.peer.kb)} |`,
    );
  }
  console.log(rows.join("\n"));
  if (ONLY.length > 0 && !ONLY.some((o) => "compress".startsWith(o))) {
    console.log(`\nload after: ${load()}\n`);
    process.exit(0);
  }
  // Compress quality: both outputs' page 1 against the input's.
  const cq = join(dir, "cq");
  mkdirSync(cq);
  Bun.spawnSync(["bun", one, "compress:ebook", cq, photos]);
  const ours = join(cq, "compressed.pdf");
  const gsOut = join(cq, "gs.pdf");
  Bun.spawnSync(["gs", "-q", "-dNOPAUSE", "-dBATCH", "-dSAFER", "-sDEVICE=pdfwrite", "-dPDFSETTINGS=/ebook", `-sOutputFile=${gsOut}`, photos]);
  const sizes = `docket ${fmt(statSync(ours).size / 1024)} KB vs gs /ebook ${fmt(statSync(gsOut).size / 1024)} KB (${fmt(statSync(ours).size / statSync(gsOut).size, 2)}×), input ${fmt(statSync(photos).size / 1024)} KB`;
  console.log(`\ncompress quality, page 1 at 100 dpi vs the input: docket PSNR ${fmt(await psnr(ours, photos), 1)} dB, gs /ebook ${fmt(await psnr(gsOut, photos), 1)} dB; ${sizes}`);
  console.log(`\nload after: ${load()}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
