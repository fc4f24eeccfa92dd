/**
 * Where pdf.js's evaluator runs for one document: a Bun worker thread (pdfjs-thread.ts) when
 * it starts, else pdf.js's in-process "fake worker".
 *
 * Why a thread: with the fake worker, pdf.js's parser yields only to the microtask queue
 * (LoopbackPort posts via `Promise.then`, and its 20 ms time slots resume via
 * `Promise.resolve()`), so a CPU-bound page never lets a `setTimeout` run: the per-page
 * budget (budget.ts `withBudget`) could not fire until the page was done, and then lost the
 * race to the finished result. In a thread the budget timer runs on an idle thread, and
 * `Worker.terminate()` stops a page mid-parse (Bun interrupts running JS in the thread).
 *
 * The fallback exists for `bun build` bundles, where the thread's entry file is not next to
 * the bundle (field case BR-11: bundled builds must still open PDFs); there budgets hold only
 * where pdf.js waits on the event loop, and runIsolated's wall clock is the guard.
 */
import { fileURLToPath } from "node:url";
import type { PdfJs } from "./engine.ts";
import { captureConsoleWarnings, isThreadWarning, pushWarning } from "./warnings.ts";

/** How long a new thread may take to load pdf.js and say `ready`, ms (a cold start is ~0.1 s). */
const THREAD_START_MS = 15_000;

/** pdf.js's worker handle (`getDocument({ worker })`). */
export type PdfWorkerHandle = InstanceType<PdfJs["PDFWorker"]>;

/** The evaluator of one document; see the module comment. */
export interface PageWorker {
  /** `thread`: own worker thread, budgets preempt; `in-process`: fake worker (fallback). */
  readonly mode: "thread" | "in-process";
  /** Pass as `getDocument({ worker })`; null in-process (pdf.js makes its fake worker). */
  readonly handle: PdfWorkerHandle | null;
  /**
   * pdf.js's warning lines since the last call (from the thread and from this thread's display
   * side; warnings.ts), oldest first; the caller attributes them to the page it just worked on.
   */
  takeWarnings(): string[];
  /** True once {@link PageWorker.stop} ran. */
  readonly stopped: boolean;
  /** Resolves when the evaluator has ended: the thread's `close` event; in-process, at stop(). */
  readonly ended: Promise<void>;
  /**
   * Stop all pdf.js work of the document now: terminates the thread (idempotent). The document
   * must not be used afterwards (its requests would never be answered). In-process it only
   * marks the worker stopped; the loading task's `destroy()` then ends the work at pdf.js's
   * next time slot.
   */
  stop(): void;
}

/** The thread entry as a file path, or null when it is not on disk (a bundle). */
function threadEntry(): string | null {
  try {
    const path = fileURLToPath(new URL("./pdfjs-thread.ts", import.meta.url));
    return Bun.file(path).size > 0 ? path : null;
  } catch {
    return null;
  }
}

/**
 * Start a worker thread and wait for pdf.js's `ready` message from it.
 * @returns the thread, or null when it failed to load or did not answer in time
 */
async function startThread(entry: string): Promise<Worker | null> {
  const thread = new Worker(entry);
  const up = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), THREAD_START_MS);
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      thread.removeEventListener("message", onMessage);
      thread.removeEventListener("error", onError);
      resolve(ok);
    };
    // pdf.js's MessageHandler wire format: { sourceName: "worker", targetName: "main", action, data }.
    const onMessage = (ev: MessageEvent): void => {
      if ((ev.data as { action?: unknown } | null)?.action === "ready") done(true);
    };
    const onError = (): void => done(false);
    thread.addEventListener("message", onMessage);
    thread.addEventListener("error", onError);
  });
  if (up) return thread;
  thread.terminate();
  return null;
}

/**
 * Give a document its evaluator: a fresh worker thread, or the in-process fake worker when no
 * thread can start (no entry file, or it fails to load pdf.js).
 * @param pdfjs the loaded pdf.js module (engine.ts `loadPdfJs`)
 */
export async function startPageWorker(pdfjs: PdfJs): Promise<PageWorker> {
  const entry = threadEntry();
  const thread = entry && typeof Worker === "function" ? await startThread(entry) : null;
  // The display side (and, in-process, the evaluator too) warns through this thread's console.
  let warnings: string[] = [];
  const sink: string[] = [];
  const release = captureConsoleWarnings(sink);
  const takeWarnings = (): string[] => {
    const out = [...warnings, ...sink.splice(0)];
    warnings = [];
    return out;
  };
  if (!thread) {
    let stopped = false;
    const { promise: ended, resolve } = Promise.withResolvers<void>();
    return {
      mode: "in-process",
      handle: null,
      takeWarnings,
      get stopped() {
        return stopped;
      },
      ended,
      stop() {
        stopped = true;
        release();
        resolve();
      },
    };
  }
  thread.addEventListener("message", (ev: MessageEvent) => {
    if (isThreadWarning(ev.data)) pushWarning(warnings, ev.data.docketWarning);
  });
  const ended = new Promise<void>((resolve) => thread.addEventListener("close", () => resolve(), { once: true }));
  // pdf.js's own `ready` was consumed above; from a given port it assumes the far end is up.
  // WARNINGS: the thread posts them to us (pdfjs-thread.ts) instead of printing.
  const handle = new pdfjs.PDFWorker({ port: thread as never, verbosity: pdfjs.VerbosityLevel.WARNINGS });
  let stopped = false;
  return {
    mode: "thread",
    handle,
    takeWarnings,
    get stopped() {
      return stopped;
    },
    ended,
    stop() {
      if (stopped) return;
      stopped = true;
      release();
      thread.terminate();
      handle.destroy();
    },
  };
}
