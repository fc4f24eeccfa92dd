/**
 * Non-PDF, non-raster documents users send by mistake: a minimal DOCX (ZIP via fflate),
 * an SVG carrying an external entity (XXE), plain text under a `.pdf` name.
 */
import { strToU8, zipSync } from "fflate";

/**
 * A minimal DOCX: a ZIP (PK\x03\x04) holding `[Content_Types].xml`, `_rels/.rels` and
 * `word/document.xml` with one paragraph. Field case BR-21: reason `not_pdf`.
 *
 * @param text - the paragraph text (XML-escaped here).
 * @returns the ZIP bytes; entry times are fixed (2024-01-01 00:00 local DOS time), so the output is deterministic.
 */
export function makeDocx(text = "Quarterly report Q3 (sample)"): Uint8Array {
  const esc = text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const files = {
    "[Content_Types].xml": strToU8(
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
    ),
    "_rels/.rels": strToU8(
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
    ),
    "word/document.xml": strToU8(
      `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>${esc}</w:t></w:r></w:p></w:body></w:document>`,
    ),
  };
  // fflate writes DOS times from the Date's *local* fields; a local-time constructor keeps them fixed in any TZ.
  return zipSync(files, { level: 9, mtime: new Date(2024, 0, 1, 0, 0, 0) });
}

/**
 * An SVG whose DOCTYPE declares an external entity `SYSTEM "file:///etc/passwd"` used inside a
 * `<text>` (XXE). It must never be parsed with entity resolution; reason `unsupported_type`.
 */
export function makeXxeSvg(): Uint8Array {
  return strToU8(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE svg [
  <!ENTITY xxe SYSTEM "file:///etc/passwd">
]>
<svg xmlns="http://www.w3.org/2000/svg" width="200" height="80" viewBox="0 0 200 80">
  <rect width="200" height="80" fill="#ffffff"/>
  <text x="10" y="40" font-size="12">Logo &xxe;</text>
</svg>
`);
}

/** Plain ASCII text that mentions an invoice but has no `%PDF-` header (reason `not_pdf`). */
export function makeTextInvoice(): Uint8Array {
  return strToU8(
    "Invoice 4812\nExample Logistics Ltd.\n\nItem                 Qty   Amount\nFreight Berlin-Riga    1   1,250.00 EUR\n\nTotal due: 1,250.00 EUR\nThis is a plain text file, not a PDF.\n",
  );
}
