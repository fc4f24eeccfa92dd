/**
 * Result-upload limit check (DESIGN.md data path: "results/ → upload-size check → send";
 * "limits are named settings": the result-upload limit is per mode, cloud or local).
 */
import { ProcessingError, type ProcessorOutput } from "./types.ts";

/** Bytes → MB (10^6) with one decimal, as shown in chat messages. */
export function toMb(bytes: number): number {
  return Math.round(bytes / 1e5) / 10;
}

/**
 * Throw when any output is larger than the result-upload limit. Call before `ready`.
 * @param outputs the processor's outputs (sizes in bytes)
 * @param limitBytes the current mode's result-upload limit, bytes
 * @throws ProcessingError `result_too_big` with params {size, limit} in MB (the largest offender)
 */
export function checkOutputSizes(outputs: readonly ProcessorOutput[], limitBytes: number): void {
  const largest = outputs.reduce<ProcessorOutput | null>((max, o) => (max && max.size >= o.size ? max : o), null);
  if (largest && largest.size > limitBytes) {
    throw new ProcessingError(
      "result_too_big",
      { size: toMb(largest.size), limit: toMb(limitBytes) },
      `output ${largest.path} is ${largest.size} bytes, result-upload limit ${limitBytes}`,
    );
  }
}
