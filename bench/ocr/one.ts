/**
 * One docket OCR run in its own process, for bench/ocr/run.ts to measure with GNU time (wall and
 * CPU of the whole tree: this process, the pool child, its Tesseracts — all reaped before exit).
 * It also measures the job as the bot runs it: the child is warmed first (as at bot start-up),
 * then the job's wall clock (call → reply) and its CPU — the child's own and its reaped
 * Tesseracts' (utime + stime + cutime + cstime of /proc/<child>/stat, before and after) — are
 * printed as one JSON line on stdout: `{"jobMs":…,"jobCpuMs":…}`.
 *
 *   bun bench/ocr/one.ts <scan.pdf> <default|searchable> <out.txt>
 *
 * Writes the .txt result to `out.txt`; exits 1 when fewer pages than the scan has were recognized.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { ProcessorPool } from "../../processors/pool/index.ts";

const [scan, action, out] = process.argv.slice(2) as [string, "default" | "searchable", string];
const pool = new ProcessorPool({ settings: { size: 1, recycleJobs: 1000, recycleRssBytes: 2 ** 31, idleMs: 3_600_000 } });
const work = mkdtempSync(join(tmpdir(), "docket-bench-one-"));

/** CPU time of a process and of its children it has reaped, ms (USER_HZ 100). */
function treeCpuMs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 1000) / 100;
}

try {
  pool.warm();
  while (pool.snapshot().filter((c) => c.state === "idle").length < 1) await Bun.sleep(20);
  const child = pool.snapshot()[0]!.pid;
  const cpu0 = treeCpuMs(child);
  const t0 = performance.now();
  const ocr = { languages: "rus+eng", dpi: 300, maxPages: 1000, pageBudgetMs: 600_000, totalMs: 3_600_000, concurrency: Math.max(1, cpus().length), searchableMaxBytes: 2 ** 31 };
  const r = await pool.process(scan, { workDir: work, declaredName: "scan.pdf", action, maxInputPixels: 100_000_000, maxOutputSide: 2560, maxPdfPages: 1000, pdfPageBudgetMs: 60_000, ocr }, { timeoutMs: 3_600_000, memoryMb: 4096 });
  const jobMs = performance.now() - t0;
  const jobCpuMs = treeCpuMs(child) - cpu0; // every Tesseract was reaped before the reply
  console.log(JSON.stringify({ jobMs, jobCpuMs }));
  const facts = r.facts.ocr as { recognized: number; needed: number };
  if (facts.recognized !== facts.needed || (action === "searchable" && !r.outputs.some((o) => o.fileName.endsWith("-searchable.pdf")))) process.exitCode = 1;
  copyFileSync(r.outputs.find((o) => o.fileName.endsWith(".txt"))!.path, out);
} finally {
  await pool.close();
  rmSync(work, { recursive: true, force: true });
}
