/**
 * One Tesseract 5 run on one page image (Debian `tesseract-ocr`, language data `tesseract-ocr-rus`,
 * `tesseract-ocr-eng`; issue 13 §3). The image is always a raster docket rendered from the page
 * (processors/ocr/ocr-pdf.ts), never the user's file.
 *
 * The raster goes to Tesseract on its stdin (`stdin` as the image name), so a page image never
 * touches the disk: the byte budget (seed 000) counts what docket writes, and a 300-dpi page is
 * megabytes. The run is bound to its caller: Tesseract is started under `sh`, which kills it when a
 * lifeline pipe on fd 3 reaches end of file, or on SIGTERM. The caller holds the lifeline's write
 * end and stops the page (budget, total deadline, cancel) by closing it and sending SIGTERM; when the
 * processor child itself is killed (SIGKILL on `/cancel`, the wall clock or the memory cap), the
 * kernel closes the pipe and Tesseract dies with it instead of running on as an orphan. Tesseract gets a minimal environment: `PATH`, `OMP_THREAD_LIMIT=1` (one core per
 * page: pages run in parallel instead, ocr-queue.ts) and `TESSDATA_PREFIX` when the operator set it.
 */
import { closeSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { canReadProcCpu, treeCpuMs } from "../proc-cpu.ts";
import { runBudgetDecision, wallBackstopMs } from "./run-budget.ts";

/** What one run produces. */
export interface PageRecognition {
  /** The recognized text (UTF-8, Tesseract's line breaks and blank lines between blocks). */
  readonly text: string;
  /** Path of the one-page text-only PDF (invisible text, no image), when asked for. */
  readonly pdfPath?: string;
}

/** Options of one run. */
export interface TesseractRun {
  /** The page raster docket rendered, as netpbm/PNG/TIFF bytes sent on Tesseract's stdin (no file). */
  readonly imageBytes?: Uint8Array;
  /** Or the raster's path (the self-check's and tests' images); one of the two is required. */
  readonly imagePath?: string;
  /** Output path without extension: Tesseract writes `<outBase>.txt` (and `.pdf`). */
  readonly outBase: string;
  /** Tesseract language list, e.g. `rus+eng` (the first is the primary language). */
  readonly languages: string;
  /** Resolution of the raster, dots per inch (PGM carries none; Tesseract needs it for the PDF page size). */
  readonly dpi: number;
  /** Also write a text-only PDF page (Tesseract's PDF renderer with `textonly_pdf=1`, as ocrmypdf does). */
  readonly pdf?: boolean;
  /**
   * CPU time allowed (Tesseract's and its `sh` guard's, processors/ocr/run-budget.ts), ms; past it the
   * run is stopped and {@link TesseractStopped} `budget` thrown. Wall time where `/proc` cannot be read.
   */
  readonly budgetMs: number;
  /**
   * Wall time after which a run is stopped as hung whatever its CPU time ({@link TesseractStopped}
   * `hung`), ms; default {@link wallBackstopMs} of `budgetMs` (10 × it, at least 60 s).
   */
  readonly wallBackstopMs?: number;
  /** Stops the run early ({@link TesseractStopped} `stopped`): the total deadline or a cancel. */
  readonly signal?: AbortSignal;
}

/**
 * Thrown when a run did not finish: `budget` = over its CPU budget, `hung` = past the wall-clock
 * backstop (the tool made no end: stopped, blocked or deadlocked), `stopped` = its signal aborted.
 */
export class TesseractStopped extends Error {
  constructor(
    readonly why: "budget" | "hung" | "stopped",
    detail?: string,
  ) {
    super(detail ?? (why === "budget" ? "tesseract: page over its budget" : why === "hung" ? "tesseract: stopped as hung" : "tesseract: stopped"));
    this.name = "TesseractStopped";
  }
}

/**
 * `sh` program: run Tesseract in the background with the image on its stdin, kill it when the
 * lifeline on fd 3 closes or on SIGTERM, exit with its status. stdin is kept as fd 4 first and given
 * to Tesseract explicitly: a background job's own stdin is /dev/null in a shell without job control
 * (POSIX "Asynchronous Lists").
 */
const GUARD =
  'exec 4<&0; tesseract "$@" <&4 3<&- 4<&- & t=$!; exec 4<&-; trap \'kill -9 "$t" 2>/dev/null; exit 143\' TERM; (read -r _ <&3; kill -9 "$t" 2>/dev/null) & w=$!; wait "$t"; s=$?; kill "$w" 2>/dev/null; exit "$s"';

/** The environment Tesseract runs with (see the module comment). */
export function tesseractEnv(): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", OMP_THREAD_LIMIT: "1", LC_ALL: "C.UTF-8" };
  if (process.env.TESSDATA_PREFIX) env.TESSDATA_PREFIX = process.env.TESSDATA_PREFIX;
  return env;
}

