/**
 * One docket OCR run in its own process, for bench/ocr/run.ts to measure with GNU time (wall and
 * CPU of the whole tree: this process, the pool child, its Tesseracts — all reaped before exit).
 *
 *   bun bench/ocr/one.ts <scan.pdf> <default|searchable> <out.txt>
 *
 * Writes the .txt result to `out.txt`; exits 1 when fewer pages than the scan has were recognized.
 */
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { ProcessorPool } from "../../processors/pool/index.ts";

const [scan, action, out] = process.argv.slice(2) as [string, "default" | "searchable", string];
const pool = new ProcessorPool({ settings: { size: 1, recycleJobs: 1000, recycleRssBytes: 2 ** 31, idleMs: 3_600_000 } });
const work = mkdtempSync(join(tmpdir(), "docket-bench-one-"));
try {
  const ocr = { languages: "rus+eng", dpi: 300, maxPages: 1000, pageBudgetMs: 600_000, totalMs: 3_600_000, concurrency: Math.max(1, cpus().length), searchableMaxBytes: 2 ** 31 };
  const r = await pool.process(scan, { workDir: work, declaredName: "scan.pdf", action, maxInputPixels: 100_000_000, maxOutputSide: 2560, maxPdfPages: 1000, pdfPageBudgetMs: 60_000, ocr }, { timeoutMs: 3_600_000, memoryMb: 4096 });
  const facts = r.facts.ocr as { recognized: number; needed: number };
  if (facts.recognized !== facts.needed || (action === "searchable" && !r.outputs.some((o) => o.fileName.endsWith("-searchable.pdf")))) process.exitCode = 1;
  copyFileSync(r.outputs.find((o) => o.fileName.endsWith(".txt"))!.path, out);
} finally {
  await pool.close();
  rmSync(work, { recursive: true, force: true });
}
