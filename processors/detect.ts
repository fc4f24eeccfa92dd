/**
 * Content-based type detection (DESIGN.md "type detection": by content, never by
 * name or declared MIME). Order: `%PDF-` at byte 0; then `file-type` on the file; then
 * `%PDF-` later within the first 1024 bytes (field case BR-21 / DESIGN "Known pitfalls":
 * file-type misses `%PDF-` after leading junk) only when file-type found no type; then small
 * sniffers for what file-type leaves out (SVG/XML text, plain text). The processor's parser
 * open is the final proof.
 */
import { open } from "node:fs/promises";
import { fileTypeFromFile } from "file-type";
import type { Detection } from "./types.ts";

/** Bytes read from the head of a file for our own sniffers. */
const HEAD_BYTES = 4096;
/** Readers (Acrobat, poppler, qpdf, pdf.js) accept `%PDF-` within the first 1024 bytes. */
const PDF_SIGNATURE_WINDOW = 1024;

/** MIME → (kind, ext, label) for every type we name; kind `null` = recognised but not processed. */
const KNOWN: Readonly<Record<string, Omit<Detection, "mime">>> = {
  "application/pdf": { kind: "pdf", ext: "pdf", label: "PDF document" },
  "image/jpeg": { kind: "image", ext: "jpg", label: "JPEG image" },
  "image/png": { kind: "image", ext: "png", label: "PNG image" },
  // file-type names any PNG with an acTL chunk APNG; it is a PNG to the user (docs/processors.md "APNG").
  "image/apng": { kind: "image", ext: "png", label: "PNG image" },
  "image/gif": { kind: "image", ext: "gif", label: "GIF image" },
  "image/webp": { kind: "image", ext: "webp", label: "WebP image" },
  "image/tiff": { kind: "image", ext: "tif", label: "TIFF image" },
  "image/avif": { kind: "image", ext: "avif", label: "AVIF image" },
  "image/bmp": { kind: "image", ext: "bmp", label: "BMP image" },
  // HEIC goes to the image processor: only a decode proves it (BR-21); prebuilt sharp refuses HEVC.
  "image/heic": { kind: "image", ext: "heic", label: "HEIC image" },
  "image/heif": { kind: "image", ext: "heic", label: "HEIF image" },
  "image/heic-sequence": { kind: null, ext: "heic", label: "HEIC image sequence" },
  "image/heif-sequence": { kind: null, ext: "heic", label: "HEIF image sequence" },
  "image/svg+xml": { kind: null, ext: "svg", label: "SVG image" },
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document": { kind: null, ext: "docx", label: "Word document" },
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": { kind: null, ext: "xlsx", label: "Excel workbook" },
  "application/vnd.openxmlformats-officedocument.presentationml.presentation": { kind: null, ext: "pptx", label: "PowerPoint presentation" },
  "application/x-cfb": { kind: null, ext: "doc", label: "old Office document" },
  "application/vnd.oasis.opendocument.text": { kind: null, ext: "odt", label: "OpenDocument text" },
  "application/zip": { kind: null, ext: "zip", label: "ZIP archive" },
  "application/xml": { kind: null, ext: "xml", label: "XML file" },
  "text/plain": { kind: null, ext: "txt", label: "text file" },
  "application/octet-stream": { kind: null, ext: "bin", label: "unknown data" },
};

/**
 * Look up the fixed (kind, ext, label) of a content MIME.
 * Unknown MIMEs get kind `null`, the given extension and a label like `MP4 file`.
 */
export function describeMime(mime: string, ext = "bin"): Detection {
  const known = KNOWN[mime];
  if (known) return { mime, ...known };
  return { mime, kind: null, ext, label: `${ext.toUpperCase()} file` };
}

/** Read up to `n` bytes from the start of a file (fewer when the file is shorter). */
export async function readHead(path: string, n = HEAD_BYTES): Promise<Uint8Array> {
  const fh = await open(path, "r");
  try {
    const buf = new Uint8Array(n);
    const { bytesRead } = await fh.read(buf, 0, n, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/**
 * Offset of `%PDF-` within the first 1024 bytes, or -1.
 * Source: PDF 1.7 Implementation note 13 (Acrobat accepts the header within 1024 bytes); fixture README.
 */
export function findPdfSignature(head: Uint8Array): number {
  const limit = Math.min(head.length, PDF_SIGNATURE_WINDOW) - 5;
  for (let i = 0; i <= limit; i++) {
    if (head[i] === 0x25 && head[i + 1] === 0x50 && head[i + 2] === 0x44 && head[i + 3] === 0x46 && head[i + 4] === 0x2d) return i;
  }
  return -1;
}

/** True when the head is UTF-8 text without control bytes other than tab/CR/LF/FF (a BOM is allowed). */
function looksLikeText(head: Uint8Array): boolean {
  if (head.length === 0) return false;
  let text: string;
  try {
    // fatal: invalid UTF-8 is not text; a multi-byte char cut at the window's end is tolerated below.
    text = new TextDecoder("utf-8", { fatal: true }).decode(head.length === HEAD_BYTES ? head.subarray(0, HEAD_BYTES - 4) : head);
  } catch {
    return false;
  }
  // eslint-disable-next-line no-control-regex
  return !/[\x00-\x08\x0b\x0e-\x1f\x7f]/.test(text);
}

/**
 * SVG sniff on text: an `<svg` root element near the start (after an optional XML
 * declaration, comments and DOCTYPE). We never parse it (entities stay unresolved).
 */
function looksLikeSvg(head: Uint8Array): boolean {
  const text = new TextDecoder("utf-8").decode(head).toLowerCase();
  return /<svg[\s>]/.test(text) && (text.trimStart().startsWith("<") || text.charCodeAt(0) === 0xfeff);
}

/**
 * Detect a file's type from its bytes.
 * @param path absolute path of the downloaded source
 * @returns the detection; `kind: null` when no processor handles the content
 * @throws only on I/O errors (missing file, EACCES)
 */
export async function detectFile(path: string): Promise<Detection> {
  const head = await readHead(path);
  const pdfAt = findPdfSignature(head);
  // `%PDF-` at byte 0 is a PDF whatever else matches (file-type may call some PDFs Illustrator files).
  if (pdfAt === 0) return describeMime("application/pdf");
  const found = head.length > 0 ? await fileTypeFromFile(path) : undefined;
  // Audit of issue 5, gap 3: `%PDF-` further in counts only when file-type finds no real type
  // (BR-21: junk before the header); a PNG whose text chunk or a stored ZIP whose member starts
  // with `%PDF-` is still a PNG / a ZIP.
  if (found && found.mime !== "application/xml") return describeMime(found.mime, found.ext);
  if (pdfAt > 0) return describeMime("application/pdf");
  if (looksLikeText(head) || found?.mime === "application/xml") {
    if (looksLikeSvg(head)) return describeMime("image/svg+xml");
    return describeMime(found?.mime ?? "text/plain");
  }
  return describeMime("application/octet-stream");
}
