/**
 * The processor pool (issue 12; CONTRACTS.md §8: the one way processors are invoked): warm,
 * isolated children (child-main.ts), as many as the processing slots, each with pdf.js (fonts,
 * its worker thread) and sharp loaded once, one job at a time over IPC.
 *
 * Isolation per job, each enforced by killing the child (child-handle.ts): the wall clock
 * (`processing_timeout`), the resident-memory cap over the child and what it started
 * (`too_much_memory`), the abort signal (`cancelled`); a child that dies fails only the job it
 * held (`processing_crashed`). Replacement (policy.ts): after `recycleJobs` jobs, when the
 * resident set after a job stays above `recycleRssBytes`, after any kill or crash (at once, in
 * the background), and after `idleMs` without work (not replaced until work comes).
 */
import { fileURLToPath } from "node:url";
import { isReasonCode } from "../../bot/jobs/reasons.ts";
import type { OcrSelfCheck } from "../ocr/self-check.ts";
import type { PdfSelfCheck } from "../pdf/engine.ts";
import { ProcessingError, type ProcessorOptions, type ProcessorResult } from "../types.ts";
import { PoolChild, type JobOutcome, type KillCause } from "./child-handle.ts";
import { childEnv } from "./env.ts";
import { childrenToStart, idleExpired, replaceAtOnce, retireAfterJob, type PoolSettings, type RetireReason } from "./policy.ts";
import type { ChildFault, JobType, JobTypes, ProgressEvent, StartFault } from "./protocol.ts";

/** Absolute path of the child entry script. */
const CHILD_ENTRY = fileURLToPath(new URL("./child-main.ts", import.meta.url));
/** How long a child may take to warm up before it is killed, ms (≈ 0.3–1 s on the development machine). */
const STARTUP_TIMEOUT_MS = 30_000;
/** How often a busy child's resident set is sampled, ms. */
const POLL_MS = 50;

/** Limits of one job. */
export interface JobLimits {
  /** Wall clock from handing the job to a warm child until its reply, ms. */
  readonly timeoutMs: number;
  /** Resident-memory cap of the child and what it started, MB (2^20 bytes). */
  readonly memoryMb: number;
  /** Aborting kills the child (`/cancel`, shutdown); a job still waiting for a child just leaves. */
  readonly signal?: AbortSignal;
  /** How often the resident set is sampled, ms (default 50). */
  readonly pollMs?: number;
  /** Progress events of the job (throttled by the child to one per 200 ms plus the last). */
  readonly onProgress?: (event: ProgressEvent) => void;
  /** More wall clock (ms) and memory (MB) once the job enters `stage` (child-handle.ts StageAllowance; OCR). */
  readonly stageAllowance?: { readonly stage: string; readonly timeoutMs: number; readonly memoryMb: number };
  /** Called once the job ended with the peak resident set of its child's process tree, bytes (metrics). */
  readonly onPeakRss?: (bytes: number) => void;
  /** TEST ONLY: make the child misbehave during this job (protocol.ts `ChildFault`). */
  readonly testFault?: ChildFault;
}

/** What the pool tells the operator's journal (bot/app.ts logs them). */
export type PoolEvent =
  | { readonly type: "started"; readonly pid: number; readonly ms: number; readonly pdfOk: boolean }
  | { readonly type: "start_failed"; readonly detail: string }
  | { readonly type: "retired"; readonly pid: number; readonly reason: RetireReason; readonly jobs: number; readonly rssBytes: number }
  | { readonly type: "killed"; readonly pid: number; readonly cause: KillCause["kind"]; readonly jobs: number }
  | { readonly type: "crashed"; readonly pid: number; readonly how: string; readonly busy: boolean; readonly stderr: string };

