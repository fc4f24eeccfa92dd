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
      /** Every further fact the detail states, as the processor's fact keys and values (see {@link statedFacts}). */
      readonly facts: Readonly<Record<string, string | number | boolean>>;
    }
  | {
      readonly outcome: "reject";
      readonly reasons: readonly string[];
      /** `params.ext` the refusal must carry (from `real_type`), when the reason names the content. */
      readonly ext?: string;
      /** "header (still) says WxH": `too_many_pixels` params width/height, `truncated` params size. */
      readonly headerSize?: readonly [number, number];
    };

/** One manifest row. */
export interface ManifestRow {
  readonly file: string;
  readonly realType: string;
  readonly declaredName: string;
  readonly expected: Expectation;
  readonly detail: string;
}

/** Named page sizes in the details, in pt (ISO 216 A-series rounded as pdf.js reports them; US Letter). */
const PAGE_SIZES: Record<string, readonly [number, number]> = { A4: [595, 842], A5: [420, 595], A6: [298, 420], Letter: [612, 792] };

/**
 * Facts an `ok` row's detail states beyond pages/size/frames/text, mapped to processor fact keys:
 * PDF — `PDF version X.Y` → pdfVersion, `WxH pt` or A4/A5/A6/Letter → pageWidthPt/pageHeightPt,
 * `encrypted` → encrypted true, `linearized` → linearized true; images — `RGBA` → hasAlpha true,
 * `no alpha` → false, `N components` → channels, `CMYK`/`sRGB`/`grayscale` → space (cmyk/srgb/b-w,
 * grayscale also channels 1), `16-bit`/`8-bit` → depth (ushort/uchar), `palette` → palette true,
 * `Orientation=N` → exifOrientation.
 */
export function statedFacts(realType: string, detail: string): Record<string, string | number | boolean> {
  const f: Record<string, string | number | boolean> = {};
  if (realType === "application/pdf") {
    const version = /PDF version (\d\.\d)/.exec(detail)?.[1];
    if (version) f.pdfVersion = version;
    const pt = /(\d+)x(\d+) pt\b/.exec(detail);
    const named = /\b(A4|A5|A6|Letter)\b/.exec(detail)?.[1];
    const size = pt ? [Number(pt[1]), Number(pt[2])] : named ? PAGE_SIZES[named] : undefined;
    if (size) [f.pageWidthPt, f.pageHeightPt] = size;
    if (/\bencrypted\b/i.test(detail)) f.encrypted = true;
    if (/\blinearized\b/i.test(detail)) f.linearized = true;
  } else if (realType.startsWith("image/")) {
    if (/\bRGBA\b/.test(detail)) f.hasAlpha = true;
    if (/\bno alpha\b/.test(detail)) f.hasAlpha = false;
    const components = /\b(\d) components\b/.exec(detail)?.[1];
    if (components) f.channels = Number(components);
    if (/\bCMYK\b/.test(detail)) f.space = "cmyk";
    else if (/\bsRGB\b/.test(detail)) f.space = "srgb";
    if (/\bgrayscale\b/i.test(detail)) [f.space, f.channels] = ["b-w", 1];
    if (/\b16-bit\b/.test(detail)) f.depth = "ushort";
    else if (/\b8-bit\b/.test(detail)) f.depth = "uchar";
    if (/\bpalette\b/i.test(detail)) f.palette = true;
    const orientation = /\bOrientation=(\d)/.exec(detail)?.[1];
    if (orientation) f.exifOrientation = Number(orientation);
  }
  return f;
}

/** Extension a refusal names for a `real_type` (fixture README: MIME by content; `unknown` → bin). */
const REAL_TYPE_EXT: Record<string, string> = {
  "application/pdf": "pdf",
  "image/jpeg": "jpg",
  "image/png": "png",
  "image/svg+xml": "svg",
  "image/heic": "heic",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
  "text/plain": "txt",
  unknown: "bin",
};
/** Reasons whose params name the content (`ext`, `label`). */
const CONTENT_REASONS = new Set(["not_pdf", "unsupported_type", "truncated", "corrupt"]);

/**
 * What a reject row requires beyond its reason: `params.ext` from `real_type` (for reasons that
 * name the content; a real_type without an entry here fails loudly, so a new type is noticed),
 * and the header size when the detail says "header (still) says WxH".
 */
export function rejectParams(realType: string, detail: string, reasons: readonly string[]): { ext?: string; headerSize?: readonly [number, number] } {
  const out: { ext?: string; headerSize?: readonly [number, number] } = {};
  if (reasons.some((r) => CONTENT_REASONS.has(r)) && !(realType === "unknown" && reasons.includes("empty"))) {
    const ext = REAL_TYPE_EXT[realType];
    if (!ext) throw new Error(`no extension known for real_type ${realType}`);
    out.ext = ext;
  }
  const header = /header (?:still )?says (\d+)x(\d+)/.exec(detail);
  if (header) out.headerSize = [Number(header[1]), Number(header[2])];
  return out;
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
export function parseOk(detail: string, realType = ""): Extract<Expectation, { outcome: "ok" }> {
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
    facts: statedFacts(realType, detail),
  };
}

/** The expectation of a reject row: reasons, plus the params its real_type and detail require. */
function rejectExpectation(realType: string, detail: string): Extract<Expectation, { outcome: "reject" }> {
  const reasons = parseReject(detail);
  return { outcome: "reject", reasons, ...rejectParams(realType, detail, reasons) };
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
      expected: expected === "ok" ? parseOk(detail, f[cType!]!) : rejectExpectation(f[cType!]!, detail),
    };
  });
}
