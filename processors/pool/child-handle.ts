/**
 * The parent's handle on one pool child (processors/pool/child-main.ts): spawn with a minimal
 * environment and nothing in argv but the entry script, the IPC channel, the stdout/stderr
 * drains, and one job at a time under the isolation limits (DESIGN.md "each job in a child
 * process with timeout and memory cap"): the wall clock, the resident-memory cap over the
 * child and everything it started, and the abort signal. Each is enforced by killing the child's
 * whole process group (it runs in its own session), so a tool it started dies with it.
 */
import type { Subprocess } from "bun";
import type { PdfSelfCheck } from "../pdf/engine.ts";
import type { ChildFault, FromChild, JobReply, ProgressEvent, StartFault } from "./protocol.ts";
import { treeResidentBytes } from "./rss.ts";

/** Bytes of the child's stderr kept for the operator log (per job, and during start-up). */
const STDERR_TAIL = 4096;

/** What a child reported once warm. */
export interface ChildReady {
  /** Warm-up time inside the child, ms. */
  readonly ms: number;
  /** The pdf.js self-check the warm-up ran (BR-11). */
  readonly pdf: PdfSelfCheck;
}

/** Why the parent killed a child. */
export type KillCause =
  | { readonly kind: "timeout"; readonly timeoutMs: number }
  | { readonly kind: "memory"; readonly rss: number; readonly capBytes: number }
  | { readonly kind: "cancelled" }
  | { readonly kind: "startup" }
  | { readonly kind: "retired" };

/** One job for a child, with its limits. */
export interface ChildJob {
  readonly id: number;
  readonly type: string;
  readonly payload: unknown;
  /** Wall clock from sending the job to its reply, ms. */
  readonly timeoutMs: number;
  /** Resident-memory cap of the child and its descendants, bytes. */
  readonly memoryBytes: number;
  /** How often the resident set is sampled, ms. */
  readonly pollMs: number;
  readonly signal?: AbortSignal;
  readonly onProgress?: (event: ProgressEvent) => void;
  /** More wall clock and memory granted once the child first reports progress in `stage` (see {@link StageAllowance}). */
  readonly stageAllowance?: StageAllowance;
  /** Called once the job ended with the highest resident set of the child's tree sampled during it, bytes (not when no sample was taken). */
  readonly onPeakRss?: (bytes: number) => void;
  readonly fault?: ChildFault;
}

/**
 * Extra limits a job earns when it enters a stage that needs them: OCR runs Tesseract processes
 * (≈ 80 MB each) and has its own budget, OCR_TIMEOUT (issue 13 §3). Granted on the first progress
 * event whose `stage` matches, so a job that never gets there keeps the base limits and a chat
 * message names the limit that really applied.
 */
export interface StageAllowance {
  readonly stage: string;
  /** Added to the wall clock, ms. */
  readonly timeoutMs: number;
  /** Added to the memory cap, bytes. */
  readonly memoryBytes: number;
}

/** How a job ended, seen from the parent. */
export type JobOutcome =
  | { readonly kind: "reply"; readonly reply: JobReply }
  | { readonly kind: "killed"; readonly cause: KillCause }
  | { readonly kind: "died"; readonly how: string; readonly stderr: string };

/** Options of a {@link PoolChild}. */
export interface PoolChildOptions {
  readonly entry: string;
  readonly env: Record<string, string>;
  readonly recycleRssBytes: number;
  /** Modules the child imports before warming up (extra job types). */
  readonly modules?: readonly string[];
  readonly startupTimeoutMs: number;
  readonly startFault?: StartFault;
  /** The child reported `idle` after a job, with its resident set (bytes). */
  readonly onIdle: (child: PoolChild) => void;
  /** The child's process ended (for any reason); `startFailure` says why when it never became ready. */
  readonly onExit: (child: PoolChild, startFailure: string | null) => void;
}

