/**
 * Shapes shared by the worker pools.
 */
import type { ProcessorOptions, ProcessorResult } from "../../processors/types.ts";

/**
 * Runs one processor attempt in an isolated child process with a wall-clock
 * timeout and a memory cap (processors/isolate.ts). Throws `ProcessingError`
 * with a reason code (`processing_timeout`, `processing_crashed`, content reasons).
 */
export type ProcessRunner = (
  inputPath: string,
  options: ProcessorOptions,
  limits: { readonly timeoutMs: number; readonly memoryMb: number; readonly signal?: AbortSignal; readonly onProgress?: (done: number, total: number) => void },
) => Promise<ProcessorResult>;
