/**
 * Shared test helpers: process bytes in a fresh work dir, and expect a refusal.
 * Work dirs made here are removed by {@link cleanupWorkDirs} (call it in afterEach).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { processFile } from "../../../processors/process-file.ts";
import { ProcessingError, type ProcessorOptions, type ProcessorResult } from "../../../processors/types.ts";
import { makeWorkDir, testOptions } from "./fixtures.ts";

const pending: (() => void)[] = [];

/** Remove the work dirs made since the last call. */
export function cleanupWorkDirs(): void {
  for (const c of pending.splice(0)) c();
}

/** A fresh work dir under the OS temp dir, removed by the next {@link cleanupWorkDirs}. */
export function workDir(): string {
  const work = makeWorkDir();
  pending.push(work.cleanup);
  return work.dir;
}

/** Write `bytes` into a fresh work dir (generated name `source.bin`) and return both paths. */
export function writeInput(bytes: Uint8Array): { path: string; dir: string } {
  const dir = workDir();
  const path = join(dir, "source.bin");
  writeFileSync(path, bytes);
  return { path, dir };
}

/** processFile on `bytes` declared as `declaredName`, with the test limits plus `extra`. */
export async function processBytes(bytes: Uint8Array, declaredName: string | null, extra: Partial<ProcessorOptions> = {}): Promise<ProcessorResult> {
  const { path, dir } = writeInput(bytes);
  return processFile(path, testOptions(dir, declaredName, extra));
}

/** Await a promise that must reject with a ProcessingError, and return that error. */
export async function refused(p: Promise<unknown>): Promise<ProcessingError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProcessingError);
  return err as ProcessingError;
}