/** Drain a stream, keeping its last {@link STDERR_TAIL} bytes as text in `keep`. */
async function drain(stream: ReadableStream<Uint8Array>, keep: (text: string) => void): Promise<void> {
  const decoder = new TextDecoder();
  try {
    for await (const chunk of stream) keep(decoder.decode(chunk, { stream: true }));
  } catch {
    // the pipe closed with the process
  }
}

/** One warm child; see the module comment. */
export class PoolChild {
  /** `starting` until `ready`; `busy` from a job's start until its `idle`; `retiring` once the pool let it go; `gone` once exited. */
  state: "starting" | "idle" | "busy" | "retiring" | "gone" = "starting";
  /** Jobs answered so far. */
  jobs = 0;
  /** Resident set the child reported after its last job, bytes. */
  rssBytes = 0;
  /** Highest resident set sampled during its jobs (child and descendants), bytes. */
  peakJobRssBytes = 0;
  /** When the child last became idle (Date.now()), ms. */
  idleSince = 0;
  /** Why the parent killed it, if it did. */
  killCause: KillCause | null = null;
  /** The state it was in when its process ended (null while it runs). */
  exitedWhile: PoolChild["state"] | null = null;
  readonly pid: number;
  /** Resolves once warm; rejects when the child exits or hangs during start-up (message: why). */
  readonly ready: Promise<ChildReady>;
  readonly exited: Promise<void>;
  private readonly proc: Subprocess<"ignore", "pipe", "pipe">;
  private current: { id: number; resolve: (o: JobOutcome) => void; onProgress?: ((e: ProgressEvent) => void) | undefined } | null = null;
  private stderrTail = "";
  /** Became ready once. */
  private warm = false;

  /** Spawn the child and send it `init`; see {@link PoolChildOptions}. */
  constructor(private readonly opts: PoolChildOptions) {
    const ready = Promise.withResolvers<ChildReady>();
    this.ready = ready.promise;
    this.ready.catch(() => undefined); // observed by the pool; never an unhandled rejection
    this.proc = Bun.spawn([process.execPath, opts.entry], {
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      env: opts.env,
      detached: true, // own session and process group: a kill reaches whatever the child started
      serialization: "json",
      ipc: (message: FromChild) => this.onMessage(message, ready.resolve),
    });
    this.pid = this.proc.pid;
    void drain(this.proc.stdout, () => undefined);
    void drain(this.proc.stderr, (text) => {
      this.stderrTail = (this.stderrTail + text).slice(-STDERR_TAIL);
    });
    const startTimer = setTimeout(() => this.kill({ kind: "startup" }), opts.startupTimeoutMs);
    this.exited = this.proc.exited.then(() => {
      clearTimeout(startTimer);
      const how = this.how();
      let startFailure: string | null = null;
      if (!this.warm) {
        const why = this.killCause?.kind === "startup" ? `did not become ready within ${opts.startupTimeoutMs} ms` : `exited during start-up (${how})`;
        const detail = `processor child ${why}${this.stderr() ? `: ${this.stderr()}` : ""}`;
        if (this.state === "starting") startFailure = detail;
        ready.reject(new Error(detail));
      }
      this.exitedWhile = this.state;
      this.state = "gone";
      const job = this.current;
      this.current = null;
      job?.resolve(this.killCause ? { kind: "killed", cause: this.killCause } : { kind: "died", how, stderr: this.stderr() });
      opts.onExit(this, startFailure);
    });
    void this.ready.then(() => clearTimeout(startTimer), () => undefined);
    this.proc.send({
      t: "init",
      recycleRssBytes: opts.recycleRssBytes,
      ...(opts.modules?.length ? { modules: opts.modules } : {}),
      ...(opts.startFault ? { fault: opts.startFault } : {}),
    });
  }

  /** How the process ended (`exit code N` / `signal SIGX`); meaningful once exited. */
  how(): string {
    return this.proc.signalCode ? `signal ${this.proc.signalCode}` : `exit code ${this.proc.exitCode}`;
  }