/** Options of a {@link ProcessorPool}. */
export interface PoolOptions {
  readonly settings: PoolSettings;
  /** Extra environment for the children (e.g. `TESSDATA_PREFIX`); never secrets (env.ts). */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Absolute paths of modules every child imports before warming up; each registers its own job
   * types with `registerJob` (jobs.ts) and declares them in `JobTypes`. For work outside the
   * product (the bench's single steps); the product's job types live in jobs.ts.
   */
  readonly modules?: readonly string[];
  /** How long a child may take to become ready, ms (default 30 000). */
  readonly startupTimeoutMs?: number;
  readonly onEvent?: (event: PoolEvent) => void;
  /** TEST ONLY: every child misbehaves at start (protocol.ts `StartFault`). */
  readonly startFault?: StartFault;
}

/** One child as tests and the bench see it. */
export interface ChildSnapshot {
  readonly pid: number;
  readonly state: PoolChild["state"];
  readonly jobs: number;
  /** Resident set reported after the last job, bytes. */
  readonly rssBytes: number;
  /** Highest resident set sampled during its jobs, bytes. */
  readonly peakJobRssBytes: number;
}

/** A job waiting for a warm child. */
interface Waiter {
  start(child: PoolChild): void;
  fail(err: ProcessingError): void;
}

/** See the module comment. */
export class ProcessorPool {
  private readonly children = new Set<PoolChild>();
  private readonly waiting: Waiter[] = [];
  private readonly idleTimers = new Map<PoolChild, ReturnType<typeof setTimeout>>();
  private readonly env: Record<string, string>;
  private nextId = 1;
  private closed = false;

  /** @param opts see {@link PoolOptions}; nothing starts before the first job or {@link warm}. */
  constructor(private readonly opts: PoolOptions) {
    this.env = childEnv(process.env, opts.env);
  }

  /** The settings in force. */
  get settings(): PoolSettings {
    return this.opts.settings;
  }

  /**
   * Run one job on a warm child (waiting for one when all are busy).
   * @param type a registered job type (protocol.ts `JobTypes`)
   * @param payload its JSON payload (never in argv)
   * @param limits wall clock, memory cap, abort signal, progress
   * @returns the handler's value
   * @throws ProcessingError: the handler's own refusal; `processing_timeout` {seconds} on the wall
   *   clock; `too_much_memory` {limit_mb} over the cap; `cancelled` when `signal` aborts;
   *   `processing_crashed` when the child died without a reply (detail: exit code or signal and
   *   the stderr tail), the handler threw something else, or no child could start
   */
  async run<K extends JobType>(type: K, payload: JobTypes[K]["payload"], limits: JobLimits): Promise<JobTypes[K]["result"]> {
    if (limits.signal?.aborted) throw new ProcessingError("cancelled", {}, "aborted before start");
    if (this.closed) throw new ProcessingError("processing_crashed", {}, "processor pool is closed");
    const id = this.nextId++;
    const outcome = await new Promise<JobOutcome>((resolve, reject) => {
      const onAbort = (): void => {
        const i = this.waiting.indexOf(waiter);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(new ProcessingError("cancelled", {}, "cancelled while waiting for a processor child"));
      };
      const waiter: Waiter = {
        start: (child) => {
          limits.signal?.removeEventListener("abort", onAbort);
          resolve(
            child.run({
              id,
              type,
              payload,
              timeoutMs: limits.timeoutMs,
              memoryBytes: limits.memoryMb * 2 ** 20,
              pollMs: limits.pollMs ?? POLL_MS,
              ...(limits.signal ? { signal: limits.signal } : {}),
              ...(limits.onProgress ? { onProgress: limits.onProgress } : {}),
              ...(limits.onPeakRss ? { onPeakRss: limits.onPeakRss } : {}),
              ...(limits.stageAllowance ? { stageAllowance: { stage: limits.stageAllowance.stage, timeoutMs: limits.stageAllowance.timeoutMs, memoryBytes: limits.stageAllowance.memoryMb * 2 ** 20 } } : {}),
              ...(limits.testFault ? { fault: limits.testFault } : {}),
            }),
          );
        },
        fail: (err) => {
          limits.signal?.removeEventListener("abort", onAbort);
          reject(err);
        },
      };
      limits.signal?.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(waiter);
      this.dispatch();
    });
    return resultOf(outcome) as JobTypes[K]["result"];
  }

  /**
   * The pipeline's processing step (bot/worker/types.ts `ProcessRunner`): processFile on a
   * downloaded file in a warm child. `options.onProgress` is not sent; `limits.onProgress` gets
   * the child's progress as (done, total, stage).
   * @throws ProcessingError as {@link ProcessorPool.run}, and the processor's refusals
   */
  process(
    inputPath: string,
    options: ProcessorOptions,
    limits: Omit<JobLimits, "onProgress"> & { readonly onProgress?: (done: number, total: number, stage?: string) => void },
  ): Promise<ProcessorResult> {
    const { onProgress: _inChild, ...sent } = options;
    const { onProgress, ...rest } = limits;
    return this.run("process", { inputPath, options: sent }, { ...rest, ...(onProgress ? { onProgress: (e) => onProgress(e.done, e.total, e.stage) } : {}) });
  }

