/**
 * The messages between the pool (parent, processors/pool/pool.ts) and its children
 * (processors/pool/child-main.ts), sent over Bun's IPC channel as JSON. A request never travels
 * in argv (issue 11: a long file name hit E2BIG, and argv showed document names to `ps`).
 *
 * A job is a registered type plus a JSON payload; the child answers with progress events and
 * one reply. New work (OCR, …) adds a type to {@link JobTypes} and a handler in jobs.ts.
 */
import type { OcrSelfCheck } from "../ocr/self-check.ts";
import type { PdfSelfCheck } from "../pdf/engine.ts";
import type { ProcessorOptions, ProcessorResult } from "../types.ts";

/** Progress of a long job: `done` of `total` units (PDF pages); `stage` names the step when there are several (e.g. `ocr`). */
export interface ProgressEvent {
  readonly done: number;
  readonly total: number;
  readonly stage?: string;
}

/** The `process` job: one downloaded file through processFile. `options` without its callback. */
export interface ProcessRequest {
  readonly inputPath: string;
  readonly options: Omit<ProcessorOptions, "onProgress">;
}

/**
 * Job types the children know: payload sent, value answered. Add an entry here and a handler in
 * jobs.ts (`registerJob`) for new work; the pool's `run` is typed by this table.
 */
export interface JobTypes {
  /** processFile on a downloaded file (the pipeline's processing step). */
  process: { payload: ProcessRequest; result: ProcessorResult };
  /** The pdf.js start-up self-check (BR-11) on a warm child. */
  "self-check": { payload: Record<string, never>; result: PdfSelfCheck };
  /** The OCR start-up self-check (issue 13: Tesseract 5, the language data, a built-in page read back). */
  "ocr-self-check": { payload: { readonly languages: string }; result: OcrSelfCheck };
}

/** A job type name. */
export type JobType = keyof JobTypes;

/**
 * Faults a job can inject into its child (TEST ONLY; pool `testFault`): `hang` forever,
 * `allocate` memory until killed, `exit` 3 without a reply, `abort` (SIGABRT), `flood` 16 MB
 * into stdout and stderr each and then do the job, `leak` 256 MB that stay after the job,
 * `exit-after-reply` (reply, then die while idle), `grandchild` (start `sleep 600`, then hang:
 * a tool the child started must die with it).
 */
/** `ocr-hang` / `ocr-allocate`: report entering the `ocr` stage first (a stage allowance is granted), then hang / allocate. */
export type ChildFault = "hang" | "allocate" | "exit" | "abort" | "flood" | "leak" | "exit-after-reply" | "grandchild" | "ocr-hang" | "ocr-allocate";

/** Faults at a child's start (TEST ONLY; pool option `startFault`): never become ready, or exit 4 at once. */
export type StartFault = "hang-start" | "exit-start";

/** Parent → child. `init` comes first, once; then one `job` at a time. */
export type ToChild =
  | { readonly t: "init"; readonly recycleRssBytes: number; readonly modules?: readonly string[]; readonly fault?: StartFault }
  | { readonly t: "job"; readonly id: number; readonly type: string; readonly payload: unknown; readonly fault?: ChildFault };

/** How a job ended inside the child. */
export type JobReply =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly reason: string; readonly params: Record<string, string | number>; readonly detail: string }
  | { readonly ok: false; readonly crash: true; readonly detail: string };

/**
 * Child → parent: `ready` once warm (pdf.js, fonts, the pdf.js thread and sharp loaded); per job
 * any number of `progress`, one `done`, then `idle` with the resident set once the child can
 * take the next job (a full GC ran first when it was above the recycle threshold).
 */
export type FromChild =
  | { readonly t: "ready"; readonly ms: number; readonly pdf: PdfSelfCheck }
  | { readonly t: "progress"; readonly id: number; readonly event: ProgressEvent }
  | { readonly t: "done"; readonly id: number; readonly reply: JobReply }
  | { readonly t: "idle"; readonly id: number; readonly rssBytes: number };
