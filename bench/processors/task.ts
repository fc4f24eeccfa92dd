/**
 * One docket processing step as its own process, so bench/processors/run.ts can measure wall
 * time and peak RSS the same way as for poppler and ImageMagick (/usr/bin/time -v).
 *
 *   bun bench/processors/task.ts text   <in.pdf> <out.txt>
 *   bun bench/processors/task.ts render <in.pdf> <out.jpg> [maxSide]
 *   bun bench/processors/task.ts image  <in> <workDir> [maxSide]
 */
import { closePdf, openPdf } from "../../processors/pdf/open.ts";
import { renderPageJpeg } from "../../processors/pdf/render.ts";
import { extractText } from "../../processors/pdf/text.ts";
import { processImage } from "../../processors/image/process-image.ts";

/** Run one step; exits non-zero on any failure. */
export async function runTask(op: string, input: string, out: string, maxSide: number): Promise<void> {
  if (op === "image") {
    await processImage(input, { workDir: out, maxInputPixels: 100_000_000, maxOutputSide: maxSide, maxPdfPages: 1, pdfPageBudgetMs: 0 });
    return;
  }
  const pdf = await openPdf(await Bun.file(input).bytes());
  try {
    if (op === "text") {
      await Bun.write(out, (await extractText(pdf, 0)).text);
    } else if (op === "render") {
      const img = await renderPageJpeg(pdf, 1, maxSide, 0);
      await Bun.write(out, img!.jpeg);
    } else {
      throw new Error(`unknown op ${op}`);
    }
  } finally {
    // closePdf, not task.destroy(): pdf.js leaves a worker passed in by the caller running, and
    // the in-process warm runs of run.ts would pile up page-worker threads.
    await closePdf(pdf);
  }
}

if (import.meta.main) {
  const [op = "", input = "", out = "", side = "2000"] = process.argv.slice(2);
  await runTask(op, input, out, Number(side));
  process.exit(0);
}
