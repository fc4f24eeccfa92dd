/**
 * `bun run samples` = `bun scripts/make-samples.ts [outDir]`: writes docket's own sample files,
 * MANIFEST.tsv, README.md and .gitattributes into outDir (default samples/ at the repo root), deterministically.
 * Exit 0 on success; 1 with a message on failure (e.g. over the size budget).
 */
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { writeSamples } from "./samples/generate.ts";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const outDir = resolve(process.argv[2] ?? resolve(repoRoot, "samples"));

try {
  const result = await writeSamples(outDir);
  console.log(`wrote ${result.files.length} files, ${result.totalBytes} bytes, to ${result.outDir}`);
} catch (err) {
  console.error(`make-samples: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