/**
 * Recognize one page.
 * @returns the text (and the text-only PDF path when `pdf` was asked for)
 * @throws TesseractStopped over the budget or when `signal` aborted; Error with Tesseract's stderr
 *   tail when it fails (a missing language is caught at start-up by ocr/self-check.ts)
 */
export async function recognizePage(run: TesseractRun): Promise<PageRecognition> {
  if (run.signal?.aborted) throw new TesseractStopped("stopped");
  const configs = run.pdf ? ["-c", "textonly_pdf=1", "txt", "pdf"] : ["txt"];
  if (!run.imageBytes && !run.imagePath) throw new Error("recognizePage: no image");
  const argv = ["sh", "-c", GUARD, "tesseract", run.imageBytes ? "stdin" : run.imagePath!, run.outBase, "-l", run.languages, "--dpi", String(run.dpi), ...configs];
  const child = Bun.spawn(argv, { stdio: [run.imageBytes ? new Blob([run.imageBytes as Uint8Array<ArrayBuffer>]) : "ignore", "ignore", "pipe", "pipe"], env: tesseractEnv() });
  const lifeline = child.stdio[3] as number;
  let cut = false;
  const cutLifeline = (): void => {
    if (cut) return;
    cut = true;
    try {
      closeSync(lifeline);
    } catch {
      // already closed
    }
  };
  let stopped: TesseractStopped | null = null;
  const stop = (why: "budget" | "hung" | "stopped", detail?: string): void => {
    if (stopped) return;
    stopped = new TesseractStopped(why, detail);
    cutLifeline(); // the guard kills Tesseract
    child.kill("SIGTERM");
  };
  // The budget (run-budget.ts): the tree's CPU time read from /proc, looked at as the decision says.
  const started = performance.now();
  const backstopMs = run.wallBackstopMs ?? wallBackstopMs(run.budgetMs);
  let cpuMs: number | null = canReadProcCpu() ? 0 : null; // null: no /proc, wall time stands in
  let timer: ReturnType<typeof setTimeout> | undefined;
  const look = (): void => {
    if (child.exitCode !== null || stopped) return; // finished: whatever it cost, it is done
    if (cpuMs !== null) cpuMs = treeCpuMs(child.pid) ?? cpuMs; // gone since the check: its last reading
    const wallMs = performance.now() - started;
    const verdict = runBudgetDecision(cpuMs, wallMs, run.budgetMs, backstopMs);
    if (verdict.kind === "over_budget") stop("budget");
    else if (verdict.kind === "hung") stop("hung", `tesseract: still running after ${Math.round(wallMs / 1000)} s of wall time, ${Math.round((cpuMs ?? 0) / 100) / 10} s of CPU time: stopped as hung`);
    else timer = setTimeout(look, verdict.afterMs);
  };
  look();
  const onAbort = (): void => stop("stopped");
  run.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const [code, err] = await Promise.all([child.exited, new Response(child.stderr).text()]);
    if (stopped) throw stopped;
    if (code !== 0) throw new Error(`tesseract exited ${code}: ${err.trim().slice(-400)}`);
  } finally {
    clearTimeout(timer);
    run.signal?.removeEventListener("abort", onAbort);
    cutLifeline();
  }
  const text = await readFile(`${run.outBase}.txt`, "utf8");
  return { text, ...(run.pdf ? { pdfPath: `${run.outBase}.pdf` } : {}) };
}
