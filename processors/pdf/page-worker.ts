/**
 * Where pdf.js's evaluator runs: one Bun worker thread per process (pdfjs-thread.ts), kept warm
 * and shared by the documents the process opens one after another, else pdf.js's in-process
 * "fake worker".
 *
 * Why a thread: with the fake worker, pdf.js's parser yields only to the microtask queue
 * (LoopbackPort posts via `Promise.then`, and its 20 ms time slots resume via
 * `Promise.resolve()`), so a CPU-bound page never lets a `setTimeout` run: the per-page
 * budget (budget.ts `withBudget`) could not fire until the page was done, and then lost the
 * race to the finished result. In a thread the budget timer runs on an idle thread, and
 * `Worker.terminate()` stops a page mid-parse (Bun interrupts running JS in the thread).
 *
 * Why one warm thread (issue 12): starting a thread loads pdf.js's worker module again, about
 * 60–80 ms per document on the development machine. The pool child (processors/pool/) runs one
 * document at a time, so one thread serves them all: each document releases it when closed, and a
 * page over its budget terminates it (the next document starts a fresh one). Documents opened
 * concurrently in one process share the thread too; a budget stop of one then ends the others.
 *
 * The fallback exists for `bun build` bundles, where the thread's entry file is not next to
 * the bundle (field case BR-11: bundled builds must still open PDFs); there budgets hold only
 * where pdf.js waits on the event loop, and the pool's wall clock is the guard.
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
  /** `thread`: a worker thread, budgets preempt; `in-process`: fake worker (fallback). */
  readonly mode: "thread" | "in-process";
  /** Pass as `getDocument({ worker })`; null in-process (pdf.js makes its fake worker). */
  readonly handle: PdfWorkerHandle | null;
  /**
   * pdf.js's warning lines since the last call (from the thread and from this thread's display
   * side; warnings.ts), oldest first; the caller attributes them to the page it just worked on.
   */
  takeWarnings(): string[];
  /** True once {@link PageWorker.stop} ran (for this document or another one on the same thread). */
  readonly stopped: boolean;
  /** Resolves when the evaluator has ended: the thread's `close` event; in-process, at stop(). */
  readonly ended: Promise<void>;
  /**
   * Stop all pdf.js work now: terminates the thread (idempotent). The document must not be used
   * afterwards (its requests would never be answered); the next document gets a new thread.
   * In-process it only marks the worker stopped; the loading task's `destroy()` then ends the
   * work at pdf.js's next time slot.
   */
  stop(): void;
  /** The document is closed: the thread stays warm for the next one (nothing to do in-process). */
  release(): void;
}

/** The process's warm thread. */
interface SharedThread {
  readonly thread: Worker;
  readonly handle: PdfWorkerHandle;
  readonly ended: Promise<void>;
  dead: boolean;
}

let shared: SharedThread | null = null;
let starting: Promise<SharedThread | null> | null = null;

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

/** The warm thread, started when there is none (or the last one was stopped); null when none can start. */
function sharedThread(pdfjs: PdfJs): Promise<SharedThread | null> {
  if (shared && !shared.dead) return Promise.resolve(shared);
  starting ??= (async () => {
    const entry = threadEntry();
    const thread = entry && typeof Worker === "function" ? await startThread(entry) : null;
    if (!thread) return null;
    const ended = new Promise<void>((resolve) => thread.addEventListener("close", () => resolve(), { once: true }));
    // A warm thread must not keep its process alive once the process has nothing else to do (a
    // script that opened a PDF exits; the pool child stays alive through its IPC channel).
    (thread as Worker & { unref(): void }).unref();
    // pdf.js's own `ready` was consumed above; from a given port it assumes the far end is up.
    // WARNINGS: the thread posts them to us (pdfjs-thread.ts) instead of printing.
    const handle = new pdfjs.PDFWorker({ port: thread as never, verbosity: pdfjs.VerbosityLevel.WARNINGS });
    const t: SharedThread = { thread, handle, ended, dead: false };
    void ended.then(() => {
      t.dead = true; // terminated, or the thread died on its own
    });
    shared = t;
    return t;
  })().finally(() => {
    starting = null;
  });
  return starting;
}

/**
 * Have the warm thread ready before the next document (the pool child calls it after a job, so a
 * budget stop's fresh thread starts while the child is idle). Never throws.
 */
export async function warmPageWorker(pdfjs: PdfJs): Promise<"thread" | "in-process"> {
  return (await sharedThread(pdfjs).catch(() => null)) ? "thread" : "in-process";
}

/**
 * Run a full garbage collection in the warm thread (its heap is its own: the main thread's GC
 * does not reach it). Resolves when done, or at once when there is no live thread.
 */
export async function collectPageWorker(): Promise<void> {
  const t = shared;
  if (!t || t.dead) return;
  await new Promise<void>((resolve) => {
    const onMessage = (ev: MessageEvent): void => {
      if ((ev.data as { docket?: unknown } | null)?.docket !== "gc-done") return;
      t.thread.removeEventListener("message", onMessage);
      resolve();
    };
    t.thread.addEventListener("message", onMessage);
    void t.ended.then(() => resolve());
    t.thread.postMessage({ docket: "gc" });
  });
}

/**
 * Give a document its evaluator: the process's warm worker thread (started when needed), or the
 * in-process fake worker when no thread can start (no entry file, or it fails to load pdf.js) or
 * when `inProcess` asks for it.
 * @param pdfjs the loaded pdf.js module (engine.ts `loadPdfJs`)
 * @param inProcess use the fake worker even when the thread is there: for a document whose pages'
 *   content is never parsed (nothing for a page budget to stop), where each request's hop to the
 *   thread and back is the cost — the PDF tools' check before ready reads every page's `/Rotate`
 *   (open.ts `OpenPdfLimits.inProcess`)
 */
export async function startPageWorker(pdfjs: PdfJs, inProcess = false): Promise<PageWorker> {
  const t = inProcess ? null : await sharedThread(pdfjs);
  // The display side (and, in-process, the evaluator too) warns through this thread's console.
  let warnings: string[] = [];
  const sink: string[] = [];
  const releaseConsole = captureConsoleWarnings(sink);
  const takeWarnings = (): string[] => {
    const out = [...warnings, ...sink.splice(0)];
    warnings = [];
    return out;
  };
  if (!t) {
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
        releaseConsole();
        resolve();
      },
      release() {
        releaseConsole();
        resolve();
      },
    };
  }
  const onMessage = (ev: MessageEvent): void => {
    if (isThreadWarning(ev.data)) pushWarning(warnings, ev.data.docketWarning);
  };
  t.thread.addEventListener("message", onMessage);
  const detach = (): void => {
    releaseConsole();
    t.thread.removeEventListener("message", onMessage);
  };
  return {
    mode: "thread",
    handle: t.handle,
    takeWarnings,
    get stopped() {
      return t.dead;
    },
    ended: t.ended,
    stop() {
      detach();
      if (t.dead) return;
      t.dead = true;
      if (shared === t) shared = null;
      t.thread.terminate();
      t.handle.destroy();
    },
    release: detach,
  };
}
