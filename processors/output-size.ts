/**
 * Result-upload limit check (DESIGN.md data path: "results/ → upload-size check → send";
 * "limits are named settings": the result-upload limit is per mode, cloud or local).
 */
import { ProcessingError, type ProcessorOutput } from "./types.ts";


/**
 * Throw when any output is larger than the result-upload limit. Call before `ready`.
 * @param outputs the processor's outputs (sizes in bytes)
 * @param limitBytes the current mode's result-upload limit, bytes
 * @throws ProcessingError `result_too_big` with params {size_bytes, limit_bytes} (the largest
 *   offender and the limit, bytes; the chat message shows both as localized sizes)
 */
export function checkOutputSizes(outputs: readonly ProcessorOutput[], limitBytes: number): void {
  const largest = outputs.reduce<ProcessorOutput | null>((max, o) => (max && max.size >= o.size ? max : o), null);
  if (largest && largest.size > limitBytes) {
    throw new ProcessingError(
      "result_too_big",
      { size_bytes: largest.size, limit_bytes: limitBytes },
      `output ${largest.path} is ${largest.size} bytes, result-upload limit ${limitBytes}`,
    );
  }
}
