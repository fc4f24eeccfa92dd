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

/**
 * Copying runner; `calls` counts invocations. `outputs` (default 1) copies of the source are the
 * results (`copy.bin`, then `copy-2.bin`, …), like a PDF's text + preview when 2.
 */
export function copyRunner(opts: { outputs?: number } = {}): ProcessRunner & { calls: number } {
  const count = opts.outputs ?? 1;
  const run = (async (input: string, options: ProcessorOptions) => {
    run.calls++;
    const outputs = [];
    let sha = "";
    let size = 0;
    for (let i = 1; i <= count; i++) {
      const fileName = i === 1 ? "copy.bin" : `copy-${i}.bin`;
      const out = join(options.workDir, fileName);
      await copyFile(input, out);
      size = (await stat(out)).size;
      sha = createHash("sha256").update(await readFile(out)).digest("hex");
      outputs.push({ path: out, fileName, mime: "application/octet-stream", size });
    }
    return { outputs, facts: { type: "application/octet-stream", label: "file", size, sha256: sha } };
  }) as unknown as ProcessRunner & { calls: number };
  run.calls = 0;
  return run;
}
