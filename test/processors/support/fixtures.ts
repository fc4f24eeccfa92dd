/**
 * Shared fixtures (../shared/fixtures, relative to the repo root) and per-test work dirs.
 * Suites that need the shared folder skip with a printed note when it is absent (common rules).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { afterEach, beforeEach } from "vitest";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { ProcessorOptions } from "../../../processors/types.ts";

/** Repository root (three levels above this file). */
export const repoRoot = resolve(fileURLToPath(new URL("../../../", import.meta.url)));
/** The shared fixture folder. */
export const fixturesDir = resolve(repoRoot, "../shared/fixtures");
/** True when the shared fixtures and their manifest are present. */
export const haveFixtures = existsSync(join(fixturesDir, "MANIFEST.tsv"));

/** Print the skip note once per suite when the shared fixtures are missing. */
export function noteIfNoFixtures(suite: string): void {
  if (!haveFixtures) console.log(`[${suite}] skipped: ${fixturesDir} is absent`);
}

/** Limits used by the tests (the 30000×30000 bomb is far over; a 12 MP photo passes). */
export const TEST_LIMITS = {
  maxInputPixels: 50_000_000,
  maxOutputSide: 2560,
  maxPdfPages: 1000,
  pdfPageBudgetMs: 10_000,
} as const;

/** A fresh work dir under the OS temp dir; removed by the returned cleanup. */
export function makeWorkDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "docket-proc-test-"));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Processor options for a test: the test limits, a work dir, and the declared name. */
export function testOptions(workDir: string, declaredName?: string | null, extra: Partial<ProcessorOptions> = {}): ProcessorOptions {
  return { workDir, declaredName: declaredName ?? null, ...TEST_LIMITS, ...extra };
}

/**
 * A fresh work dir per test (beforeEach/afterEach): `dir()` is the current one, `put(name, bytes)` writes
 * an input file into it and returns its path.
 */
export function useWorkDir(): { dir(): string; put(name: string, bytes: Uint8Array | string): string } {
  let made: ReturnType<typeof makeWorkDir> | null = null;
  beforeEach(() => void (made = makeWorkDir()));
  afterEach(() => made?.cleanup());
  return {
    dir: () => made!.dir,
    put: (name, bytes) => {
      const path = join(made!.dir, name);
      writeFileSync(path, bytes);
      return path;
    },
  };
}
