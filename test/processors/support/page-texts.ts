/** Reading a written PDF back for processor tests: pdf.js (the project's own opener), page by page. */
import { closePdf, openPdf } from "../../../processors/pdf/open.ts";

/** Text of every page of the PDF file at `path`, read by pdf.js: each page's text items joined without a separator. */
export async function pageTexts(path: string): Promise<string[]> {
  const pdf = await openPdf(path);
  try {
    const out: string[] = [];
    for (let i = 1; i <= pdf.doc.numPages; i++) {
      const content = await (await pdf.doc.getPage(i)).getTextContent();
      out.push(content.items.map((x) => ("str" in x ? x.str : "")).join(""));
    }
    return out;
  } finally {
    await closePdf(pdf);
  }
}
