/**
 * Section "memory" of bench/processors: the resident set of one warm child over its life, for
 * the pool's settings in docs/sizing.md: right after warm-up (idle), and after every 50 jobs of
 * the shared fixture set (or, without it, the bench's own inputs) run again and again, as
 * reported by the child after each job (the figure the recycle threshold is compared with) and
 * its peak (VmHWM); and how long the child took to start. The child is never replaced during the
 * run (recycle settings off).
 */
import { mkdtempSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { ProcessorPool, peakResidentBytes, residentBytes } from "../../processors/pool/index.ts";
import { BENCH_LIMITS, fmt, settled, warmUp } from "./measure.ts";

/** Run `jobs` jobs over `files` on one child; returns the markdown. */
export async function memorySection(files: readonly string[], jobs: number, scratch: string): Promise<string> {
  let warmMs = 0;
  const spawned = performance.now();
  const pool = new ProcessorPool({
    settings: { size: 1, recycleJobs: 1_000_000, recycleRssBytes: 2 ** 40, idleMs: 3_600_000 },
    onEvent: (e) => {
      if (e.type === "started") warmMs = e.ms;
    },
  });
  const out = ["| after | child RSS, MB (reported after the job) | child peak RSS so far (VmHWM), MB |", "| --- | ---: | ---: |"];
  try {
    await warmUp(pool);
    const readyMs = performance.now() - spawned;
    const pid = pool.snapshot()[0]!.pid;
    await Bun.sleep(500);
    out.push(`| warm-up, idle | ${fmt(((await residentBytes(pid)) ?? 0) / 2 ** 20)} | ${fmt(((await peakResidentBytes(pid)) ?? 0) / 2 ** 20)} |`);
    for (let i = 1; i <= jobs; i++) {
      const file = files[(i - 1) % files.length]!;
      const workDir = mkdtempSync(join(scratch, "mem-"));
      await pool
        .process(file, { workDir, declaredName: file.split("/").pop()!, maxInputPixels: 100_000_000, maxOutputSide: 2560, maxPdfPages: 500, pdfPageBudgetMs: 2000 }, BENCH_LIMITS)
        .catch(() => undefined); // refusals are part of the mix
      if (i % 50 === 0 || i === jobs) {
        await settled(pool);
        out.push(`| ${i} jobs | ${fmt(pool.snapshot()[0]!.rssBytes / 2 ** 20)} | ${fmt(((await peakResidentBytes(pid)) ?? 0) / 2 ** 20)} |`);
      }
    }
    out.push("", `Start of the child: ${fmt(readyMs)} ms from spawn to \`ready\`, of which ${fmt(warmMs)} ms warm-up inside it (pdf.js, its thread, the self-check's page and scan images, sharp).`);
  } finally {
    await pool.close();
  }
  return out.join("\n");
}

/** The files of a folder that are not its manifest or notes. */
export function inputsOf(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => !/\.(md|tsv|txt|sh)$/.test(f))
    .sort()
    .map((f) => join(dir, f));
}