  /** The child's stderr since the current job started (or since spawn), trimmed. */
  stderr(): string {
    return this.stderrTail.trim();
  }

  private onMessage(message: FromChild, ready: (r: ChildReady) => void): void {
    if (message.t === "ready" && this.state === "starting") {
      this.warm = true;
      this.state = "idle";
      this.idleSince = Date.now();
      ready({ ms: message.ms, pdf: message.pdf });
    } else if (message.t === "progress") {
      if (this.current?.id === message.id) this.current.onProgress?.(message.event);
    } else if (message.t === "done") {
      if (this.current?.id !== message.id) return;
      const job = this.current;
      this.current = null;
      this.jobs++;
      job.resolve({ kind: "reply", reply: message.reply });
    } else if (message.t === "idle" && this.state === "busy" && !this.current) {
      this.state = "idle";
      this.rssBytes = message.rssBytes;
      this.idleSince = Date.now();
      this.opts.onIdle(this);
    }
  }

  /**
   * Run one job. The child must be `idle`. Resolves when the child answered, or when it was
   * killed (timeout, memory cap, abort) or died and its process has exited; never rejects.
   */
  run(job: ChildJob): Promise<JobOutcome> {
    if (this.state !== "idle") throw new Error(`pool child ${this.pid} is ${this.state}, not idle`);
    this.state = "busy";
    this.stderrTail = "";
    const outcome = new Promise<JobOutcome>((resolve) => {
      this.current = { id: job.id, resolve, ...(job.onProgress ? { onProgress: job.onProgress } : {}) };
    });
    const live = (): boolean => this.current?.id === job.id;
    let timeoutMs = job.timeoutMs;
    let capBytes = job.memoryBytes;
    const started = Date.now();
    const arm = (): ReturnType<typeof setTimeout> => setTimeout(() => live() && this.kill({ kind: "timeout", timeoutMs }), Math.max(0, started + timeoutMs - Date.now()));
    let timer = arm();
    const allowance = job.stageAllowance;
    if (allowance && this.current) {
      const report = this.current.onProgress;
      let granted = false;
      this.current.onProgress = (event) => {
        if (!granted && event.stage === allowance.stage) {
          granted = true;
          timeoutMs += allowance.timeoutMs;
          capBytes += allowance.memoryBytes;
          clearTimeout(timer);
          timer = arm();
        }
        report?.(event);
      };
    }
    let polling = false;
    let jobPeak = 0;
    const poll = setInterval(() => {
      if (polling) return;
      polling = true;
      void treeResidentBytes(this.pid).then((rss) => {
        polling = false;
        if (rss === null || !live()) return;
        jobPeak = Math.max(jobPeak, rss);
        this.peakJobRssBytes = Math.max(this.peakJobRssBytes, rss);
        if (rss > capBytes) this.kill({ kind: "memory", rss, capBytes });
      });
    }, job.pollMs);
    const onAbort = (): void => {
      if (live()) this.kill({ kind: "cancelled" });
    };
    job.signal?.addEventListener("abort", onAbort, { once: true });
    this.proc.send({ t: "job", id: job.id, type: job.type, payload: job.payload, ...(job.fault ? { fault: job.fault } : {}) });
    return outcome.finally(() => {
      clearTimeout(timer);
      clearInterval(poll);
      job.signal?.removeEventListener("abort", onAbort);
      if (jobPeak > 0) job.onPeakRss?.(jobPeak);
    });
  }

  /** Let an idle or starting child go: it is never given a job again and is killed. */
  retire(): void {
    if (this.state === "gone" || this.state === "busy") return;
    this.state = "retiring";
    this.kill({ kind: "retired" });
  }

  /** SIGKILL the child's process group (the first cause given is kept). */
  kill(cause: KillCause): void {
    if (this.state === "gone") return;
    this.killCause ??= cause;
    try {
      process.kill(-this.pid, "SIGKILL");
    } catch {
      this.proc.kill("SIGKILL");
    }
  }
}
