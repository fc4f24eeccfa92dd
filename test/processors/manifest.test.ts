/**
 * Table-driven check of every row of ../shared/fixtures/MANIFEST.tsv through processFile
 * (the isolated path is covered by isolate.test.ts on a subset). A new row is a new test.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { processFile } from "../../processors/process-file.ts";
import { ProcessingError, type ProcessorResult } from "../../processors/types.ts";
import { fixturesDir, haveFixtures, noteIfNoFixtures, testOptions } from "./support/fixtures.ts";
import { cleanupWorkDirs, workDir } from "./support/run.ts";
import { parseOk, readManifest, rejectParams, type ManifestRow } from "./support/manifest.ts";

noteIfNoFixtures("manifest");
const rows: ManifestRow[] = haveFixtures ? readManifest(join(fixturesDir, "MANIFEST.tsv")) : [];

/** Extensions a content MIME may legitimately carry (test's own table, not the code's). */
const EXTS: Record<string, string[]> = {
  "application/pdf": ["pdf"],
  "image/jpeg": ["jpg", "jpeg"],
  "image/png": ["png"],
  "image/gif": ["gif"],
  "image/webp": ["webp"],
  "image/tiff": ["tif", "tiff"],
  "image/avif": ["avif"],
  "image/bmp": ["bmp"],
};

afterEach(cleanupWorkDirs);

async function run(row: ManifestRow): Promise<{ result?: ProcessorResult; error?: unknown }> {
  try {
    return { result: await processFile(join(fixturesDir, row.file), testOptions(workDir(), row.declaredName)) };
  } catch (error) {
    return { error };
  }
}

describe("detail parser (runs without the shared folder)", () => {
  test("PDF facts: version, page size in pt or by name, encrypted, linearized", () => {
    expect(parseOk("pages=1; page size 595x842 pt (A4); PDF version 1.5; qpdf --check: no errors", "application/pdf").facts).toEqual({ pdfVersion: "1.5", pageWidthPt: 595, pageHeightPt: 842 });
    expect(parseOk("pages=3; A4; qpdf --check: no errors", "application/pdf").facts).toEqual({ pageWidthPt: 595, pageHeightPt: 842 });
    expect(parseOk("pages=1; no text layer; Letter 612x792 pt", "application/pdf").facts).toEqual({ pageWidthPt: 612, pageHeightPt: 792 });
    expect(parseOk("encrypted AES-256 (R6) with EMPTY user password; PDF version 1.7 (qpdf raised it)", "application/pdf").facts).toEqual({ pdfVersion: "1.7", encrypted: true });
    expect(parseOk("pages=4; linearized (pdfinfo: Optimized: yes)", "application/pdf").facts).toEqual({ linearized: true });
  });

  test("image facts: alpha, channels, space, depth, palette, orientation", () => {
    expect(parseOk("width=480; height=360; JPEG with 4 components, CMYK (Adobe APP14 marker)", "image/jpeg").facts).toEqual({ channels: 4, space: "cmyk" });
    expect(parseOk("PNG 16-bit/color RGB (color type 2, bit depth 16), no alpha", "image/png").facts).toEqual({ depth: "ushort", hasAlpha: false });
    expect(parseOk("frames=3 (3 TIFF directories/pages, 8-bit grayscale, LZW)", "image/tiff").facts).toEqual({ space: "b-w", channels: 1, depth: "uchar" });
    expect(parseOk("stored 640x480 with EXIF Orientation=6, rotate 90 CW", "image/jpeg").facts).toEqual({ exifOrientation: 6 });
  });

  test("reject rows: ext from real_type for content reasons, header size", () => {
    expect(rejectParams("image/heic", "unsupported_type (policy assumption)", ["unsupported_type"])).toEqual({ ext: "heic" });
    expect(rejectParams("image/jpeg", "truncated; header still says 1024x768", ["truncated"])).toEqual({ ext: "jpg", headerSize: [1024, 768] });
    expect(rejectParams("unknown", "empty; 0 bytes", ["empty"])).toEqual({});
    expect(() => rejectParams("model/stl", "unsupported_type", ["unsupported_type"])).toThrow(/real_type model\/stl/);
  });
});

describe.skipIf(!haveFixtures)("MANIFEST.tsv", () => {
  test("has rows of both outcomes", () => {
    expect(rows.filter((r) => r.expected.outcome === "ok").length).toBeGreaterThan(5);
    expect(rows.filter((r) => r.expected.outcome === "reject").length).toBeGreaterThan(5);
  });

  for (const row of rows) {
    const exp = row.expected;
    if (exp.outcome === "reject") {
      test(`${row.file} (as ${row.declaredName}) → reject ${exp.reasons.join("|")}`, async () => {
        const { result, error } = await run(row);
        expect(result, "must be refused").toBeUndefined();
        expect(error).toBeInstanceOf(ProcessingError);
        const { reason, params } = error as ProcessingError;
        expect(exp.reasons).toContain(reason);
        for (const v of Object.values(params)) expect(String(v)).not.toMatch(/\/|root:/);
        // real_type: the refusal names what the content really is (e.g. heic, docx, svg).
        if (exp.ext) expect(params.ext).toBe(exp.ext);
        if (exp.headerSize && reason === "too_many_pixels") expect([params.width, params.height]).toEqual(exp.headerSize);
        if (exp.headerSize && reason === "truncated") expect(params.size).toBe(exp.headerSize.join("×"));
      });
      continue;
    }
    test(`${row.file} (as ${row.declaredName}) → ok ${row.detail.split(";").slice(0, 3).join(";")}`, async () => {
      const { result, error } = await run(row);
      expect(error).toBeUndefined();
      const { facts, outputs } = result!;
      expect(facts.type).toBe(row.realType);
      if (exp.pages !== undefined) expect(facts.pages).toBe(exp.pages);
      if (exp.width !== undefined) expect(facts.width).toBe(exp.width);
      if (exp.height !== undefined) expect(facts.height).toBe(exp.height);
      if (exp.frames !== undefined) expect(facts.frames).toBe(exp.frames);
      // Every further fact the detail states (PDF version, page size in pt, encrypted, linearized,
      // alpha, channels, colour space, depth, palette, EXIF orientation).
      for (const [key, value] of Object.entries(exp.facts)) expect(facts[key], key).toBe(value);
      expect(outputs.length).toBeGreaterThan(0);
      for (const o of outputs) {
        expect(existsSync(o.path)).toBe(true);
        expect(statSync(o.path).size).toBe(o.size);
        expect(o.size).toBeGreaterThan(0);
      }
      const txt = outputs.find((o) => o.mime.startsWith("text/plain"));
      if (exp.textContains.length > 0) {
        expect(txt, "a .txt output").toBeDefined();
        const text = readFileSync(txt!.path, "utf8");
        for (const needle of exp.textContains) expect(text).toContain(needle);
      }
      if (exp.noTextLayer) {
        expect(facts.textChars).toBe(0);
        expect(txt).toBeUndefined();
      }
      const declaredExt = row.declaredName.split(".").pop()!.toLowerCase();
      const legit = EXTS[row.realType];
      if (legit && !legit.includes(declaredExt)) {
        expect(facts.mismatchInfo?.declaredExt).toBe(declaredExt);
        expect(legit).toContain(facts.mismatchInfo?.actualExt);
      } else {
        expect(facts.mismatchInfo).toBeUndefined();
      }
    });
  }
});
