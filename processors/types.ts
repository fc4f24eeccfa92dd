/**
 * The processor contract (DESIGN.md "Seams for growth"): a processor is a pure
 * `(input path, options) → { outputs, facts }` registered by detected type.
 * It runs inside the job engine's isolated child process; it never talks to
 * Telegram or the database.
 */
import type { ReasonCode } from "../bot/jobs/reasons.ts";
import type { OcrOptions } from "./ocr/types.ts";

/** What content detection found (never from the declared name or MIME). */
export interface Detection {
  /** Registry key: which processor handles it, or `null` when none does. */
  readonly kind: "pdf" | "image" | null;
  /** MIME by content, e.g. `application/pdf`, `image/png`; `application/octet-stream` when unknown. */
  readonly mime: string;
  /** Canonical extension without dot, e.g. `pdf`, `png`; `bin` when unknown. */
  readonly ext: string;
  /** Short human label for chat messages, e.g. `PNG image`, `PDF document`, `Word document`. */
  readonly label: string;
}

/** One part of a multi-part job (an album) as the parts processor gets it: a downloaded file and its album position. */
export interface PartInput {
  /** Absolute path of the downloaded part. */
  readonly path: string;
  /** Declared file name from the chat (a hint for naming and the chat's part list only). */
  readonly name: string | null;
  /** 1-based position in the album (parts that failed before processing keep their numbers). */
  readonly n?: number;
}

/** Options a processor receives (all sizes in bytes, times in ms, pixels as counts). */
export interface ProcessorOptions {
  /** Directory for this attempt's outputs and intermediates (`work/<job>-<rand>/`); created by the caller. */
  readonly workDir: string;
  /** Declared file name from the chat (a hint for naming results only; never a path). */
  readonly declaredName?: string | null;
  /** Declared MIME type from the chat (a hint only). */
  readonly declaredMime?: string | null;
  /**
   * The parts of a multi-part job in album order; when given, processFile builds ONE PDF from them
   * (processors/parts/build-pdf.ts) and its input path is not read.
   */
  readonly parts?: readonly PartInput[];
  /** Requested action; `default` = the type's sensible default. */
  readonly action?: string;
  /** Maximum pixels an image may declare before it is decoded (sharp `limitInputPixels`). */
  readonly maxInputPixels: number;
  /** Longest side of an image output, px. */
  readonly maxOutputSide: number;
  /**
   * Most frames of an animation (GIF, WebP, APNG) converted, from the header's frame count before
   * any decode (config MAX_FRAMES); above it only frame 1 is converted. Default 1000
   * (processors/image/process-image.ts `DEFAULT_MAX_FRAMES`).
   */
  readonly maxFrames?: number;
  /** Maximum PDF pages processed. */
  readonly maxPdfPages: number;
  /** Per-page time budget for PDF work, ms. */
  readonly pdfPageBudgetMs: number;
  /**
   * Text recognition of PDF pages without a usable text layer (issue 13 §3); absent = no OCR.
   * The job engine fills it from OCR_* (bot/worker/ocr-state.ts).
   */
  readonly ocr?: OcrOptions;
  /** True when OCR is off because its start-up self-check failed: the facts then say so. */
  readonly ocrUnavailable?: boolean;
  /**
   * Progress callback: `done` of `total` units (PDF pages) in `phase` (`pages`: reading or drawing
   * pages; `ocr`: recognizing pages). Not serialized to the child; the pool child sends progress
   * to the parent over IPC as the event's `stage` (processors/pool/jobs.ts).
   */
  readonly onProgress?: ProgressCallback;
}

/** What a processor is doing while it reports progress. */
export type ProgressPhase = "pages" | "ocr";

/** Progress: `done` of `total` units (PDF pages) in `phase` (default `pages`). */
export type ProgressCallback = (done: number, total: number, phase?: ProgressPhase) => void;

/** One file a processor produced, to be sent back to the chat. */
export interface ProcessorOutput {
  /** Absolute path inside `workDir`. */
  readonly path: string;
  /** File name to show in Telegram (derived from the declared name, sanitized). */
  readonly fileName: string;
  /** MIME of the output. */
  readonly mime: string;
  /** Size in bytes. */
  readonly size: number;
}

/**
 * Facts about the input, reported to the user and stored on the job (JSON).
 * Processors add their own keys; the common ones are typed here.
 */
export interface Facts {
  readonly type: string; // detected MIME
  readonly label: string; // e.g. "PDF document"
  readonly pages?: number; // PDF pages
  readonly width?: number; // image width as displayed (after EXIF orientation), px
  readonly height?: number; // image height as displayed, px
  readonly frames?: number; // animated/multi-page images
  readonly textChars?: number; // PDF text layer characters
  readonly mismatch?: string; // e.g. "sent as .pdf but is a PNG image" (English; logs and fallback)
  /** Structured form of `mismatch` for localized chat text (`facts-mismatch` in facts.ftl). */
  readonly mismatchInfo?: { readonly declaredExt: string; readonly actualExt: string; readonly actualLabel: string };
  readonly [key: string]: unknown;
}

/** What a processor returns on success. */
export interface ProcessorResult {
  readonly outputs: readonly ProcessorOutput[];
  readonly facts: Facts;
}

/**
 * A processor: pure function of its input file and options. `detection` is processFile's content
 * detection of the same file, so a processor need not read it again.
 */
export type Processor = (inputPath: string, options: ProcessorOptions, detection?: Detection) => Promise<ProcessorResult>;

/**
 * A refusal with a reason code; the job ends `failed` and the chat gets the
 * localized message `reason-<code>` filled with `params`.
 * Thrown by processors; anything else thrown counts as `corrupt` or a crash.
 */
export class ProcessingError extends Error {
  /**
   * @param reason reason code (bot/jobs/reasons.ts)
   * @param params values for the chat message (numbers and short strings, never paths)
   * @param detail operator-facing detail for the log (English)
   */
  constructor(
    readonly reason: ReasonCode,
    readonly params: Readonly<Record<string, string | number>> = {},
    detail?: string,
  ) {
    super(detail ?? reason);
    this.name = "ProcessingError";
  }
}
