/**
 * Table-driven check of every row of ../shared/fixtures/MANIFEST.tsv through processFile
 * (the isolated path is covered by isolate.test.ts on a subset). A new row is a new test.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { processFile } from "../../processors/process-file.ts";
import { ProcessingError, type ProcessorResult } from "../../processors/types.ts";
import { fixturesDir, haveFixtures, makeWorkDir, noteIfNoFixtures, testOptions } from "./support/fixtures.ts";
import { readManifest, type ManifestRow } from "./support/manifest.ts";

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

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function run(row: ManifestRow): Promise<{ result?: ProcessorResult; error?: unknown }> {
  const work = makeWorkDir();
  cleanups.push(work.cleanup);
  try {
    return { result: await processFile(join(fixturesDir, row.file), testOptions(work.dir, row.declaredName)) };
  } catch (error) {
    return { error };
  }
}

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
        expect(exp.reasons).toContain((error as ProcessingError).reason);
        for (const v of Object.values((error as ProcessingError).params)) expect(String(v)).not.toMatch(/\/|root:/);
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
