/**
 * Job types the processors bench adds to the pool's children (pool option `modules`): one step of
 * the PDF processor each, so a row compares the same work as its command-line peer. They call the
 * processor's own functions (processors/pdf/), with the product's default page budget.
 */
import { closePdf, openPdf } from "../../processors/pdf/open.ts";
import { renderPageJpeg } from "../../processors/pdf/render.ts";
import { extractText } from "../../processors/pdf/text.ts";
import { registerJob } from "../../processors/pool/jobs.ts";

/** The default PDF_PAGE_BUDGET (bot/config.ts), ms. */
const PAGE_BUDGET_MS = 2000;

declare module "../../processors/pool/protocol.ts" {
  interface JobTypes {
    /** The text of every page into `out` (UTF-8), as the PDF processor extracts it. */
    "bench-pdf-text": { payload: { input: string; out: string }; result: { chars: number } };
    /** Page 1 as JPEG into `out`, longest side `maxSide`, as the PDF processor renders its preview. */
    "bench-pdf-render": { payload: { input: string; out: string; maxSide: number }; result: { width: number; height: number } };
  }
}

registerJob("bench-pdf-text", async ({ input, out }) => {
  const pdf = await openPdf(input);
  try {
    const { text } = await extractText(pdf, PAGE_BUDGET_MS);
    await Bun.write(out, text);
    return { chars: text.length };
  } finally {
    await closePdf(pdf);
  }
});

registerJob("bench-pdf-render", async ({ input, out, maxSide }) => {
  const pdf = await openPdf(input);
  try {
    const img = await renderPageJpeg(pdf, 1, maxSide, PAGE_BUDGET_MS);
    if (!img) throw new Error("page 1 over its budget");
    await Bun.write(out, img.jpeg);
    return { width: img.width, height: img.height };
  } finally {
    await closePdf(pdf);
  }
});
