/**
 * Dispatch of the PDF tools (issue 15): a job whose variant names an action (processors/pdftools/action.ts)
 * runs that tool on its source instead of the type's default processor. Runs in the pool child, like
 * every processor (CONTRACTS.md §8).
 */
import { buildPdfFromParts } from "../parts/build-pdf.ts";
import { formatRanges } from "../page-ranges.ts";
import { ProcessingError, type Detection, type ProcessorOptions, type ProcessorResult } from "../types.ts";
import type { PdfToolAction } from "./action.ts";
import { compressPdf } from "./compress.ts";
import { extractPdf, rotatePdf, splitPdf } from "./pages.ts";

/**
 * Run `action` on the file at `inputPath` (detected as `detection`).
 * @throws ProcessingError `unsupported_type` when the action does not fit the file (a PDF tool on an
 *   image, "to PDF" on a PDF), and whatever the tool refuses with (`encrypted`, `corrupt`, `empty`, …)
 */
export async function runPdfTool(inputPath: string, options: ProcessorOptions, detection: Detection, action: PdfToolAction): Promise<ProcessorResult> {
  if (action.tool === "topdf") {
    if (detection.kind !== "image") throw new ProcessingError("unsupported_type", { ext: detection.ext, label: detection.label }, `"to PDF" on ${detection.label}`);
    return buildPdfFromParts([{ path: inputPath, name: options.declaredName ?? null, n: 1 }], options);
  }
  if (detection.kind !== "pdf") throw new ProcessingError("not_pdf", { ext: detection.ext, label: detection.label }, `${action.tool} on ${detection.label}`);
  switch (action.tool) {
    case "rotate":
      return rotatePdf(inputPath, options, action.degrees, action.ranges);
    case "extract":
      return extractPdf(inputPath, options, action.ranges, formatRanges(action.ranges));
    case "split":
      return splitPdf(inputPath, options, action.ranges);
    case "compress":
      return compressPdf(inputPath, options, action.level);
  }
}
