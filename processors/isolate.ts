/**
 * Run one processing attempt in a child process (DESIGN.md "process pool … each job in a
 * child process with timeout and memory cap"): a hang, crash or memory blow-up fails that
 * attempt and nothing else.
 *
 * Memory cap: the child's resident set (VmRSS in /proc/<pid>/status) is polled and the
 * child is SIGKILLed above the cap. Address-space rlimits are not usable under Bun (JSC
 * reserves tens of GB of virtual memory at start), and cgroups need systemd delegation;
 * the service unit's MemoryMax stays the outer backstop.
 */
import { randomUUID } from "node:crypto";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ChildFault, ChildReply, ChildRequest } from "./child.ts";
import type { PdfSelfCheck } from "./pdf/engine.ts";
import { isReasonCode } from "../bot/jobs/reasons.ts";
import { ProcessingError, type ProcessorOptions, type ProcessorResult } from "./types.ts";

/** Limits of one isolated attempt. */
export interface IsolationLimits {
  /** Wall-clock budget of the whole attempt (child start to result), ms. */
  readonly timeoutMs: number;
  /** Resident-memory cap of the child, MB (2^20 bytes). */
  readonly memoryMb: number;
  /** Aborting kills the child (`/cancel`, shutdown). */
  readonly signal?: AbortSignal;
  /** How often the child's RSS is sampled, ms (default 50). */
  readonly pollMs?: number;
  /** Progress of the child (`done` of `total` PDF pages), from its stdout lines. */
  readonly onProgress?: (done: number, total: number) => void;
  /** TEST ONLY: make the child hang / allocate / exit / abort (processors/child.ts). */
  readonly testFault?: ChildFault;
}

/** Absolute path of the child entry script. */
const CHILD_SCRIPT = fileURLToPath(new URL("./child.ts", import.meta.url));
/** Bytes of the child's stderr kept for the operator log. */
const STDERR_TAIL = 4096;

/** Resident set size of a process in bytes, or null when it has exited. */
export async function residentBytes(pid: number): Promise<number | null> {
  try {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
    return kb ? Number(kb) * 1024 : null;
  } catch {
    return null;
  }
}

/** Keep the last {@link STDERR_TAIL} bytes of a stream as text (child warnings, crash output). */
async function tailOf(stream: ReadableStream<Uint8Array>): Promise<string> {
  let tail = "";
  const decoder = new TextDecoder();
  for await (const chunk of stream) tail = (tail + decoder.decode(chunk, { stream: true })).slice(-STDERR_TAIL);
  return tail.trim();
}

/** Why the parent killed the child, if it did. */
type KillCause = { kind: "timeout" } | { kind: "memory"; rss: number } | { kind: "cancelled" };

/** Read `progress <done> <total>` lines from the child's stdout and forward them. */
async function readProgress(stream: ReadableStream<Uint8Array>, onProgress?: (done: number, total: number) => void): Promise<void> {
  const decoder = new TextDecoder();
  let buf = "";
  for await (const chunk of stream) {
    buf += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const m = /^progress (\d+) (\d+)$/.exec(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      if (m) onProgress?.(Number(m[1]), Number(m[2]));
    }
  }
}

/**
 * Process a file in an isolated child (`bun processors/child.ts`).
 * @param inputPath absolute path of the source
 * @param options processor options; `workDir` must exist (the child writes outputs there)
 * @param limits wall-clock timeout, memory cap, abort signal
 * @returns the processor's outputs and facts
 * @throws ProcessingError with the processor's own refusal (`encrypted`, `truncated`, …), or
 *   `processing_timeout` ({seconds}) on the wall clock, `too_much_memory` ({limit_mb}) over
 *   the memory cap, `processing_crashed` when the child dies without a result (detail: exit
 *   code/signal and stderr tail) or the processor threw something unexpected, `cancelled`
 *   when `signal` aborts.
 */
