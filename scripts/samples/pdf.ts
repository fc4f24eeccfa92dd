/**
 * A small raw PDF writer for samples and tests: Helvetica text pages, optional full-page JPEG
 * images (DCTDecode), optional FlateDecode content streams, optional RC4 40-bit encryption,
 * a classic xref table with exact byte offsets. Deterministic: same options, same bytes.
 * Source: ISO 32000-1 §7.5 (file structure), §9.6.2 (standard Type 1 fonts), §8.9 (images).
 */
import { createHash } from "node:crypto";
import { deflateSync } from "node:zlib";
import { standardSecurityR2, type PdfEncryption, type StandardSecurity } from "./pdf-crypt.ts";

export type { PdfEncryption } from "./pdf-crypt.ts";

/** A JPEG drawn over a whole page (stored as an image XObject with `/Filter /DCTDecode`). */
export interface PdfImage {
  /** The JPEG file bytes, embedded unchanged. */
  readonly jpeg: Uint8Array;
  /** Pixel width of the JPEG. */
  readonly width: number;
  /** Pixel height of the JPEG. */
  readonly height: number;
  /** PDF colour space matching the JPEG's components (1 = DeviceGray, 3 = DeviceRGB). */
  readonly colorSpace: "DeviceGray" | "DeviceRGB";
}

/** Options for {@link makePdf}. Sizes are PDF points (1/72 inch). */
export interface MakePdfOptions {
  /** One entry per page, each the text lines of that page (printable ASCII); `[]` = 0-page PDF. */
  readonly pages: readonly (readonly string[])[];
  /** Page width and height in pt; default A4 `[595, 842]`. */
  readonly pageSize?: readonly [number, number];
  /** FlateDecode content streams (node:zlib); default `true`. */
  readonly compress?: boolean;
  /** Header version, e.g. `"1.4"` (default) or `"1.7"`. */
  readonly version?: string;
  /** Font size in pt for the text lines; default 12 (line spacing = 4/3 of it). */
  readonly fontSize?: number;
  /** Per page, an image drawn over the whole page under the text; `undefined`/`null` = none. */
  readonly images?: readonly (PdfImage | null | undefined)[];
  /** Encrypt with the Standard Security Handler R2 (RC4 40-bit). */
  readonly encrypt?: PdfEncryption;
  /** Seed for the trailer `/ID` (default derived from the pages' text), so output stays deterministic. */
  readonly idSeed?: string;
  /**
   * Document information `/Title` (printable ASCII), in an Info dictionary referenced from the
   * trailer (§14.3.3); encrypted like every other string when `encrypt` is set. Default: no Info.
   */
  readonly title?: string;
  /**
   * Per page, raw content-stream operators (§8.2) appended after the page's text, e.g. a heavy
   * page from heavy-page.ts; the font `/F1` (Helvetica) is in every page's resources.
   * `undefined`/`null` = none. Not checked: the caller writes valid PDF operators.
   */
  readonly contents?: readonly (string | null | undefined)[];
}

/** The binary comment after the header: 4 bytes >= 128 mark the file as binary (§7.5.2). */
const HEADER_BINARY_COMMENT = "%\u00e2\u00e3\u00cf\u00d3\n";

interface PdfObject {
  readonly dict: string;
  readonly stream?: Uint8Array;
}

/** Escapes a PDF literal string (§7.3.4.2); throws RangeError on anything but printable ASCII. */
function pdfString(text: string): string {
  if (!/^[\x20-\x7e]*$/.test(text)) throw new RangeError(`makePdf: only printable ASCII text is supported: ${JSON.stringify(text)}`);
  return `(${text.replace(/[\\()]/g, (c) => `\\${c}`)})`;
}

function pageContent(lines: readonly string[], image: PdfImage | null | undefined, size: readonly [number, number], fontSize: number, raw?: string | null): string {
  const [w, h] = size;
  const ops: string[] = [];
  if (image) ops.push(`q ${w} 0 0 ${h} 0 0 cm /Im1 Do Q`);
  if (lines.length > 0) {
    const leading = Math.round((fontSize * 4) / 3);
    const margin = Math.min(72, Math.round(w / 8));
    ops.push(`BT /F1 ${fontSize} Tf ${leading} TL ${margin} ${h - margin} Td`);
    lines.forEach((line, i) => ops.push(`${i > 0 ? "T* " : ""}${pdfString(line)} Tj`));
    ops.push("ET");
  }
  if (raw) ops.push(raw);
  return ops.join("\n") + "\n";
}

/**
 * Writes a PDF with one page per entry of `options.pages`.
 *
 * Layout: object 1 Catalog, 2 Pages, 3 Font (Helvetica, WinAnsiEncoding), then per page a Page,
 * its content stream and (if any) its image; then the Encrypt and the Info dictionaries. The
 * Catalog and Pages objects are written at the end of the body (as Ghostscript does), so a file
 * cut in half has neither the page tree nor the xref.
 *
 * @param options - pages, size, compression, encryption, title; see {@link MakePdfOptions}.
 * @returns the complete file (header, body, xref table, trailer with `/ID`, `startxref`, `%%EOF`).
 * @throws RangeError when a text line or the title has non-ASCII characters.
 */
