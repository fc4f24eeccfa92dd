/**
 * The job handlers a pool child runs (child side; imported by child-main.ts only). A handler
 * gets the job's payload and a context for progress events and returns a JSON-safe value; a
 * `ProcessingError` it throws reaches the caller with its reason and params, anything else is
 * `processing_crashed`. To add work to the pool (OCR, …): an entry in protocol.ts `JobTypes`
 * and one `registerJob` line here.
 */
import { ocrSelfCheck } from "../ocr/self-check.ts";
import { pdfEngineSelfCheck } from "../pdf/engine.ts";
import { processFile } from "../process-file.ts";
import type { JobType, JobTypes, ProgressEvent } from "./protocol.ts";

/** What a running handler may use besides its payload. */
export interface JobContext {
  /** Report progress to the caller (throttled by the child: at most every 200 ms, plus the last step). */
  progress(event: ProgressEvent): void;
}

/** A handler for one job type. */
export type JobHandler<K extends JobType> = (payload: JobTypes[K]["payload"], ctx: JobContext) => Promise<JobTypes[K]["result"]>;

const handlers = new Map<string, JobHandler<JobType>>();

/** Register (or replace) the handler of a job type. */
export function registerJob<K extends JobType>(type: K, handler: JobHandler<K>): void {
  handlers.set(type, handler as unknown as JobHandler<JobType>);
}

/** The handler of a job type, or undefined when none is registered. */
export function jobHandler(type: string): JobHandler<JobType> | undefined {
  return handlers.get(type);
}

registerJob("process", ({ inputPath, options }, ctx) =>
  processFile(inputPath, { ...options, onProgress: (done, total, phase) => ctx.progress({ done, total, ...(phase && phase !== "pages" ? { stage: phase } : {}) }) }),
);
registerJob("self-check", () => pdfEngineSelfCheck());
registerJob("ocr-self-check", ({ languages }) => ocrSelfCheck(languages));
