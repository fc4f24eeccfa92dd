/**
 * A tiny raw PDF writer (PDF 1.4, uncompressed content streams, standard Helvetica),
 * used by the pdf.js startup self-check (field case BR-11: "open a built-in one-page PDF")
 * and by tests that make their own inputs. Not a general PDF library.
 */

/** What to write. */
export interface RawPdfSpec {
  /** One entry per page: the text lines on it (ASCII; `(`, `)` and `\` are escaped). */
  readonly pages: readonly (readonly string[])[];
  /** Page size in PDF points (1/72 inch); default A4 595×842. */
  readonly width?: number;
  readonly height?: number;
  /** Document info `/Title`. */
  readonly title?: string;
  /** Bytes put before `%PDF-` (readers accept up to 1024; fixture pdf_junk_before_header). */
  readonly leadingJunk?: string;
  /** Standard security handler, supplied by the caller (tests use RC4 R2); no Info dictionary is written then. */
  readonly encryption?: RawPdfEncryption;
}

/** Hooks for writing an encrypted document (PDF 1.7 §7.6.3, standard security handler). */
export interface RawPdfEncryption {
  /** The `/Encrypt` dictionary body, e.g. `<< /Filter /Standard /V 1 /R 2 … >>`. */
  readonly dictionary: string;
  /** First file identifier as Latin-1 bytes (the key derivation uses it). */
  readonly id: string;
  /** Encrypt a stream's bytes (Latin-1 string) for object `objNum` generation 0. */
  encryptStream(objNum: number, data: string): string;
}

/** Escape a string for a PDF literal string `( … )`. */
function pdfString(s: string): string {
  return s.replace(/[\\()]/g, (c) => `\\${c}`);
}

/**
 * Build a PDF in memory with a correct cross-reference table.
 * Zero pages gives a well-formed document with `/Kids [] /Count 0` (fixture pdf_zero_pages).
 * @returns the file bytes (Latin-1 / ASCII)
 */
export function buildRawPdf(spec: RawPdfSpec): Uint8Array {
  const w = spec.width ?? 595;
  const h = spec.height ?? 842;
  const objects: string[] = []; // objects[i] is object number i+1
  const add = (body: string): number => objects.push(body);
  const catalog = add(""); // filled below
  const pagesObj = add("");
  const font = add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>");
  const kids: number[] = [];
  for (const lines of spec.pages) {
    const ops = lines.map((line, i) => `BT /F1 14 Tf 56 ${h - 72 - i * 20} Td (${pdfString(line)}) Tj ET`).join("\n");
    const contentNum = objects.length + 1;
    const data = spec.encryption ? spec.encryption.encryptStream(contentNum, ops) : ops;
    const content = add(`<< /Length ${data.length} >>\nstream\n${data}\nendstream`);
    kids.push(
      add(
        `<< /Type /Page /Parent ${pagesObj} 0 R /MediaBox [0 0 ${w} ${h}] /Resources << /Font << /F1 ${font} 0 R >> >> /Contents ${content} 0 R >>`,
      ),
    );
  }
  objects[catalog - 1] = `<< /Type /Catalog /Pages ${pagesObj} 0 R >>`;
  objects[pagesObj - 1] = `<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(" ")}] /Count ${kids.length} >>`;
  const encrypt = spec.encryption ? add(spec.encryption.dictionary) : 0;
  const info = spec.title && !spec.encryption ? add(`<< /Title (${pdfString(spec.title)}) /Producer (docket raw-pdf) >>`) : 0;

  const junk = spec.leadingJunk ?? "";
  let out = `${junk}%PDF-1.4\n%\xe2\xe3\xcf\xd3\n`;
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(out.length - junk.length); // offsets count from the %PDF- header
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xrefAt = out.length - junk.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const off of offsets) out += `${String(off).padStart(10, "0")} 00000 n \n`;
  const hex = (s: string): string => [...s].map((c) => c.charCodeAt(0).toString(16).padStart(2, "0")).join("");
  const enc = spec.encryption ? ` /Encrypt ${encrypt} 0 R /ID [<${hex(spec.encryption.id)}> <${hex(spec.encryption.id)}>]` : "";
  out += `trailer\n<< /Size ${objects.length + 1} /Root ${catalog} 0 R${info ? ` /Info ${info} 0 R` : ""}${enc} >>\nstartxref\n${xrefAt}\n%%EOF\n`;
  return Uint8Array.from(out, (c) => c.charCodeAt(0) & 0xff);
}
