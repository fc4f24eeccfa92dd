/**
 * Hostile PDFs from the audit of issue 5 (gaps 1, 2, 4), made at test time by
 * scripts/samples/hostile.ts: a broken page tree is `corrupt` (not a crash), a valid 600 MB PDF
 * is processed under a 1024 MB memory cap, a flate bomb is final `too_much_memory`, an image
 * bomb is skipped by pdf.js's image-size limit, and the retry policy of processor failures.
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, test } from "vitest";
import { processFile } from "../../processors/process-file.ts";
import { isRetryableProcessingFailure } from "../../processors/retry-policy.ts";
import { ProcessingError } from "../../processors/types.ts";
import { makeBrokenTreePdf, makeFlateBombPdf, writeSparsePdf } from "../../scripts/samples/index.ts";
import { testOptions } from "./support/fixtures.ts";
import { cleanupWorkDirs, refused, workDir, writeInput } from "./support/run.ts";
import { closeTestPool, testPool } from "../support/pool.ts";

afterEach(cleanupWorkDirs);
afterAll(closeTestPool);

describe("gap 1: a page tree that breaks after the open", () => {
  test.each(["missing-kid", "kids-loop"] as const)("%s → corrupt {ext pdf, label, size none}, not a crash", async (kind) => {
    const { dir, path } = writeInput(makeBrokenTreePdf(kind));
    const err = await refused(processFile(path, testOptions(dir, "statement.pdf")));
    expect(err.reason).toBe("corrupt");
    expect(err.params).toEqual({ ext: "pdf", label: "PDF document", size: "none" });
    expect(err.message).toMatch(/kid reference|circular reference/);
    expect(isRetryableProcessingFailure(err, 1)).toBe(false);
  });
});

describe("gap 2: a valid PDF far bigger than the memory cap's share", () => {
  test("600 MB (1 text page + an unreferenced zero stream, sparse) → ready under memoryMb 1024", async () => {
    const dir = workDir();
    const path = join(dir, "big.pdf");
    try {
      const size = await writeSparsePdf(path, 600 * 2 ** 20);
      expect(size).toBeGreaterThan(600 * 2 ** 20);
      const r = await testPool().process(path, testOptions(dir, "big.pdf"), { timeoutMs: 60_000, memoryMb: 1024 });
      expect(r.facts.pages).toBe(1);
      const txt = r.outputs.find((o) => o.mime.startsWith("text/plain"));
      expect(readFileSync(txt!.path, "utf8")).toContain("Big file");
    } finally {
      rmSync(path, { force: true });
    }
  }, 60_000);
});

describe("gap 4: bombs are final, and pdf.js's image size is limited", () => {
  test("content stream inflating to 600 MB under a 400 MB cap → too_much_memory {limit_mb}, not retried", async () => {
    const { dir, path } = writeInput(makeFlateBombPdf("content", 600e6));
    const err = await refused(testPool().process(path, testOptions(dir, "bomb.pdf"), { timeoutMs: 60_000, memoryMb: 400 }));
    expect(err.reason).toBe("too_much_memory");
    expect(err.params).toEqual({ limit_mb: 400 });
    expect(isRetryableProcessingFailure(err, 1)).toBe(false);
  }, 60_000);

  test("a 12000×12000 RGB image XObject (432 MB raw) over maxInputPixels is not decoded → ready under 400 MB", async () => {
    const { dir, path } = writeInput(makeFlateBombPdf("image", 432e6));
    const r = await testPool().process(path, testOptions(dir, "scan.pdf"), { timeoutMs: 60_000, memoryMb: 400 });
    expect(r.facts.pages).toBe(1);
    expect(r.outputs.some((o) => o.mime === "image/jpeg")).toBe(true);
  }, 60_000);

  test("retry policy: wall clock retried once, page budget and content reasons never, other crashes yes", () => {
    const wall = new ProcessingError("processing_timeout", { seconds: 120 });
    expect(isRetryableProcessingFailure(wall, 1)).toBe(true);
    expect(isRetryableProcessingFailure(wall, 2)).toBe(false);
    expect(isRetryableProcessingFailure(new ProcessingError("processing_timeout", { seconds: 10, page: 3 }), 1)).toBe(false);
    expect(isRetryableProcessingFailure(new ProcessingError("processing_crashed", {}), 2)).toBe(true);
    expect(isRetryableProcessingFailure(new ProcessingError("too_much_memory", { limit_mb: 1024 }), 1)).toBe(false);
    expect(isRetryableProcessingFailure(new ProcessingError("corrupt", { ext: "pdf", label: "PDF document", size: "none" }), 1)).toBe(false);
  });
});
