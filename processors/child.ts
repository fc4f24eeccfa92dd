/**
 * Entry script of the isolated processor child (DESIGN.md: "each job in a child process
 * with timeout and memory cap"). Started by processors/isolate.ts as
 * `bun processors/child.ts <request JSON>`; runs processFile and writes one JSON
 * {@link ChildReply} to the request's `resultPath` (write + rename), then exits 0.
 * No result file means the child died: the parent maps that to `processing_crashed`.
 *
 * `bun processors/child.ts --self-check` instead prints the pdf.js self-check as JSON
 * (the bot runs it at start-up in a child, so pdf.js never loads into the bot process).
 *
 * Test-only fault switch: env `DOCKET_CHILD_FAULT` = `hang` | `allocate` | `exit` | `abort`
 * makes the child hang forever, allocate memory until killed, exit 3 without a result,
 * or abort (SIGABRT). runIsolated sets it only when its `testFault` option is given.
 */
import { rename } from "node:fs/promises";
import { processFile } from "./process-file.ts";
import { pdfEngineSelfCheck } from "./pdf/engine.ts";
import { ProcessingError, type ProcessorOptions, type ProcessorResult } from "./types.ts";

/** What the parent sends (argv[2], JSON). */
export interface ChildRequest {
  readonly inputPath: string;
  readonly options: ProcessorOptions;
  /** Where to write the {@link ChildReply} (inside workDir). */
  readonly resultPath: string;
}

/** What the child writes back. */
export type ChildReply =
  | { readonly ok: true; readonly result: ProcessorResult }
  | { readonly ok: false; readonly reason: string; readonly params: Record<string, string | number>; readonly detail: string }
  | { readonly ok: false; readonly crash: true; readonly detail: string };

/** Faults the test switch can inject (see the module comment). */
export type ChildFault = "hang" | "allocate" | "exit" | "abort";

/** Run the injected fault, if any; returns only when there is none. */
async function injectFault(fault: string | undefined): Promise<void> {
  if (!fault) return;
  if (fault === "hang") await new Promise(() => setInterval(() => undefined, 60_000));
  if (fault === "exit") process.exit(3);
  if (fault === "abort") process.abort();
  if (fault === "allocate") {
    const hold: Uint8Array[] = [];
    for (;;) {
      hold.push(new Uint8Array(16 * 1024 * 1024).fill(1)); // touched, so it counts in RSS
      await Bun.sleep(5);
    }
  }
}

/** Progress lines on stdout (`progress <done> <total>`), at most every 200 ms plus the last one. */
function progressReporter(): (done: number, total: number) => void {
  let last = 0;
  return (done, total) => {
    const now = Date.now();
    if (done < total && now - last < 200) return;
    last = now;
    process.stdout.write(`progress ${done} ${total}\n`);
  };
}

async function main(): Promise<void> {
  const request = JSON.parse(process.argv[2] ?? "{}") as ChildRequest;
  await injectFault(process.env.DOCKET_CHILD_FAULT);
  let reply: ChildReply;
  try {
    reply = { ok: true, result: await processFile(request.inputPath, { ...request.options, onProgress: progressReporter() }) };
  } catch (err) {
    reply =
      err instanceof ProcessingError
        ? { ok: false, reason: err.reason, params: { ...err.params }, detail: err.message }
        : { ok: false, crash: true, detail: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
  }
  const tmp = `${request.resultPath}.tmp`;
  await Bun.write(tmp, JSON.stringify(reply));
  await rename(tmp, request.resultPath);
  process.exit(0);
}

if (process.argv[2] === "--self-check") {
  console.log(JSON.stringify(await pdfEngineSelfCheck()));
  process.exit(0);
}
await main();
