/**
 * Test helper: open PDF bytes with the real pdf.js (legacy build, as docket runs it on Bun) and
 * read page count, per-page text and whether a page paints an image.
 */
import { getDocument, OPS } from "pdfjs-dist/legacy/build/pdf.mjs";

/** What pdf.js saw in a PDF. */
export interface PdfReading {
  /** `numPages` from pdf.js. */
  readonly numPages: number;
  /** Text of each page: the text items' `str` joined with "\n" (first `maxPages` pages only). */
  readonly pageTexts: string[];
  /** Per page read: whether its operator list paints an image XObject. */
  readonly paintsImage: boolean[];
}

/**
 * Opens `bytes` (copied; pdf.js detaches its input) and reads up to `maxPages` pages.
 *
 * @param password - user password, if any.
 * @throws what pdf.js throws: PasswordException (code 1 = NEED_PASSWORD), InvalidPDFException, ...
 */
export async function readPdf(bytes: Uint8Array, options: { password?: string; maxPages?: number } = {}): Promise<PdfReading> {
  const task = getDocument({
    data: new Uint8Array(bytes),
    disableFontFace: true,
    verbosity: 0,
    ...(options.password !== undefined ? { password: options.password } : {}),
  });
  try {
    const doc = await task.promise;
    const pageTexts: string[] = [];
    const paintsImage: boolean[] = [];
    for (let n = 1; n <= Math.min(doc.numPages, options.maxPages ?? Infinity); n++) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      pageTexts.push(content.items.map((item) => ("str" in item ? item.str : "")).join("\n"));
      const ops = await page.getOperatorList();
      paintsImage.push(ops.fnArray.includes(OPS.paintImageXObject));
    }
    return { numPages: doc.numPages, pageTexts, paintsImage };
  } finally {
    await task.destroy();
  }
}