export function makePdf(options: MakePdfOptions): Uint8Array {
  const size = options.pageSize ?? [595, 842];
  const compress = options.compress ?? true;
  const fontSize = options.fontSize ?? 12;
  const idSeed = options.idSeed ?? JSON.stringify(options.pages);
  const id = new Uint8Array(createHash("md5").update(`docket-sample:${idSeed}`).digest());
  const security: StandardSecurity | undefined = options.encrypt ? standardSecurityR2(options.encrypt, id) : undefined;

  const objects = new Map<number, PdfObject>();
  const pageRefs: string[] = [];
  let next = 4;
  options.pages.forEach((lines, index) => {
    const image = options.images?.[index];
    const pageNum = next++;
    const contentNum = next++;
    const imageNum = image ? next++ : 0;
    const raw = new TextEncoder().encode(pageContent(lines, image, size, fontSize, options.contents?.[index]));
    const data = compress ? new Uint8Array(deflateSync(raw, { level: 9 })) : raw;
    objects.set(contentNum, { dict: `<< /Length ${data.length}${compress ? " /Filter /FlateDecode" : ""} >>`, stream: data });
    // MediaBox and the font are inherited from the Pages node (§7.7.3.4); only image pages add resources.
    const resources = image ? ` /Resources << /Font << /F1 3 0 R >> /XObject << /Im1 ${imageNum} 0 R >> >>` : "";
    objects.set(pageNum, { dict: `<< /Type /Page /Parent 2 0 R${resources} /Contents ${contentNum} 0 R >>` });
    if (image) {
      objects.set(imageNum, {
        dict: `<< /Type /XObject /Subtype /Image /Width ${image.width} /Height ${image.height} /ColorSpace /${image.colorSpace} /BitsPerComponent 8 /Filter /DCTDecode /Length ${image.jpeg.length} >>`,
        stream: image.jpeg,
      });
    }
    pageRefs.push(`${pageNum} 0 R`);
  });
  objects.set(3, { dict: "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>" });
  objects.set(2, {
    dict: `<< /Type /Pages /Kids [${pageRefs.join(" ")}] /Count ${pageRefs.length} /MediaBox [0 0 ${size[0]} ${size[1]}] /Resources << /Font << /F1 3 0 R >> >> >>`,
  });
  objects.set(1, { dict: "<< /Type /Catalog /Pages 2 0 R >>" });
  const encryptNum = security ? next++ : 0;
  if (security) objects.set(encryptNum, { dict: security.dictionary });
  const infoNum = options.title !== undefined ? next++ : 0;
  if (options.title !== undefined) {
    const literal = pdfString(options.title);
    // Strings are encrypted too (§7.6.1); the cipher text goes in as a hex string.
    const title = security ? `<${Buffer.from(security.encrypt(infoNum, 0, Buffer.from(options.title, "latin1"))).toString("hex")}>` : literal;
    objects.set(infoNum, { dict: `<< /Title ${title} >>` });
  }

  const chunks: Uint8Array[] = [];
  let offset = 0;
  const push = (bytes: Uint8Array | string) => {
    const b = typeof bytes === "string" ? Buffer.from(bytes, "latin1") : bytes;
    chunks.push(b);
    offset += b.length;
  };
  push(`%PDF-${options.version ?? "1.4"}\n${HEADER_BINARY_COMMENT}`);
  const offsets = new Map<number, number>();
  for (const [num, obj] of objects) {
    offsets.set(num, offset);
    push(`${num} 0 obj\n${obj.dict}\n`);
    if (obj.stream) {
      // The Encrypt dictionary is never encrypted; every stream else is (§7.6.1).
      const data = security && num !== encryptNum ? security.encrypt(num, 0, obj.stream) : obj.stream;
      push("stream\n");
      push(data);
      push("\nendstream\n");
    }
    push("endobj\n");
  }
  const xrefOffset = offset;
  const count = next;
  let xref = `xref\n0 ${count}\n0000000000 65535 f \n`;
  for (let num = 1; num < count; num++) {
    const at = offsets.get(num);
    if (at === undefined) throw new Error(`makePdf: object ${num} was never written`);
    xref += `${String(at).padStart(10, "0")} 00000 n \n`;
  }
  const hexId = Buffer.from(id).toString("hex");
  const encryptRef = security ? ` /Encrypt ${encryptNum} 0 R` : "";
  const infoRef = infoNum ? ` /Info ${infoNum} 0 R` : "";
  push(`${xref}trailer\n<< /Size ${count} /Root 1 0 R${infoRef}${encryptRef} /ID [<${hexId}> <${hexId}>] >>\nstartxref\n${xrefOffset}\n%%EOF\n`);
  return Buffer.concat(chunks);
}
