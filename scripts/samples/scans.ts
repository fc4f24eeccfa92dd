/**
 * Scanned documents with known text, made at test time by Debian's tools (issue 13 §6): pages are
 * typeset by ImageMagick at 300 dpi and then turned into the three kinds of scan docket meets:
 * - `g4`: bilevel CCITT Group 4 (ImageMagick `-monochrome -compress Group4`, libtiff's `tiffcp` +
 *   `tiff2pdf`) — office scanners, fax;
 * - `phone`: a grey JPEG "phone" scan with noise, a slight blur and a 1.2° rotation (`img2pdf`);
 * - `jpx`: JPEG 2000 (OpenJPEG's `opj_compress`, lossy, then `img2pdf`).
 * The ground truth is the text typeset; tests compare recognized text against it (character error rate).
 * Tools: `convert` (imagemagick), `tiffcp`/`tiff2pdf` (libtiff-tools), `img2pdf`, `opj_compress`
 * (libopenjp2-tools), `qpdf` for `storedRotation`. Fonts: DejaVu (fonts-dejavu-core, which imagemagick pulls in), for Latin and Cyrillic.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The kinds of scan {@link makeScanPdf} makes. */
export type ScanKind = "g4" | "phone" | "jpx";

/** Resolution of every generated scan, dots per inch. */
export const SCAN_DPI = 300;
/** A4 at {@link SCAN_DPI}, px. */
export const SCAN_PAGE = { width: 2480, height: 3508 } as const;

/** English ground truth: ordinary prose with digits and punctuation, one string per line. */
export const ENGLISH_LINES: readonly string[] = [
  "This agreement is made on 12 March 2024 between",
  "the Supplier and the Customer named below.",
  "The quick brown fox jumps over the lazy dog.",
  "Payment of 4,850 euros is due within 30 days",
  "of the invoice date, by bank transfer only.",
  "Either party may end this contract in writing",
  "with three months notice to the other party.",
  "Sphinx of black quartz, judge my vow.",
];

/** Russian ground truth, one string per line. */
export const RUSSIAN_LINES: readonly string[] = [
  "Настоящий договор заключён 12 марта 2024 года",
  "между Поставщиком и Покупателем, указанными ниже.",
  "Съешь же ещё этих мягких французских булок.",
  "Оплата в размере 4850 рублей производится",
  "в течение 30 дней с даты выставления счёта.",
  "Любая сторона может расторгнуть этот договор,",
  "письменно уведомив другую сторону за три месяца.",
  "В чащах юга жил бы цитрус? Да, но фальшивый экземпляр!",
];

/** Run a tool; throws with its stderr when it fails. */
async function run(argv: readonly string[]): Promise<void> {
  const p = Bun.spawn([...argv], { stdin: "ignore", stdout: "ignore", stderr: "pipe" });
  const [code, err] = await Promise.all([p.exited, new Response(p.stderr).text()]);
  if (code !== 0) throw new Error(`${argv[0]} exited ${code}: ${err.trim().slice(-500)}`);
}

/**
 * Typeset one page: black text lines (DejaVu Serif, 12 pt at 300 dpi) on white, grey 8-bit PNG
 * with its resolution recorded.
 * @param lines the page's text, one entry per line
 * @param out path of the PNG
 */
export async function typesetPage(lines: readonly string[], out: string): Promise<void> {
  const pointSize = 12 * (SCAN_DPI / 72); // 12 pt type: ImageMagick's pointsize is in px at 72 dpi
  const argv = ["convert", "-size", `${SCAN_PAGE.width}x${SCAN_PAGE.height}`, "xc:white", "-font", "DejaVu-Serif", "-pointsize", String(pointSize), "-fill", "black"];
  lines.forEach((line, i) => argv.push("-annotate", `+240+${360 + i * Math.round(pointSize * 1.6)}`, line));
  argv.push("-colorspace", "Gray", "-depth", "8", "-units", "PixelsPerInch", "-density", String(SCAN_DPI), out);
  await run(argv);
}

/**
 * A scanned PDF of `pages` (each a list of lines) as `kind`, built in a temp folder that is removed after.
 * `storedRotation`: each page image is stored turned by −R and the page gets `/Rotate R` (qpdf),
 * so it shows upright.
 * @returns the PDF bytes
 * @throws Error naming the tool that failed
 */
export async function makeScanPdf(kind: ScanKind, pages: readonly (readonly string[])[], opts: { readonly storedRotation?: 90 | 180 | 270 } = {}): Promise<Uint8Array> {
  const dir = await mkdtemp(join(tmpdir(), "docket-scan-"));
  try {
    const images: string[] = [];
    for (const [i, lines] of pages.entries()) {
      const png = join(dir, `p${i}.png`);
      await typesetPage(lines, png);
      if (opts.storedRotation) await run(["convert", png, "-rotate", String(360 - opts.storedRotation), png]);
      images.push(await scanImage(kind, png, join(dir, `p${i}`)));
    }
    const pdf = join(dir, "scan.pdf");
    if (kind === "g4") {
      const tif = join(dir, "all.tif");
      await run(["tiffcp", "-c", "g4", ...images, tif]);
      await run(["tiff2pdf", "-o", pdf, tif]);
    } else {
      await run(["img2pdf", "--imgsize", `${SCAN_DPI}dpix${SCAN_DPI}dpi`, "--output", pdf, ...images]);
    }
    if (opts.storedRotation) {
      // The page is stored turned back and shown upright by /Rotate (a scanner that fed it sideways).
      const turned = join(dir, "turned.pdf");
      await run(["qpdf", pdf, `--rotate=+${opts.storedRotation}`, turned]);
      return new Uint8Array(await readFile(turned));
    }
    return new Uint8Array(await readFile(pdf));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Turn a typeset page into one scanned image of `kind`; returns its path (`base` + extension). */
async function scanImage(kind: ScanKind, png: string, base: string): Promise<string> {
  const density = ["-units", "PixelsPerInch", "-density", String(SCAN_DPI)];
  if (kind === "g4") {
    const out = `${base}.tif`;
    await run(["convert", png, "-monochrome", "-compress", "Group4", ...density, out]);
    return out;
  }
  if (kind === "phone") {
    const out = `${base}.jpg`;
    // A phone photo of a page: slightly turned, soft, noisy, grey, lossy.
    await run(["convert", png, "-background", "white", "-rotate", "1.2", "-blur", "0x0.7", "-attenuate", "0.35", "+noise", "Gaussian", "-colorspace", "Gray", "-quality", "75", ...density, out]);
    return out;
  }
  const pgm = `${base}.pgm`;
  const out = `${base}.jp2`;
  await run(["convert", png, "-depth", "8", pgm]);
  await run(["opj_compress", "-i", pgm, "-o", out, "-r", "20"]); // lossy, 20:1
  return out;
}

/**
 * Relabel every CCITT image of a PDF as JBIG2 (issue 13 §2): the bytes stay CCITT, so pdf.js's JBIG2
 * decoder fails on them and the page draws without its image. The name is padded to the same
 * length, so the xref offsets stay valid.
 * @throws Error when the PDF has no `/CCITTFaxDecode`
 */
export function relabelAsJbig2(pdf: Uint8Array): Uint8Array {
  const text = Buffer.from(pdf).toString("latin1");
  if (!text.includes("/CCITTFaxDecode")) throw new Error("no /CCITTFaxDecode image to relabel");
  return Uint8Array.from(Buffer.from(text.replaceAll("/CCITTFaxDecode", "/JBIG2Decode   "), "latin1"));
}
