/**
 * Reads and writes MANIFEST.tsv in the shared fixtures' format (../shared/fixtures/README.md):
 * a header row, then one tab-separated row per file with the columns
 * `file, real_type, declared_name_hint, expected, expected_detail, how_made`.
 * `expected_detail` is `;`-separated: for `reject` the first word is the reason; for `ok` the facts
 * `pages=N`, `text contains "..."`, `no text layer`, `width=W; height=H`, `frames=N`, plus notes.
 */
import { readFileSync } from "node:fs";
import type { ReasonCode } from "../../bot/jobs/reasons.ts";

/** The manifest's columns, in order (shared fixtures README, "Columns"). */
export const MANIFEST_COLUMNS = ["file", "real_type", "declared_name_hint", "expected", "expected_detail", "how_made"] as const;

/** Reject reasons a manifest may name (shared fixtures README, "Reject reasons"); a subset of bot/jobs/reasons.ts. */
export const MANIFEST_REASONS = ["not_pdf", "unsupported_type", "encrypted", "truncated", "corrupt", "too_many_pixels", "empty"] as const satisfies readonly ReasonCode[];

/** One of {@link MANIFEST_REASONS}. */
export type ManifestReason = (typeof MANIFEST_REASONS)[number];

/** Facts an `ok` row promises (as displayed: after EXIF orientation, first frame). */
export interface SampleFacts {
  /** PDF page count (`pages=N`). */
  pages?: number;
  /** Displayed width in pixels (`width=W`). */
  width?: number;
  /** Displayed height in pixels (`height=H`). */
  height?: number;
  /** Animation frames or image pages (`frames=N`). */
  frames?: number;
  /** Strings the extracted text must contain (`text contains "..."`), in manifest order. */
  textContains: string[];
  /** The PDF has no text layer (`no text layer`). */
  noText?: boolean;
}

/** One parsed MANIFEST.tsv row. */
export interface ManifestRow {
  /** File name inside the manifest's folder. */
  file: string;
  /** MIME type by content, or `unknown`. */
  realType: string;
  /** Name to upload the bytes under (sometimes misleading on purpose). */
  declaredName: string;
  /** `ok` = processed; `reject` = refused with a clear reason. */
  expected: "ok" | "reject";
  /** For `reject`: the reason (first word of the detail). */
  reason?: ManifestReason;
  /** For `reject`: other reasons the row accepts, from `(alias X)` / `(alias: X/Y acceptable)`. */
  aliases: ManifestReason[];
  /** Facts parsed from the detail (also filled for `reject` rows when the detail states them). */
  facts: SampleFacts;
  /** The raw `expected_detail` text. */
  detail: string;
  /** The raw `how_made` text. */
  howMade: string;
}

/** Narrows a string to a {@link ManifestReason} (e.g. a job's reason before comparing with a row's). */
export function isManifestReason(word: string): word is ManifestReason {
  return (MANIFEST_REASONS as readonly string[]).includes(word);
}

/**
 * Parses the facts out of an `expected_detail` string (whole-string patterns, so notes between
 * facts are ignored).
 */
export function parseDetail(detail: string): SampleFacts {
  const num = (key: string) => {
    const m = new RegExp(`(?:^|[\\s;(])${key}=(\\d+)\\b`).exec(detail);
    return m ? Number(m[1]) : undefined;
  };
  const facts: SampleFacts = { textContains: [...detail.matchAll(/text contains "([^"]*)"/g)].map((m) => m[1]!) };
  const pages = num("pages");
  const width = num("width");
  const height = num("height");
  const frames = num("frames");
  if (pages !== undefined) facts.pages = pages;
  if (width !== undefined) facts.width = width;
  if (height !== undefined) facts.height = height;
  if (frames !== undefined) facts.frames = frames;
  if (/\bno text layer\b/.test(detail)) facts.noText = true;
  return facts;
}

/**
 * Parses MANIFEST.tsv text.
 *
 * @param text - the file's contents (UTF-8, `\n` or `\r\n` line ends; blank lines ignored).
 * @param source - name used in error messages.
 * @returns the rows in file order.
 * @throws Error naming the line when the header differs from {@link MANIFEST_COLUMNS}, a row has
 *   the wrong number of fields, `expected` is not ok/reject, or a reject row's reason is not in
 *   {@link MANIFEST_REASONS}.
 */
export function parseManifestText(text: string, source = "MANIFEST.tsv"): ManifestRow[] {
  const lines = text.split(/\r?\n/);
  const header = lines[0] ?? "";
  if (header !== MANIFEST_COLUMNS.join("\t")) throw new Error(`${source}:1: header must be ${MANIFEST_COLUMNS.join(",")}, got ${JSON.stringify(header)}`);
  const rows: ManifestRow[] = [];
  lines.slice(1).forEach((line, i) => {
    if (line.trim() === "") return;
    const where = `${source}:${i + 2}`;
    const fields = line.split("\t");
    if (fields.length !== MANIFEST_COLUMNS.length) throw new Error(`${where}: ${fields.length} fields, expected ${MANIFEST_COLUMNS.length}`);
    const [file, realType, declaredName, expected, detail, howMade] = fields as [string, string, string, string, string, string];
    if (expected !== "ok" && expected !== "reject") throw new Error(`${where}: expected must be ok or reject, got ${JSON.stringify(expected)}`);
    const row: ManifestRow = { file, realType, declaredName, expected, aliases: [], facts: parseDetail(detail), detail, howMade };
    if (expected === "reject") {
      const word = /^[a-z_]+/.exec(detail)?.[0] ?? "";
      if (!isManifestReason(word)) throw new Error(`${where}: reject reason ${JSON.stringify(word)} is not one of ${MANIFEST_REASONS.join(", ")}`);
      row.reason = word;
      const alias = /\(alias:?\s*([^)]*)\)/.exec(detail)?.[1] ?? "";
      const words: string[] = alias.match(/[a-z_]+/g) ?? [];
      row.aliases = words.filter((w): w is ManifestReason => isManifestReason(w) && w !== word);
    }
    rows.push(row);
  });
  return rows;
}

/**
 * Reads and parses a MANIFEST.tsv file (synchronously, so test files can build `describe.each` tables).
 *
 * @param path - path to the TSV file.
 * @throws Error from {@link parseManifestText}, or the fs error when the file can't be read.
 */
export function parseManifest(path: string): ManifestRow[] {
  return parseManifestText(readFileSync(path, "utf8"), path);
}

/** The six column values of one manifest row, as written. */
export interface ManifestLine {
  readonly file: string;
  readonly realType: string;
  readonly declaredName: string;
  readonly expected: "ok" | "reject";
  readonly detail: string;
  readonly howMade: string;
}

/**
 * Serializes rows to MANIFEST.tsv text (header, one line per row, trailing newline).
 *
 * @throws Error when a value contains a tab or a line break (the format has no escaping).
 */
export function formatManifest(rows: readonly ManifestLine[]): string {
  const lines = [MANIFEST_COLUMNS.join("\t")];
  for (const r of rows) {
    const fields = [r.file, r.realType, r.declaredName, r.expected, r.detail, r.howMade];
    for (const f of fields) if (/[\t\r\n]/.test(f)) throw new Error(`formatManifest: ${r.file}: a value contains a tab or line break`);
    lines.push(fields.join("\t"));
  }
  return lines.join("\n") + "\n";
}
