/**
 * Shapes shared by the worker pools.
 */
import type { ProcessorOptions, ProcessorResult } from "../../processors/types.ts";

/**
 * Runs one processing attempt (the bot's runner is the warm processor pool,
 * processors/pool/: `ProcessorPool.process`) with a wall-clock timeout and a memory cap.
 * Throws `ProcessingError` with a reason code (`processing_timeout`, `too_much_memory`,
 * `processing_crashed`, `cancelled`, content reasons). `onProgress` gets `done` of `total`
 * units and, for work with several steps, the step's name.
 */
export type ProcessRunner = (
  inputPath: string,
  options: ProcessorOptions,
  limits: {
    readonly timeoutMs: number;
    readonly memoryMb: number;
    readonly signal?: AbortSignal;
    readonly onProgress?: (done: number, total: number, stage?: string) => void;
    /** Called once when the job ended, with the peak resident memory of its child process tree in bytes (metrics). */
    readonly onPeakRss?: (bytes: number) => void;
  },
) => Promise<ProcessorResult>;
