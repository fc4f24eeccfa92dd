/**
 * Section "batch" of bench/processors: 100 distinct small PDFs (1–3 text pages each, made here)
 * through the pool's `process` job, as the engine feeds it: one feeder loop per child, each taking
 * the next file as soon as its job ended. Pool sizes 1 … cores + 1. CPU use is measured twice:
 * the children's own CPU time (user + system, /proc/<pid>/stat) over wall × cores, and the whole
 * machine's busy share (/proc/stat, includes every other process on a shared machine).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { ProcessorPool } from "../../processors/pool/index.ts";
import { makePdf } from "../../scripts/samples/index.ts";
import { BENCH_LIMITS, cpuMs, fmt, load, machineJiffies, settled, warmUp } from "./measure.ts";

/** Files in the batch. */
const FILES = 100;

/** One pool size's result. */
interface BatchRow {
  readonly size: number;
  readonly wallMs: number;
  readonly perSecond: number;
  readonly childrenCpuPct: number;
  readonly treeCpuPct: number;
  readonly machinePct: number;
  readonly rssAfterMb: number;
  readonly load: string;
}

/** Write the batch's PDFs into `dir`; returns their paths. */
function makeBatch(dir: string): string[] {
  return Array.from({ length: FILES }, (_, i) => {
    const pages = Array.from({ length: 1 + (i % 3) }, (_, p) => [`Batch invoice ${i + 1}, page ${p + 1}`, `Customer ${1000 + i}`, `Total ${(i * 13.7).toFixed(2)} EUR`]);
    const path = join(dir, `b${i}.pdf`);
    writeFileSync(path, makePdf({ pages }));
    return path;
  });
}

/** Run the batch on a pool of `size`. */
async function runBatch(size: number, files: readonly string[], scratch: string): Promise<BatchRow> {
  const pool = new ProcessorPool({ settings: { size, recycleJobs: 1_000_000, recycleRssBytes: 2 ** 40, idleMs: 3_600_000 } });
  try {
    await warmUp(pool);
    const pids = pool.snapshot().map((c) => c.pid);
    const cpu0 = pids.reduce((a, p) => a + cpuMs(p), 0);
    const own0 = cpuMs(process.pid);
    const m0 = machineJiffies();
    const queue = [...files];
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: size }, async () => {
        for (let f = queue.shift(); f; f = queue.shift()) {
          const workDir = mkdtempSync(join(scratch, "batch-"));
          await pool.process(f, { workDir, declaredName: "invoice.pdf", maxInputPixels: 100_000_000, maxOutputSide: 2560, maxPdfPages: 500, pdfPageBudgetMs: 2000 }, BENCH_LIMITS);
        }
      }),
    );
    const wallMs = performance.now() - t0;
    const m1 = machineJiffies();
    const cpu1 = pool.snapshot().reduce((a, c) => a + cpuMs(c.pid), 0);
    const own1 = cpuMs(process.pid);
    await settled(pool);
    const cores = cpus().length;
    return {
      size,
      wallMs,
      perSecond: (files.length * 1000) / wallMs,
      childrenCpuPct: (100 * (cpu1 - cpu0)) / (wallMs * cores),
      treeCpuPct: (100 * (cpu1 - cpu0 + own1 - own0)) / (wallMs * cores),
      machinePct: (100 * (m1.busy - m0.busy)) / (m1.total - m0.total),
      rssAfterMb: Math.max(...pool.snapshot().map((c) => c.rssBytes)) / 2 ** 20,
      load: load(),
    };
  } finally {
    await pool.close();
  }
}

/** Run the section; returns the markdown. */
export async function batchSection(scratch: string): Promise<string> {
  const dir = join(scratch, "batch-in");
  mkdirSync(dir, { recursive: true });
  const files = makeBatch(dir);
  const cores = cpus().length;
  const rows: BatchRow[] = [];
  for (let size = 1; size <= cores + 1; size++) rows.push(await runBatch(size, files, scratch));
  const base = rows[0]!.perSecond;
  const out = [
    `${FILES} distinct PDFs of 1–3 text pages, \`process\` job (text + page-1 preview), one feeder per child; ${cores} cores.`,
    "",
    "| pool size | wall s | files/s | × size 1 | children CPU / (wall × cores) | children + feeding process | machine busy (all processes) | largest child RSS after, MB | load average after |",
    "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
  ];
  for (const r of rows) {
    out.push(`| ${r.size} | ${fmt(r.wallMs / 1000, 2)} | ${fmt(r.perSecond, 1)} | ${fmt(r.perSecond / base, 2)} | ${fmt(r.childrenCpuPct)} % | ${fmt(r.treeCpuPct)} % | ${fmt(r.machinePct)} % | ${fmt(r.rssAfterMb)} | ${r.load} |`);
  }
  return out.join("\n");
}