export async function runIsolated(inputPath: string, options: ProcessorOptions, limits: IsolationLimits): Promise<ProcessorResult> {
  if (limits.signal?.aborted) throw new ProcessingError("cancelled", {}, "aborted before start");
  const resultPath = join(options.workDir, `.result-${randomUUID()}.json`);
  const request: ChildRequest = { inputPath, options, resultPath };
  const env: Record<string, string | undefined> = { ...process.env };
  delete env.DOCKET_CHILD_FAULT; // only an explicit testFault may switch it on
  if (limits.testFault) env.DOCKET_CHILD_FAULT = limits.testFault;
  const child = Bun.spawn([process.execPath, CHILD_SCRIPT, JSON.stringify(request)], {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    env,
  });
  const stderr = tailOf(child.stderr);
  const progress = readProgress(child.stdout, limits.onProgress);

  let cause: KillCause | null = null;
  const kill = (why: KillCause): void => {
    if (cause) return;
    cause = why;
    child.kill("SIGKILL");
  };
  const timer = setTimeout(() => kill({ kind: "timeout" }), limits.timeoutMs);
  const capBytes = limits.memoryMb * 1024 * 1024;
  let polling = false;
  const poll = setInterval(() => {
    if (polling) return;
    polling = true;
    void residentBytes(child.pid).then((rss) => {
      polling = false;
      if (rss !== null && rss > capBytes) kill({ kind: "memory", rss });
    });
  }, limits.pollMs ?? 50);
  const onAbort = (): void => kill({ kind: "cancelled" });
  limits.signal?.addEventListener("abort", onAbort, { once: true });

  try {
    await child.exited;
  } finally {
    clearTimeout(timer);
    clearInterval(poll);
    limits.signal?.removeEventListener("abort", onAbort);
  }
  const errText = await stderr;
  await progress;
  const killed = cause as KillCause | null;
  if (killed) {
    await rm(resultPath, { force: true });
    if (killed.kind === "timeout") {
      throw new ProcessingError("processing_timeout", { seconds: Math.ceil(limits.timeoutMs / 1000) }, `processor child killed after ${limits.timeoutMs} ms`);
    }
    if (killed.kind === "memory") {
      // The same file needs the same memory on every try: its own reason makes it final and the
      // chat text truthful (audit of issue 5, gap 4); `limit_mb` names the cap.
      throw new ProcessingError(
        "too_much_memory",
        { limit_mb: limits.memoryMb },
        `processor child killed: out of memory cap (RSS ${Math.round(killed.rss / 2 ** 20)} MB > ${limits.memoryMb} MB)`,
      );
    }
    throw new ProcessingError("cancelled", {}, "processor child killed: cancelled");
  }

  let reply: ChildReply | null = null;
  try {
    reply = JSON.parse(await readFile(resultPath, "utf8")) as ChildReply;
  } catch {
    reply = null;
  } finally {
    await rm(resultPath, { force: true });
  }
  if (!reply) {
    const how = child.signalCode ? `signal ${child.signalCode}` : `exit code ${child.exitCode}`;
    throw new ProcessingError("processing_crashed", {}, `processor child died without a result (${how})${errText ? `: ${errText}` : ""}`);
  }
  if (reply.ok) return reply.result;
  if ("crash" in reply) throw new ProcessingError("processing_crashed", {}, `processor threw: ${reply.detail}`);
  if (!isReasonCode(reply.reason)) throw new ProcessingError("processing_crashed", {}, `unknown reason from child: ${reply.reason}`);
  throw new ProcessingError(reply.reason, reply.params, reply.detail);
}

/**
 * The pdf.js start-up self-check (processors/pdf/engine.ts, field case BR-11) run in a child
 * process, so the long-lived bot process never loads pdf.js (≈ 50 MB RSS, 0.2 s).
 * Resolves `{ ok: false, missing }` when the child fails or does not answer within `timeoutMs`.
 */
export async function pdfSelfCheckInChild(timeoutMs = 30_000): Promise<PdfSelfCheck> {
  const child = Bun.spawn([process.execPath, CHILD_SCRIPT, "--self-check"], { stdin: "ignore", stdout: "pipe", stderr: "pipe", timeout: timeoutMs });
  const [out, err] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  try {
    return JSON.parse(out.trim().split("\n").pop() ?? "") as PdfSelfCheck;
  } catch {
    return { ok: false, missing: `self-check child gave no answer (exit ${child.exitCode ?? child.signalCode}): ${err.trim().slice(-500)}` };
  }
}
