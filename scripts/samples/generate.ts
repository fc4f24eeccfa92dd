/**
 * Builds every sample of {@link SAMPLES} and writes them with MANIFEST.tsv and a README into a folder
 * (`bun run samples` → samples/). Deterministic: the committed samples/ must equal a fresh run byte
 * for byte (checked by test/samples/samples.test.ts) for the sharp/libvips and zlib in bun.lock.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { SAMPLES, sampleLine, type SampleSpec } from "./catalog.ts";
import { formatManifest, type ManifestLine } from "./manifest.ts";

/** A generated sample in memory. */
export interface BuiltSample {
  /** The catalog entry. */
  readonly spec: SampleSpec;
  /** Its manifest row. */
  readonly line: ManifestLine;
  /** The file bytes. */
  readonly bytes: Uint8Array;
}

/** Size budget for the whole samples/ folder, bytes (they are committed to git). */
export const SAMPLES_BUDGET_BYTES = 400 * 1024;

/** Name of the manifest file in the output folder. */
export const MANIFEST_FILE = "MANIFEST.tsv";

/** README written next to the samples (so a stranger's clone explains itself). */
export const SAMPLES_README = `# docket samples (generated)

Small good and bad files for the demo and the tests. Do not edit by hand: run \`bun run samples\`
(\`bun scripts/make-samples.ts [outDir]\`), which rewrites every file here and MANIFEST.tsv.
All content is invented. The format of MANIFEST.tsv is the shared fixtures' one: columns
file, real_type, declared_name_hint, expected (ok|reject), expected_detail (reason first for reject;
facts pages=N, text contains "...", no text layer, width=W, height=H, frames=N for ok), how_made.
Read it with \`parseManifest()\` from scripts/samples/manifest.ts; make inputs on the fly with the
generators exported by scripts/samples/index.ts. test/samples/samples.test.ts checks every fact with
pdf.js and sharp and that this folder equals a fresh generation byte for byte.
`;

/**
 * Generates all samples in memory, in manifest order (one at a time: the bomb alone deflates 112 MB).
 *
 * @returns built samples.
 */
export async function buildSamples(): Promise<BuiltSample[]> {
  const out: BuiltSample[] = [];
  for (const spec of SAMPLES) out.push({ spec, line: sampleLine(spec), bytes: await spec.make() });
  return out;
}

/** What {@link writeSamples} wrote. */
export interface WriteResult {
  /** Absolute or relative folder as given. */
  readonly outDir: string;
  /** Every file written (samples, MANIFEST.tsv, README.md, .gitattributes), names only. */
  readonly files: string[];
  /** Sum of all written bytes. */
  readonly totalBytes: number;
}

/**
 * Writes all samples, MANIFEST.tsv, README.md and a `* -text` .gitattributes into `outDir`
 * (created if missing; other files in it are left alone).
 *
 * @throws Error when the total exceeds {@link SAMPLES_BUDGET_BYTES} (nothing is written then).
 */
export async function writeSamples(outDir: string): Promise<WriteResult> {
  const built = await buildSamples();
  const extra: [string, Uint8Array][] = [
    [MANIFEST_FILE, new TextEncoder().encode(formatManifest(built.map((b) => b.line)))],
    ["README.md", new TextEncoder().encode(SAMPLES_README)],
    // Byte-exact checkouts on any platform (no autocrlf rewriting of the TSV, SVG or text samples).
    [".gitattributes", new TextEncoder().encode("* -text\n")],
  ];
  const all: [string, Uint8Array][] = [...built.map((b): [string, Uint8Array] => [b.spec.file, b.bytes]), ...extra];
  const totalBytes = all.reduce((n, [, bytes]) => n + bytes.length, 0);
  if (totalBytes > SAMPLES_BUDGET_BYTES) throw new Error(`samples total ${totalBytes} bytes, over the ${SAMPLES_BUDGET_BYTES}-byte budget`);
  await mkdir(outDir, { recursive: true });
  for (const [name, bytes] of all) await writeFile(join(outDir, name), bytes);
  return { outDir, files: all.map(([name]) => name), totalBytes };
}
