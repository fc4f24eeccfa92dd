/**
 * OCR options for processor tests (processors/ocr/types.ts): the defaults of bot/config.ts except
 * generous budgets, so a loaded 2-core runner never makes a page miss its budget by accident.
 * Tests of the limits set their own.
 */
import type { OcrOptions } from "../../../processors/ocr/types.ts";

/** OCR options for a test, `extra` overriding. */
export function testOcr(extra: Partial<OcrOptions> = {}): OcrOptions {
  return { languages: "rus+eng", dpi: 300, maxPages: 500, pageBudgetMs: 120_000, totalMs: 600_000, concurrency: 2, searchableMaxBytes: 50 * 2 ** 20, ...extra };
}
