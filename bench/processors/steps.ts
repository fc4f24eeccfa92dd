/**
 * Section "steps" of bench/processors: one processing step at a time through a warm pool child
 * (the job from the call to its reply over IPC, as the pipeline runs it), next to a cold process
 * of the same step (`bun task.ts`, how every job ran before the pool) and the command-line peer
 * (its whole process). A fresh pool of one child per row, so the row's peak RSS is that child's
 * (VmHWM: its whole life, warm-up included). Docket and peer runs alternate, so they share the load.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ProcessorPool, peakResidentBytes, type JobType, type JobTypes } from "../../processors/pool/index.ts";
import { median } from "../queue/stats.ts";
import { fmt, measureProcess, settled, timeJob, warmUp } from "./measure.ts";

const TASK = fileURLToPath(new URL("./task.ts", import.meta.url));
const JOBS = fileURLToPath(new URL("./jobs.ts", import.meta.url));

/** Inputs of the steps section. */
export interface StepInputs {
  readonly pdfs: readonly (readonly [label: string, path: string])[];
  readonly photo: string;
}

/** The peers' binaries (null when missing: their rows say n/a). */
export interface Peers {
  readonly pdftotext: string | null;
  readonly pdftoppm: string | null;
  readonly convert: string | null;
}

/** One row: a docket step through the pool against its peer. */
interface Row {
  readonly task: string;
  readonly input: string;
  readonly poolMs: number;
  readonly coldMs: number | null;
  readonly childPeakMb: number;
  readonly peer: string;
  readonly peerMs: number | null;
  readonly peerRssMb: number | null;
}

/** The pool settings of a row: one child, never replaced during the row. */
const ONE = { size: 1, recycleJobs: 1_000_000, recycleRssBytes: 2 ** 40, idleMs: 3_600_000 };

/**
 * Measure one row: `runs` pool jobs, cold processes and peer processes after one warm-up of each,
 * interleaved.
 */
async function row<K extends JobType>(
  spec: { task: string; input: string; peer: string; runs: number; scratch: string },
  job: { type: K; payload: () => JobTypes[K]["payload"] },
  cold: readonly string[] | null,
  peer: readonly string[] | null,
): Promise<Row> {
  const pool = new ProcessorPool({ settings: ONE, modules: [JOBS] });
  try {
    await warmUp(pool);
    await timeJob(pool, job.type, job.payload());
    if (cold) measureProcess(cold, spec.scratch);
    if (peer) measureProcess(peer, spec.scratch);
    const poolMs: number[] = [];
    const coldRuns: number[] = [];
    const peerRuns: { ms: number; rssMb: number }[] = [];
    for (let i = 0; i < spec.runs; i++) {
      await settled(pool);
      poolMs.push(await timeJob(pool, job.type, job.payload()));
      if (cold) coldRuns.push(measureProcess(cold, spec.scratch).ms);
      if (peer) peerRuns.push(measureProcess(peer, spec.scratch));
    }
    await settled(pool);
    const peak = (await peakResidentBytes(pool.snapshot()[0]!.pid)) ?? 0;
    return {
      task: spec.task,
      input: spec.input,
      poolMs: median(poolMs),
      coldMs: cold ? median(coldRuns) : null,
      childPeakMb: peak / 2 ** 20,
      peer: spec.peer,
      peerMs: peer ? median(peerRuns.map((r) => r.ms)) : null,
      peerRssMb: peer ? median(peerRuns.map((r) => r.rssMb)) : null,
    };
  } finally {
    await pool.close();
  }
}

/** Run the section and return its markdown table. */
export async function stepsSection(inputs: StepInputs, peers: Peers, runs: number, scratch: string): Promise<string> {
  const bun = process.execPath;
  const rows: Row[] = [];
  const work = join(scratch, "imgwork");
  mkdirSync(work, { recursive: true });
  for (const [label, file] of inputs.pdfs) {
    rows.push(
      await row(
        { task: "PDF text", input: label, peer: "pdftotext", runs, scratch },
        { type: "bench-pdf-text", payload: () => ({ input: file, out: join(scratch, "d.txt") }) },
        [bun, TASK, "text", file, join(scratch, "c.txt")],
        peers.pdftotext ? [peers.pdftotext, file, join(scratch, "p.txt")] : null,
      ),
    );
  }
  for (const [label, file] of inputs.pdfs) {
    rows.push(
      await row(
        { task: "PDF page-1 render (2000 px JPEG)", input: label, peer: "pdftoppm", runs, scratch },
        { type: "bench-pdf-render", payload: () => ({ input: file, out: join(scratch, "d.jpg"), maxSide: 2000 }) },
        [bun, TASK, "render", file, join(scratch, "c.jpg"), "2000"],
        peers.pdftoppm ? [peers.pdftoppm, "-f", "1", "-l", "1", "-jpeg", "-scale-to", "2000", file, join(scratch, "p")] : null,
      ),
    );
  }
  const processOptions = (file: string, name: string) => ({
    inputPath: file,
    options: { workDir: work, declaredName: name, maxInputPixels: 100_000_000, maxOutputSide: 2560, maxPdfPages: 500, pdfPageBudgetMs: 2000, maxFrames: 1000 },
  });
  rows.push(
    await row(
      { task: "image re-encode (processing step)", input: "JPEG 4000×3000 → 2560", peer: "convert", runs, scratch },
      { type: "process", payload: () => processOptions(inputs.photo, "photo.jpg") },
      [bun, TASK, "image", inputs.photo, work, "2560"],
      peers.convert ? [peers.convert, inputs.photo, "-auto-orient", "-resize", "2560x2560>", "-strip", "-quality", "85", join(scratch, "c.jpg")] : null,
    ),
  );
  for (const [label, file] of inputs.pdfs) {
    // The whole PDF step (text + page-1 preview + facts) against both peers run one after the other.
    const both = peers.pdftotext && peers.pdftoppm ? ["sh", "-c", `"$0" "$2" "$3" && "$1" -f 1 -l 1 -jpeg -scale-to 2000 "$2" "$4"`, peers.pdftotext, peers.pdftoppm, file, join(scratch, "p.txt"), join(scratch, "p")] : null;
    rows.push(
      await row(
        { task: "PDF processing step (text + preview)", input: label, peer: "pdftotext + pdftoppm", runs, scratch },
        { type: "process", payload: () => processOptions(file, "doc.pdf") },
        null,
        both,
      ),
    );
  }
  const lines = [
    `| task | input | docket, warm pool child ms | docket, cold process ms | child peak RSS MB | peer | peer ms | peer peak RSS MB | docket / peer (time) | child / peer (RSS) |`,
    "| --- | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |",
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.task} | ${r.input} | ${fmt(r.poolMs, 1)} | ${r.coldMs === null ? "—" : fmt(r.coldMs)} | ${fmt(r.childPeakMb)} | ${r.peer} | ${r.peerMs === null ? "n/a" : fmt(r.peerMs, 1)} | ${r.peerRssMb === null ? "n/a" : fmt(r.peerRssMb)} | ${r.peerMs === null ? "n/a" : fmt(r.poolMs / r.peerMs, 2)} | ${r.peerRssMb === null ? "n/a" : fmt(r.childPeakMb / r.peerRssMb, 1)} |`,
    );
  }
  return lines.join("\n");
}
