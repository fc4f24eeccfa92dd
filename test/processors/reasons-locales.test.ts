/**
 * bot/locales/{ru,en}/reasons.ftl: a message for every reason code, formatted without
 * Fluent errors both with sample params and with the params real processor refusals carry.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FluentBundle, FluentResource } from "@fluent/bundle";
import sharp from "sharp";
import { afterAll, describe, expect, test } from "vitest";
import { REASON_CODES, type ReasonCode } from "../../bot/jobs/reasons.ts";
import { reasonScope } from "../../bot/status/texts.ts";
import { makePdf, textShowOps } from "../../scripts/samples/index.ts";
import { processFile } from "../../processors/process-file.ts";
import { ProcessingError } from "../../processors/types.ts";
import { makeWorkDir, repoRoot, testOptions } from "./support/fixtures.ts";
import { bombPng } from "./support/images.ts";
import { refused } from "./support/run.ts";

function bundle(lang: "ru" | "en"): FluentBundle {
  const b = new FluentBundle(lang, { useIsolating: false });
  const errors = b.addResource(new FluentResource(readFileSync(join(repoRoot, `bot/locales/${lang}/reasons.ftl`), "utf8")));
  expect(errors).toEqual([]);
  return b;
}

function format(b: FluentBundle, code: string, params: Record<string, string | number>): string {
  const msg = b.getMessage(`reason-${code}`);
  expect(msg?.value, `reason-${code}`).toBeTruthy();
  const errors: Error[] = [];
  const text = b.formatPattern(msg!.value!, { scope: reasonScope(params), ...params }, errors);
  expect(errors.map(String)).toEqual([]);
  return text;
}

/** Params as the messages receive them (processors, bot/fetch, bot/worker; `*_bytes` already turned into sizes by bot/status/texts.ts). */
const SAMPLES: Record<ReasonCode, Record<string, string | number>> = {
  too_big: { size: 25, limit: 20 },
  size_mismatch: { size: "59 KB", declared: "1 KB" },
  file_unavailable: {},
  file_not_readable: {},
  download_failed: {},
  empty: { what: "file" },
  not_pdf: { ext: "docx", label: "Word document" },
  unsupported_type: { ext: "heic", label: "HEIC image" },
  encrypted: {},
  truncated: { ext: "jpg", label: "JPEG image", size: "800×600" },
  corrupt: { ext: "pdf", label: "PDF document", size: "none" },
  too_many_pixels: { width: 30000, height: 30000, megapixels: 900, limit: 100 },
  too_many_pages: { pages: 1200, limit: 1000 },
  pdf_engine_unavailable: {},
  processing_timeout: { seconds: 120 },
  processing_crashed: {},
  too_much_memory: { limit_mb: 1024 },
  result_too_big: { size: "52.4 MB", limit: "50 MB" },
  delivery_failed: {},
  cancelled: {},
  daily_quota: { used: 2048, limit: 2048 },
  attempts_exhausted: {},
};

describe.each(["ru", "en"] as const)("reasons.ftl (%s)", (lang) => {
  const b = bundle(lang);
  test.each([...REASON_CODES])("reason-%s formats with its params", (code) => {
    const text = format(b, code, SAMPLES[code]);
    expect(text.length).toBeGreaterThan(5);
    expect(text).not.toMatch(/[{}]/);
  });
});

describe("field-case wording", () => {
  const en = bundle("en");
  const ru = bundle("ru");
  test("BR-14, BR-15, BR-21, BR-09 texts", () => {
    expect(format(en, "too_many_pixels", SAMPLES.too_many_pixels)).toBe("The image is 30000×30000 (900 MP); the limit is 100 MP.");
    expect(format(en, "truncated", SAMPLES.truncated)).toContain("cut off or damaged (JPEG 800×600)");
    expect(format(en, "not_pdf", SAMPLES.not_pdf)).toBe("Word files aren’t supported; send a PDF.");
    expect(format(en, "unsupported_type", SAMPLES.unsupported_type)).toBe("HEIC isn’t supported; send JPEG or PNG.");
    expect(format(en, "encrypted", {})).toContain("password-protected");
    expect(format(ru, "too_many_pages", { pages: 102, limit: 100 })).toContain("102 страницы");
    expect(format(ru, "too_many_pixels", SAMPLES.too_many_pixels)).toContain("30000×30000");
  });
});

describe("params of real refusals format in both languages", () => {
  const work = makeWorkDir();
  afterAll(work.cleanup);
  const cases: [string, () => Promise<Uint8Array>, string][] = [
    ["bomb.png", async () => bombPng(20000), "too_many_pixels"],
    ["cut.jpg", async () => {
      const j = await sharp({ create: { width: 300, height: 200, channels: 3, background: "#777", noise: { type: "gaussian", mean: 100, sigma: 30 } } }).jpeg().toBuffer();
      return j.subarray(0, j.length / 2);
    }, "truncated"],
    ["cut.pdf", async () => makePdf({ pages: [["a"], ["b"], ["c"]] }).subarray(0, 300), "truncated"],
    ["zero.pdf", async () => makePdf({ pages: [] }), "empty"],
    ["empty.pdf", async () => new Uint8Array(0), "empty"],
    ["note.pdf", async () => new TextEncoder().encode("just text"), "not_pdf"],
    ["logo.svg", async () => new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"/>'), "unsupported_type"],
    ["big.pdf", async () => makePdf({ pages: [["1"], ["2"]] }), "too_many_pages"],
  ];
  test.each(cases)("%s", async (name, make, reason) => {
    const path = join(work.dir, name);
    writeFileSync(path, await make());
    const err = await processFile(path, testOptions(work.dir, name, { maxPdfPages: 1 })).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ProcessingError);
    expect((err as ProcessingError).reason).toBe(reason);
    for (const lang of ["ru", "en"] as const) format(bundle(lang), reason, (err as ProcessingError).params);
  });

  test("a PDF page over its budget (processing_timeout with `page`)", async () => {
    const path = join(work.dir, "heavy.pdf");
    writeFileSync(path, makePdf({ pages: [["light"], ["heavy"]], contents: [null, textShowOps(5_000_000)] }));
    const err = await refused(processFile(path, testOptions(work.dir, "heavy.pdf", { pdfPageBudgetMs: 1000 })));
    expect([err.reason, err.params]).toEqual(["processing_timeout", { seconds: 1, page: 2 }]);
    expect(format(bundle("en"), err.reason, err.params)).toContain("Page 2 took longer than 1 s");
    expect(format(bundle("ru"), err.reason, err.params)).toContain("Страница 2 обрабатывалась дольше 1 с");
    // The wall-clock timeout (no page) keeps the whole-file wording.
    expect(format(bundle("en"), "processing_timeout", { seconds: 120 })).toBe("Processing took longer than 120 s and was stopped. The file may be too complex.");
  }, 60_000);
});