  /**
   * The pdf.js start-up self-check (BR-11) on a warm child, so the bot process never loads pdf.js.
   * Never throws: a child that cannot start or answer within `timeoutMs` is `{ ok: false, missing }`.
   */
  async selfCheck(timeoutMs = STARTUP_TIMEOUT_MS): Promise<PdfSelfCheck> {
    try {
      return await this.run("self-check", {}, { timeoutMs, memoryMb: 2048 });
    } catch (err) {
      return { ok: false, missing: `the pdf.js self-check in a processor child failed: ${(err as Error).message}` };
    }
  }

  /**
   * The OCR start-up self-check (processors/ocr/self-check.ts) on a warm child: Tesseract 5, the data
   * of each of `languages`, a built-in page recognized. Never throws, like {@link ProcessorPool.selfCheck}.
   */
  async ocrSelfCheck(languages: string, timeoutMs = 2 * STARTUP_TIMEOUT_MS): Promise<OcrSelfCheck> {
    try {
      return await this.run("ocr-self-check", { languages }, { timeoutMs, memoryMb: 2048 });
    } catch (err) {
      return { ok: false, missing: `the OCR self-check in a processor child failed: ${(err as Error).message}` };
    }
  }

  /** Start children up to the pool size now (at bot start-up), so the first jobs find them warm. */
  warm(): void {
    if (this.closed) return;
    while (this.live() < this.settings.size) this.spawn();
  }

  /** The children now, for tests and the bench. */
  snapshot(): ChildSnapshot[] {
    return [...this.children].map((c) => ({ pid: c.pid, state: c.state, jobs: c.jobs, rssBytes: c.rssBytes, peakJobRssBytes: c.peakJobRssBytes }));
  }

