/**
 * Processor registry keyed by detected kind (DESIGN.md "Seams for growth": adding a
 * processor is adding a file and one `registerProcessor` line here).
 */
import type { Detection, Processor } from "./types.ts";
import { processPdf } from "./pdf/process-pdf.ts";
import { processImage } from "./image/process-image.ts";

/** Registry key: the `kind` of a {@link Detection} that has a processor. */
export type ProcessorKind = NonNullable<Detection["kind"]>;

const registry = new Map<ProcessorKind, Processor>();

/** Register (or replace) the processor for a detected kind. */
export function registerProcessor(kind: ProcessorKind, processor: Processor): void {
  registry.set(kind, processor);
}

/** The processor for a detected kind, or undefined when none is registered. */
export function getProcessor(kind: ProcessorKind): Processor | undefined {
  return registry.get(kind);
}

registerProcessor("pdf", processPdf);
registerProcessor("image", processImage);
