/**
 * The built-in one-page PDF that the pdf.js start-up self-check opens (field case BR-11:
 * "open a built-in one-page PDF"), kept as a constant so runtime code needs no PDF writer.
 *
 * How it was made (once): `makePdf({ pages: [["docket pdf self-check"]], pageSize: [200, 100],
 * compress: false, idSeed: "docket pdf self-check" })` from scripts/samples/pdf.ts, written out
 * line by line as Latin-1 text; pdf.js 6.5 opened it and read its text back. The xref offsets are
 * byte offsets into exactly these lines joined with "\n" (the second line's four characters
 * are one byte each in Latin-1). test/processors/self-check-pdf.test.ts regenerates it and
 * checks the bytes and offsets. Source: ISO 32000-1 §7.5 (file structure).
 */

/** The text drawn on the self-check page; pdf.js must extract it. */
export const SELF_CHECK_TEXT = "docket pdf self-check";

/** The file, one PDF line per entry (Latin-1 characters), without the newline separators. */
const LINES: readonly string[] = [
  "%PDF-1.4",
  "%\u00e2\u00e3\u00cf\u00d3",
  "5 0 obj",
  "<< /Length 58 >>",
  "stream",
  "BT /F1 12 Tf 16 TL 25 75 Td",
  "(docket pdf self-check) Tj",
  "ET",
  "",
  "endstream",
  "endobj",
  "4 0 obj",
  "<< /Type /Page /Parent 2 0 R /Contents 5 0 R >>",
  "endobj",
  "3 0 obj",
  "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
  "endobj",
  "2 0 obj",
  "<< /Type /Pages /Kids [4 0 R] /Count 1 /MediaBox [0 0 200 100] /Resources << /Font << /F1 3 0 R >> >> >>",
  "endobj",
  "1 0 obj",
  "<< /Type /Catalog /Pages 2 0 R >>",
  "endobj",
  "xref",
  "0 6",
  "0000000000 65535 f ",
  "0000000403 00000 n ",
  "0000000283 00000 n ",
  "0000000186 00000 n ",
  "0000000123 00000 n ",
  "0000000015 00000 n ",
  "trailer",
  "<< /Size 6 /Root 1 0 R /ID [<62c9d51ba0b9e4073bf8846f7600822c> <62c9d51ba0b9e4073bf8846f7600822c>] >>",
  "startxref",
  "452",
  "%%EOF",
];

/**
 * The self-check PDF as bytes (a fresh copy per call, since pdf.js may transfer or detach
 * the buffer it is given): PDF 1.4, one 200×100 pt page, Helvetica text {@link SELF_CHECK_TEXT},
 * uncompressed content stream, classic xref table; 711 bytes.
 */
export function selfCheckPdf(): Uint8Array {
  // A plain Uint8Array, not a Buffer: pdf.js asks for Uint8Array data.
  return Uint8Array.from(LINES.join("\n") + "\n", (c) => c.charCodeAt(0));
}