  /** Stop: jobs still waiting fail (`processing_crashed`, retried after a restart), every child is killed; resolves once all exited. */
  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiting.splice(0)) w.fail(new ProcessingError("processing_crashed", {}, "processor pool closed"));
    const exits = [...this.children].map((c) => c.exited);
    for (const c of this.children) {
      if (c.state === "busy") c.kill({ kind: "cancelled" });
      else c.retire();
    }
    for (const t of this.idleTimers.values()) clearTimeout(t);
    this.idleTimers.clear();
    await Promise.all(exits);
  }

  /** Children that count towards the size (starting, idle, busy). */
  private live(): number {
    let n = 0;
    for (const c of this.children) if (c.state !== "retiring" && c.state !== "gone") n++;
    return n;
  }

  /** Hand idle children to waiting jobs (oldest first), then start children for the rest. */
  private dispatch(): void {
    while (this.waiting.length > 0) {
      const child = [...this.children].find((c) => c.state === "idle");
      if (!child) break;
      this.clearIdle(child);
      this.waiting.shift()!.start(child);
    }
    if (this.closed) return;
    let starting = 0;
    let idle = 0;
    let busy = 0;
    for (const c of this.children) {
      if (c.state === "starting") starting++;
      else if (c.state === "idle") idle++;
      else if (c.state === "busy") busy++;
    }
    const n = childrenToStart({ starting, idle, busy, waiting: this.waiting.length }, this.settings);
    for (let i = 0; i < n; i++) this.spawn();
  }

  private spawn(): void {
    const child = new PoolChild({
      entry: CHILD_ENTRY,
      env: this.env,
      recycleRssBytes: this.settings.recycleRssBytes,
      ...(this.opts.modules ? { modules: this.opts.modules } : {}),
      startupTimeoutMs: this.opts.startupTimeoutMs ?? STARTUP_TIMEOUT_MS,
      ...(this.opts.startFault ? { startFault: this.opts.startFault } : {}),
      onIdle: (c) => this.onIdle(c),
      onExit: (c, startFailure) => this.onExit(c, startFailure),
    });
    this.children.add(child);
    void child.ready.then(
      (r) => {
        this.opts.onEvent?.({ type: "started", pid: child.pid, ms: r.ms, pdfOk: r.pdf.ok });
        if (this.closed) child.retire();
        else {
          this.armIdle(child);
          this.dispatch();
        }
      },
      () => undefined, // reported by onExit
    );
  }

  /** A child finished a job and is idle: keep it for the next job, or replace it. */
  private onIdle(child: PoolChild): void {
    if (this.closed) {
      child.retire();
      return;
    }
    const reason = retireAfterJob(child.jobs, child.rssBytes, this.settings);
    if (reason) this.retire(child, reason);
    else this.armIdle(child);
    this.dispatch();
  }

  private retire(child: PoolChild, reason: RetireReason): void {
    this.clearIdle(child);
    this.opts.onEvent?.({ type: "retired", pid: child.pid, reason, jobs: child.jobs, rssBytes: child.rssBytes });
    child.retire();
    if (!this.closed && replaceAtOnce(reason) && this.live() < this.settings.size) this.spawn();
  }

  private onExit(child: PoolChild, startFailure: string | null): void {
    this.children.delete(child);
    this.clearIdle(child);
    if (startFailure) {
      // A child that cannot start fails the oldest waiting job only; the next waiting job tries a new one.
      this.opts.onEvent?.({ type: "start_failed", detail: startFailure });
      this.waiting.shift()?.fail(new ProcessingError("processing_crashed", {}, startFailure));
    } else if (child.killCause?.kind !== "retired") {
      if (child.killCause) this.opts.onEvent?.({ type: "killed", pid: child.pid, cause: child.killCause.kind, jobs: child.jobs });
      else this.opts.onEvent?.({ type: "crashed", pid: child.pid, how: child.how(), busy: child.exitedWhile === "busy", stderr: child.stderr() });
      // After any kill or crash the slot gets a fresh child at once.
      if (!this.closed && this.live() < this.settings.size) this.spawn();
    }
    this.dispatch();
  }

  private armIdle(child: PoolChild): void {
    this.clearIdle(child);
    const timer = setTimeout(() => {
      this.idleTimers.delete(child);
      if (child.state === "idle" && idleExpired(child.idleSince, Date.now(), this.settings)) this.retire(child, "idle");
    }, this.settings.idleMs);
    timer.unref?.();
    this.idleTimers.set(child, timer);
  }

  private clearIdle(child: PoolChild): void {
    const t = this.idleTimers.get(child);
    if (t) clearTimeout(t);
    this.idleTimers.delete(child);
  }
}

/** Map how a job ended to its value or its ProcessingError (the isolation's reason codes). */
function resultOf(outcome: JobOutcome): unknown {
  if (outcome.kind === "killed") {
    const { cause } = outcome;
    // The limits named are those in force when the child was killed (a stage allowance may have raised them).
    if (cause.kind === "timeout") throw new ProcessingError("processing_timeout", { seconds: Math.ceil(cause.timeoutMs / 1000) }, `processor child killed after ${cause.timeoutMs} ms`);
    if (cause.kind === "memory") {
      // The same file needs the same memory on every try: its own reason makes it final and the
      // chat text truthful (audit of issue 5, gap 4); `limit_mb` names the cap.
      const capMb = Math.round(cause.capBytes / 2 ** 20);
      throw new ProcessingError("too_much_memory", { limit_mb: capMb }, `processor child killed: out of memory cap (RSS ${Math.round(cause.rss / 2 ** 20)} MB > ${capMb} MB)`);
    }
    if (cause.kind === "cancelled") throw new ProcessingError("cancelled", {}, "processor child killed: cancelled");
    throw new ProcessingError("processing_crashed", {}, `processor child killed (${cause.kind})`);
  }
  if (outcome.kind === "died") {
    throw new ProcessingError("processing_crashed", {}, `processor child died without a result (${outcome.how})${outcome.stderr ? `: ${outcome.stderr}` : ""}`);
  }
  const { reply } = outcome;
  if (reply.ok) return reply.value;
  if ("crash" in reply) throw new ProcessingError("processing_crashed", {}, `processor threw: ${reply.detail}`);
  if (!isReasonCode(reply.reason)) throw new ProcessingError("processing_crashed", {}, `unknown reason from child: ${reply.reason}`);
  throw new ProcessingError(reply.reason, reply.params, reply.detail);
}
