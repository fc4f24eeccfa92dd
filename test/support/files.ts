/**
 * Test files made on the fly that the sample generator does not cover.
 */
import { truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** A sparse file of `size` bytes in `dir` (no real disk use; the emulator never reads it whole). */
export function sparseFile(dir: string, size: number, name = `sparse-${size}.bin`): string {
  const path = join(dir, name);
  writeFileSync(path, "");
  truncateSync(path, size);
  return path;
}
