/**
 * pdf-lib's load and save options for a pool child, shared by every processor that opens a user's PDF
 * with pdf-lib (the PDF tools, processors/pdftools/load.ts; the searchable PDF, processors/ocr/searchable.ts).
 */
import { ParseSpeeds } from "@cantoo/pdf-lib";

/**
 * pdf-lib's load options for a pool child. pdf-lib yields to the event loop (a `setTimeout(0)`) every
 * 100 parsed objects (ParseSpeeds.Slow, its default) and every 50 written ones, to keep a browser
 * responsive; a pool child runs one job at a time and answers nobody meanwhile, so each yield is only a
 * wait for the scheduler — on a loaded machine most of rotate's time (bench/processors/rotate-phases.ts:
 * the 200-page save took 29 ms with yields, 8 ms without; docs/benchmarks.md "PDF tools").
 * `updateMetadata: false`: the user's Producer / ModDate are kept as they are.
 */
export const PDF_LIB_LOAD = { parseSpeed: ParseSpeeds.Fastest, updateMetadata: false } as const;
/** See {@link PDF_LIB_LOAD}; object streams keep the output small (the dictionaries are compressed). */
export const PDF_LIB_SAVE = { useObjectStreams: true, objectsPerTick: Number.POSITIVE_INFINITY } as const;
