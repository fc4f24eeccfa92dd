/**
 * A ProcessRunner for tests of the download and delivery paths: it copies the
 * source into the work dir as the single output and reports its size and SHA-256
 * as facts, so those tests do not depend on the PDF/image processors.
 */
import { createHash } from "node:crypto";
import { copyFile, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import type { ProcessRunner } from "../../bot/worker/types.ts";
import type { ProcessorOptions } from "../../processors/types.ts";

/** Copying runner; `calls` counts invocations. */
export function copyRunner(): ProcessRunner & { calls: number } {
  const run = (async (input: string, options: ProcessorOptions) => {
    run.calls++;
    const out = join(options.workDir, "copy.bin");
    await copyFile(input, out);
    const size = (await stat(out)).size;
    const sha = createHash("sha256").update(await readFile(out)).digest("hex");
    return { outputs: [{ path: out, fileName: "copy.bin", mime: "application/octet-stream", size }], facts: { type: "application/octet-stream", label: "file", size, sha256: sha } };
  }) as unknown as ProcessRunner & { calls: number };
  run.calls = 0;
  return run;
}
