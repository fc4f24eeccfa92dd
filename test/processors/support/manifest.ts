/**
 * Parser of ../shared/fixtures/MANIFEST.tsv (columns and vocabulary: fixtures README.md).
 * Each row becomes an expectation; a new row is a new test without code changes.
 */
import { readFileSync } from "node:fs";

/** What a row expects. */
export type Expectation =
  | {
      readonly outcome: "ok";
      readonly pages?: number;
      readonly width?: number;
      readonly height?: number;
      readonly frames?: number;
      readonly textContains: readonly string[];
      readonly noTextLayer: boolean;
    }
  | { readonly outcome: "reject"; readonly reasons: readonly string[] };

/** One manifest row. */
export interface ManifestRow {
  readonly file: string;
  readonly realType: string;
  readonly declaredName: string;
  readonly expected: Expectation;
  readonly detail: string;
}

/** Parse `expected_detail` of a reject row: first word is the reason, aliases from "(alias …)". */
export function parseReject(detail: string): string[] {
  const first = /^\s*([a-z_]+)/.exec(detail)?.[1];
  if (!first) throw new Error(`reject row without a reason: ${detail}`);
  const reasons = new Set([first]);
  for (const m of detail.matchAll(/\(alias:?\s*([a-z_/ ,]+?)(?:\s+acceptable)?\)/g)) {
    for (const a of m[1]!.split(/[/,\s]+/)) if (a) reasons.add(a);
  }
  // README: for not_pdf "an unsupported_type answer is acceptable too".
  if (reasons.has("not_pdf")) reasons.add("unsupported_type");
  return [...reasons];
}

/** Parse `expected_detail` of an ok row into the facts we assert. */
export function parseOk(detail: string): Extract<Expectation, { outcome: "ok" }> {
  const num = (key: string): number | undefined => {
    const m = new RegExp(`(?:^|[;\\s])${key}=(\\d+)`).exec(detail);
    return m ? Number(m[1]) : undefined;
  };
  return {
    outcome: "ok",
    pages: num("pages"),
    width: num("width"),
    height: num("height"),
    frames: num("frames"),
    textContains: [...detail.matchAll(/text contains "([^"]*)"/g)].map((m) => m[1]!),
    noTextLayer: /\bno text layer\b/.test(detail),
  };
}

/** Read and parse the manifest (header row first, tab-separated). */
export function readManifest(path: string): ManifestRow[] {
  const lines = readFileSync(path, "utf8").split(/\r?\n/).filter((l) => l.trim() !== "");
  const header = lines.shift()?.split("\t") ?? [];
  const col = (name: string): number => {
    const i = header.indexOf(name);
    if (i < 0) throw new Error(`MANIFEST.tsv has no column ${name}`);
    return i;
  };
  const [cFile, cType, cName, cExp, cDetail] = ["file", "real_type", "declared_name_hint", "expected", "expected_detail"].map(col);
  return lines.map((line) => {
    const f = line.split("\t");
    const expected = f[cExp!]!.trim();
    const detail = f[cDetail!] ?? "";
    if (expected !== "ok" && expected !== "reject") throw new Error(`unknown expected value ${expected} in ${f[cFile!]}`);
    return {
      file: f[cFile!]!,
      realType: f[cType!]!,
      declaredName: f[cName!]!,
      detail,
      expected: expected === "ok" ? parseOk(detail) : { outcome: "reject", reasons: parseReject(detail) },
    };
  });
}
