/**
 * `processFile`: detect by content → refuse what no processor handles → dispatch by
 * kind → add the common facts (type, label, mismatch). Runs inside a warm pool child
 * (processors/pool/jobs.ts, job `process`); callable in-process for tests and tools.
 */
import { stat } from "node:fs/promises";
import { detectFile } from "./detect.ts";
import { declaredAsPdf, findMismatch, mismatchText } from "./mismatch.ts";
import { getProcessor } from "./registry.ts";
import { buildPdfFromParts } from "./parts/build-pdf.ts";
import { parseAction } from "./pdftools/action.ts";
import { runPdfTool } from "./pdftools/run.ts";
import { ProcessingError, type ProcessorOptions, type ProcessorResult } from "./types.ts";

/**
 * Process one downloaded file.
 * @param inputPath absolute path of the source file
 * @param options limits and the attempt's workDir (created by the caller)
 * @returns outputs (files inside workDir) and facts (JSON-safe)
 * @throws ProcessingError `empty` (0 bytes), `not_pdf` (declared as PDF, content is nothing
 *   we process), `unsupported_type` (content we don't process), or whatever the processor
 *   refuses with (`encrypted`, `truncated`, `corrupt`, `too_many_pixels`, `too_many_pages`, …).
 *   With `options.parts` (a multi-part job) the parts become one PDF and `inputPath` is not read.
 *   Fixture README "Reject reasons"; field cases BR-08, BR-21.
 */
export async function processFile(inputPath: string, options: ProcessorOptions): Promise<ProcessorResult> {
  if (options.parts) return buildPdfFromParts(options.parts, options);
  const { size } = await stat(inputPath);
  if (size === 0) throw new ProcessingError("empty", { what: "file" }, "input is 0 bytes");
  const detection = await detectFile(inputPath);
  const tool = parseAction(options.action);
  // An action on a result (issue 15): the tool the job's variant names, not the type's default.
  if (tool) return runPdfTool(inputPath, options, detection, tool);
  const mismatch = findMismatch(detection, options.declaredName, options.declaredMime);
  const processor = detection.kind ? getProcessor(detection.kind) : undefined;
  if (!processor) {
    const params = { ext: detection.ext, label: detection.label };
    const detail = `content is ${detection.label} (${detection.mime})`;
    if (declaredAsPdf(options.declaredName, options.declaredMime)) throw new ProcessingError("not_pdf", params, detail);
    throw new ProcessingError("unsupported_type", params, detail);
  }
  const result = await processor(inputPath, options, detection);
  return {
    outputs: result.outputs,
    facts: {
      ...result.facts,
      type: result.facts.type ?? detection.mime,
      label: result.facts.label ?? detection.label,
      ...(mismatch ? { mismatch: mismatchText(mismatch), mismatchInfo: mismatch } : {}),
    },
  };
}
