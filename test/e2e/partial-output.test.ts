/**
 * The chat is told when part of a file was left out of the result (audit of issue 5, gap 8),
 * through the real bot and the real isolated processor: a multi-page TIFF (page 1 only), an
 * animation over MAX_FRAMES (frame 1 only), a PDF whose page-1 preview went over the page budget.
 */
import sharp from "sharp";
import { afterEach, expect, test } from "vitest";
import { fillOps, makePdf, makeTinyFrameGif } from "../../scripts/samples/index.ts";
import { startStack, type Stack } from "../support/stack.ts";

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
  expect(job.status).toBe("ready");
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

test("PDF whose page 1 is too heavy to draw in PDF_PAGE_BUDGET: text delivered, the message says no preview and where recognition stopped", async () => {
  stack = await startStack({ env: { PDF_PAGE_BUDGET: "1s", PROCESS_TIMEOUT: "60s", OCR_PAGE_BUDGET: "2s" } });
  const pdf = makePdf({ pages: [["Heavy page one"], ["Light page two"]], contents: [fillOps(40_000)] });
  // Both pages' text layers are too short to be usable, so recognition is tried and meets the same
  // heavy page (OCR_PAGE_BUDGET 2 s keeps the test short); the message names both limits.
  const text = await doneText(stack, "en", pdf, "cover.pdf");
  expect(text).toContain("PDF, 2 pages, 24 characters of text; ");
  expect(text).toContain("recognition stopped at page 1: it took longer than 2 s to draw");
  expect(text).toContain("; no preview: page 1 took too long to draw.");
}, 90_000);
