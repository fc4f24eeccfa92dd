/**
 * Declared-vs-actual type comparison (field case BR-21: "sent as .pdf but is a PNG").
 * The declared name and MIME are hints only; this turns a disagreement into a
 * structured fact the bot can localize (`facts-mismatch` in bot/locales/<lang>/facts.ftl).
 */
import type { Detection } from "./types.ts";

/** Structured mismatch: what the chat claimed vs what the bytes are. */
export interface MismatchInfo {
  /** Declared extension without dot, lower case (from the name, else from the MIME), e.g. `pdf`. */
  readonly declaredExt: string;
  /** Canonical extension of the content, e.g. `png`. */
  readonly actualExt: string;
  /** English label of the content, e.g. `PNG image` (localize by `actualExt`). */
  readonly actualLabel: string;
}

/** Extensions that name the same content type (compared after mapping to the first). */
const SAME: Readonly<Record<string, string>> = { jpeg: "jpg", jpe: "jpg", jfif: "jpg", tiff: "tif", heif: "heic", htm: "html" };

/** Declared MIME → extension, for documents that came without a file name. */
const MIME_EXT: Readonly<Record<string, string>> = {
  "application/pdf": "pdf",
  "image/jpeg": "jpg",
  "image/png": "png",
  "image/gif": "gif",
  "image/webp": "webp",
  "image/tiff": "tif",
  "image/bmp": "bmp",
  "image/avif": "avif",
  "image/heic": "heic",
  "image/svg+xml": "svg",
};

/** Lower-case extension of a declared file name, or null (no dot, dotfile, or absurdly long). */
export function declaredExtension(name: string | null | undefined): string | null {
  if (!name) return null;
  const base = name.split(/[\\/]/).pop() ?? "";
  const dot = base.lastIndexOf(".");
  if (dot <= 0 || dot === base.length - 1) return null;
  const ext = base.slice(dot + 1).toLowerCase();
  return /^[a-z0-9]{1,8}$/.test(ext) ? ext : null;
}

/** Normalize an extension so aliases compare equal (`jpeg` → `jpg`). */
function canon(ext: string): string {
  return SAME[ext] ?? ext;
}

/**
 * What the chat declared, as an extension: the file name's, else the MIME's; null when
 * neither says anything specific (no name, `application/octet-stream`, missing MIME — BR-08).
 */
export function declaredType(declaredName?: string | null, declaredMime?: string | null): string | null {
  const fromName = declaredExtension(declaredName);
  if (fromName) return canon(fromName);
  const fromMime = declaredMime ? MIME_EXT[declaredMime.toLowerCase()] : undefined;
  return fromMime ?? null;
}

/** True when the declared name or MIME claims a PDF (decides `not_pdf` vs `unsupported_type`). */
export function declaredAsPdf(declaredName?: string | null, declaredMime?: string | null): boolean {
  return declaredExtension(declaredName) === "pdf" || declaredMime?.toLowerCase() === "application/pdf";
}

/**
 * Compare the declared type with the detection.
 * @returns the mismatch, or null when they agree or nothing specific was declared
 */
export function findMismatch(detection: Detection, declaredName?: string | null, declaredMime?: string | null): MismatchInfo | null {
  const declared = declaredType(declaredName, declaredMime);
  if (!declared) return null;
  if (declared === canon(detection.ext)) return null;
  // A declared extension we don't know as a type (e.g. `.scan`) is just a name, not a claim.
  if (!Object.values(MIME_EXT).includes(declared) && !["doc", "docx", "txt", "zip", "xlsx", "pptx", "odt"].includes(declared)) return null;
  return { declaredExt: declared, actualExt: detection.ext, actualLabel: detection.label };
}

/** English sentence for logs and as a fallback text, e.g. `sent as .pdf but is a PNG image`. */
export function mismatchText(m: MismatchInfo): string {
  return `sent as .${m.declaredExt} but is a ${m.actualLabel}`;
}
