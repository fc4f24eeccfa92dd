/**
 * The searchable PDF (issue 13 §4): the user's original pages, each recognized page overlaid with
 * Tesseract's text-only page (invisible text, render mode 3, in Tesseract's GlyphLessFont), so the
 * scan can be searched and copied from — the "sandwich" ocrmypdf makes with `--pdf-renderer
 * sandwich`. Written with pdf-lib (@cantoo/pdf-lib, the maintained fork): the original pages' content
 * is kept as it is; each overlay is embedded as a form XObject drawn over the page's crop box.
 *
 * Tesseract's page is in the orientation docket rendered (pdf.js applies `/Rotate`), so on a rotated
 * page the overlay is turned back into the page's own coordinates.
 */
import { readFile, writeFile } from "node:fs/promises";
import { PDF_LIB_LOAD, PDF_LIB_SAVE } from "../pdf-lib-options.ts";
import { viewedAngle } from "../pdf/rotation.ts";

/**
 * Where an overlay of the displayed page goes in the page's own space, for pdf-lib `drawPage`
 * (which rotates counter-clockwise about `x, y`).
 * @param box the page's crop box (pt)
 * @param rotate the page's `/Rotate` (0, 90, 180, 270; clockwise on display)
 */
export function overlayPlacement(box: { x: number; y: number; width: number; height: number }, rotate: number): { x: number; y: number; width: number; height: number; rotate: number } {
  const r = viewedAngle(rotate);
  const { x, y, width: w, height: h } = box;
  if (r === 90) return { x: x + w, y, width: h, height: w, rotate: 90 };
  if (r === 180) return { x: x + w, y: y + h, width: w, height: h, rotate: 180 };
  if (r === 270) return { x, y: y + h, width: h, height: w, rotate: 270 };
  return { x, y, width: w, height: h, rotate: 0 };
}

/**
 * Write the searchable PDF.
 * @param sourcePath the user's PDF
 * @param layers text-only one-page PDFs by 1-based page number (Tesseract's `pdf` output)
 * @param outPath where to write
 * @returns the number of pages that got a text layer
 * @throws Error when pdf-lib cannot read the source (e.g. encryption it cannot remove, a broken
 *   xref pdf.js repaired) — the caller then delivers the text without the searchable PDF
 */
export async function writeSearchablePdf(sourcePath: string, layers: ReadonlyMap<number, string>, outPath: string): Promise<number> {
  const { PDFDocument, degrees } = await import("@cantoo/pdf-lib");
  const doc = await PDFDocument.load(await readFile(sourcePath), PDF_LIB_LOAD);
  let overlaid = 0;
  for (const [n, layerPath] of [...layers.entries()].sort((a, b) => a[0] - b[0])) {
    const page = doc.getPage(n - 1);
    const layer = await PDFDocument.load(await readFile(layerPath), PDF_LIB_LOAD);
    const [embedded] = await doc.embedPdf(layer, [0]);
    const at = overlayPlacement(page.getCropBox(), page.getRotation().angle);
    page.drawPage(embedded!, { x: at.x, y: at.y, width: at.width, height: at.height, rotate: degrees(at.rotate) });
    overlaid++;
  }
  await writeFile(outPath, await doc.save(PDF_LIB_SAVE));
  return overlaid;
}
