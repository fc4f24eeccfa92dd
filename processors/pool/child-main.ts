/**
 * Entry script of a warm pool child (processors/pool/pool.ts starts it as
 * `bun processors/pool/child-main.ts`, nothing else in argv, a minimal environment: env.ts).
 *
 * Life: wait for `init`; import the pool's extra job modules, if any; load and warm pdf.js (fonts, the pdf.js thread: the start-up
 * self-check's own PDF is opened, read and rendered) and sharp; say `ready`. Then one `job` at a
 * time: run its handler (jobs.ts), send progress and one `done`; keep the pdf.js thread warm; if
 * the resident set is above the recycle threshold run a full GC (this thread and the pdf.js
 * thread) and measure again; say `idle` with the resident set. The parent decides whether this child stays. When the IPC channel
 * closes (the bot exited or was killed) the child exits.
 *
 * The libvips operation cache is off: a long-lived child must not keep decoded images between
 * jobs (memory) nor ever answer a job from another job's file.
 *
 * Test-only faults (protocol.ts `ChildFault`, `StartFault`) come in the job or init message; the
 * pool sends them only when a caller passes `testFault` / `startFault`.
 */
import sharp from "sharp";
import { loadPdfJs, pdfEngineSelfCheck } from "../pdf/engine.ts";
import { collectPageWorker, warmPageWorker } from "../pdf/page-worker.ts";
import { ProcessingError } from "../types.ts";
import { jobHandler } from "./jobs.ts";
import type { ChildFault, FromChild, JobReply, ProgressEvent, ToChild } from "./protocol.ts";

sharp.cache(false);

/** Resident set above which the child runs a full GC before it reports `idle`, bytes. */
let recycleRssBytes = Number.POSITIVE_INFINITY;
/** Memory held on purpose by the `leak` fault (TEST ONLY). */
const leaked: Uint8Array[] = [];

function send(message: FromChild): void {
  process.send?.(message);
}

/** Progress to the parent at most every 200 ms, plus the last step and the first of each stage (the parent grants stage allowances on it). */
function progressSender(id: number): (event: ProgressEvent) => void {
  let last = 0;
  let stage: string | undefined;
  return (event) => {
    const now = Date.now();
    if (event.done < event.total && now - last < 200 && event.stage === stage) return;
    last = now;
    stage = event.stage;
    send({ t: "progress", id, event });
  };
}

/** Write `bytes` of filler into a stream, waiting whenever the pipe is full. */
async function flood(stream: NodeJS.WriteStream, bytes: number): Promise<void> {
  const chunk = "flood ".repeat(10_922) + "\n"; // 64 KiB
  for (let sent = 0; sent < bytes; sent += chunk.length) {
    if (!stream.write(chunk)) await new Promise((resolve) => stream.once("drain", resolve));
  }
}

/** Run the injected fault before the job; returns when the job should go on. */
async function injectFault(fault: ChildFault | undefined, progress: (event: ProgressEvent) => void): Promise<void> {
  if (fault === "ocr-hang" || fault === "ocr-allocate") {
    progress({ done: 0, total: 1, stage: "ocr" });
    return injectFault(fault === "ocr-hang" ? "hang" : "allocate", progress);
  }
  if (fault === "grandchild") Bun.spawn(["sleep", "600"], { stdio: ["ignore", "ignore", "ignore"] });
  if (fault === "hang" || fault === "grandchild") await new Promise(() => setInterval(() => undefined, 60_000));
  if (fault === "exit") process.exit(3);
  if (fault === "abort") process.abort();
  if (fault === "flood") await Promise.all([flood(process.stdout, 16 * 2 ** 20), flood(process.stderr, 16 * 2 ** 20)]);
  if (fault === "leak") leaked.push(new Uint8Array(256 * 2 ** 20).fill(1)); // touched, so it counts in RSS
  if (fault === "allocate") {
    const hold: Uint8Array[] = [];
    for (;;) {
      hold.push(new Uint8Array(16 * 2 ** 20).fill(1));
      await Bun.sleep(5);
    }
  }
}

/** Run one job and answer it. */
async function runJob(job: Extract<ToChild, { t: "job" }>): Promise<void> {
  await injectFault(job.fault, progressSender(job.id));
  let reply: JobReply;
  const handler = jobHandler(job.type);
  try {
    if (!handler) throw new Error(`no handler for job type ${JSON.stringify(job.type)}`);
    reply = { ok: true, value: await handler(job.payload as never, { progress: progressSender(job.id) }) };
  } catch (err) {
    reply =
      err instanceof ProcessingError
        ? { ok: false, reason: err.reason, params: { ...err.params }, detail: err.message }
        : { ok: false, crash: true, detail: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
  }
  send({ t: "done", id: job.id, reply });
  if (job.fault === "exit-after-reply") setTimeout(() => process.exit(0), 100);
  // A page over its budget terminated the pdf.js thread: start the next one while idle.
  await warmPageWorker(await loadPdfJs()).catch(() => undefined);
  let rss = process.memoryUsage.rss();
  if (rss > recycleRssBytes) {
    // "Stays above": only what garbage collection cannot give back counts (both heaps: this
    // thread's and the pdf.js thread's).
    Bun.gc(true);
    await collectPageWorker();
    rss = process.memoryUsage.rss();
  }
  send({ t: "idle", id: job.id, rssBytes: rss });
}

/** Warm up and say `ready`. */
async function start(init: Extract<ToChild, { t: "init" }>): Promise<void> {
  recycleRssBytes = init.recycleRssBytes;
  if (init.fault === "hang-start") return;
  if (init.fault === "exit-start") process.exit(4);
  const t0 = performance.now();
  // Extra job types (pool option `modules`): each module registers its handlers when imported.
  for (const m of init.modules ?? []) {
    try {
      await import(m);
    } catch (err) {
      console.error(`cannot load job module ${m}: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(5);
    }
  }
  // The self-check loads pdf.js and @napi-rs/canvas, starts the warm pdf.js thread and reads and
  // renders a page (fonts loaded, code paths compiled). A failure is reported, not fatal: images work.
  const pdf = await pdfEngineSelfCheck();
  await sharp({ create: { width: 64, height: 64, channels: 3, background: "#808080" } }).resize(32).jpeg().toBuffer();
  send({ t: "ready", ms: Math.round(performance.now() - t0), pdf });
}

process.on("disconnect", () => process.exit(0));
process.on("message", (message: ToChild) => {
  if (message.t === "init") void start(message);
  else if (message.t === "job") void runJob(message);
});
