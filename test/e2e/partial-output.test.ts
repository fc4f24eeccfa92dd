/**
 * The chat is told when part of a file was left out of the result (audit of issue 5, gap 8),
 * through the real bot and the real isolated processor: a multi-page TIFF (page 1 only), an
 * animation over MAX_FRAMES (frame 1 only), a PDF whose page-1 preview went over the page budget
 * (and, with a scanned page after it, is still recognized).
 */
import sharp from "sharp";
import { afterEach, expect, test } from "vitest";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fillOps, makePdf, makeScanPdf, makeTinyFrameGif } from "../../scripts/samples/index.ts";
import { startStack, type Stack } from "../support/stack.ts";
import { toolReady } from "../support/tools.ts";

let stack: Stack | null = null;
afterEach(async () => {
  await stack?.stop();
  stack = null;
});

/** Send a document and return the final "Done" text of its job. */
async function doneText(s: Stack, lang: "en" | "ru", bytes: Uint8Array, fileName: string): Promise<string> {
  const u = s.em.user({ language_code: lang });
  const sent = await u.sendDocument({ bytes, file_name: fileName });
  const job = await s.waitJob((await s.jobFor(u.chatId, sent.message_id)).id, undefined, 60_000);
  expect(job.status, `${job.reason}: ${job.lastError}`).toBe("ready");
  const prefix = lang === "en" ? `Done, job #${job.id}` : `Готово, задача № ${job.id}`;
  const msgs = await u.waitFor((m) => m.some((x) => x.text?.startsWith(prefix)));
  return msgs.find((x) => x.text?.startsWith(prefix))!.text!;
}

test("TIFF of 3 pages and a 5-frame GIF over MAX_FRAMES=4: the Done message says what was left out", async () => {
  stack = await startStack({ env: { MAX_FRAMES: "4" } });
  const frame = (rgb: [number, number, number]): Uint8Array => Uint8Array.from({ length: 64 * 48 * 3 }, (_, i) => rgb[i % 3]!);
  const raw = Buffer.concat([frame([255, 0, 0]), frame([0, 255, 0]), frame([0, 0, 255])]);
  const tif = await sharp(raw, { raw: { width: 64, height: 144, channels: 3, pageHeight: 48 } }).tiff().toBuffer();
  expect(await doneText(stack, "en", tif, "fax.tif")).toContain("TIFF image 64×48, 3 frames; only page 1 of 3 converted");
  expect(await doneText(stack, "ru", makeTinyFrameGif(5), "meme.gif")).toContain("кадров: 5; преобразован только кадр 1 из 5 (ограничение по числу кадров: 4)");
}, 90_000);

test("PDF whose page 1 is too heavy to draw in PDF_PAGE_BUDGET: text delivered, the message says 'no preview'", async () => {
  stack = await startStack({ env: { PDF_PAGE_BUDGET: "1s", PROCESS_TIMEOUT: "60s" } });
  const pdf = makePdf({ pages: [["Heavy page one"], ["Light page two"]], contents: [fillOps(40_000)] });
  // Both text layers are too short to be usable, but neither page paints an image: no scan, so
  // nothing is recognized and the line has no recognition part.
  expect(await doneText(stack, "en", pdf, "cover.pdf")).toContain("PDF, 2 pages, 24 characters of text; no preview: page 1 took too long to draw.");
}, 90_000);

test.skipIf(!(["qpdf", "tesseract", "convert", "tiff2pdf"] as const).every((t) => toolReady(t)))(
  "a heavy page 1 (no preview) before a scanned page 2: recognition reads the file again after the preview stopped pdf.js, and page 2 is recognized",
  async () => {
    stack = await startStack({ env: { PDF_PAGE_BUDGET: "1s", PROCESS_TIMEOUT: "60s" } });
    const dir = mkdtempSync(join(tmpdir(), "docket-partial-"));
    try {
      writeFileSync(join(dir, "heavy.pdf"), makePdf({ pages: [["Heavy page one"]], contents: [fillOps(40_000)] }));
      writeFileSync(join(dir, "scan.pdf"), await makeScanPdf("g4", [["The scanned second page"]]));
      expect(Bun.spawnSync(["qpdf", "--empty", "--pages", join(dir, "heavy.pdf"), join(dir, "scan.pdf"), "--", join(dir, "both.pdf")]).exitCode).toBe(0);
      // Before the fix recognition asked the stopped pdf.js thread for page 2 and waited until the wall clock.
      const text = await doneText(stack, "en", new Uint8Array(readFileSync(join(dir, "both.pdf"))), "both.pdf");
      expect(text).toMatch(/PDF, 2 pages, 12 characters of text; 1 page recognized \(\d+ characters\); no preview: page 1 took too long to draw\./);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
  120_000,
);
