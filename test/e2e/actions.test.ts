/**
 * Actions on a result through the real bot and the emulator (issue 15): the final message's keyboard,
 * callbacks, each action a job of its own with its statuses, outputs opened and checked (page counts,
 * rotation, order, text kept after compress), pressing twice is one job, page ranges asked in a reply
 * and checked before any job, chat-scoped and owner-only buttons.
 */
import { PDFDocument, StandardFonts } from "@cantoo/pdf-lib";
import { describe, expect, test } from "vitest";
import { ENGLISH_LINES, makeJpeg, makePdf, makeScanPdf } from "../../scripts/samples/index.ts";
import { toolReady } from "../support/tools.ts";
import type { ChatMessage, ChatUser } from "../emulator/index.ts";
import type { Stack } from "../support/stack.ts";
import { withStack } from "../support/with-stack.ts";
import { SEARCHABLE } from "../../bot/actions/keyboard.ts";

/** Callback data of every button of a message. */
const buttons = (m: ChatMessage | undefined): string[] =>
  ((m?.reply_markup as { inline_keyboard?: Array<Array<{ callback_data?: string }>> } | undefined)?.inline_keyboard ?? []).flat().map((b) => b.callback_data ?? "");

/** Send `bytes` as `name`, wait for its job to be ready and for the final message with its keyboard; the job id and that message. */
async function readyWithKeyboard(s: Stack, u: ChatUser, bytes: Uint8Array, name: string, done: string): Promise<{ id: number; final: ChatMessage }> {
  const sent = await u.sendDocument({ bytes, file_name: name });
  const { id } = await s.waitJob((await s.jobFor(u.chatId, sent.message_id)).id, undefined, 60_000);
  const msgs = await u.waitFor((m) => m.some((x) => x.text?.startsWith(`${done}${id}`) && buttons(x).length > 0));
  return { id, final: msgs.find((x) => x.text?.startsWith(`${done}${id}`))! };
}

/** The one job made after `after` in the chat (waits for it to end); its row. */
async function nextJob(s: Stack, chatId: number, after: number) {
  let id = 0;
  await expect.poll(async () => (id = (await s.app.services.store.listByChat(chatId, 20)).find((j) => j.id > after)?.id ?? 0), { timeout: 15_000 }).toBeGreaterThan(0);
  return s.waitJob(id, undefined, 60_000);
}

/** The bytes of job `id`'s one result as Telegram got them. */
async function resultBytes(s: Stack, id: number): Promise<Uint8Array> {
  const [r, ...more] = await s.app.services.store.results(id);
  expect(more).toEqual([]);
  return s.em.uploaded(r!.telegramFileId!)!;
}

/** A text-only PDF pdf-lib wrote with object streams: nothing in it for a compression to shrink. */
async function packedPdf(): Promise<Uint8Array> {
  const d = await PDFDocument.create();
  const font = await d.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= 3; i++) d.addPage().drawText(`Page ${i}`, { x: 50, y: 700, font });
  return d.save({ useObjectStreams: true });
}

const fivePages = () => makePdf({ pages: [["P1"], ["P2"], ["P3"], ["P4"], ["P5"]] });

/** The answer to a press by someone who may not use job `id`'s buttons (en). */
const notYours = (id: number) => `Only the member who sent the file of job #${id}, an admin of this group or the bot’s admin can use its buttons.`;

/** Texts of the successful answerCallbackQuery calls, in the order they reached the emulator. */
const answers = (s: Stack): string[] => s.em.calls.filter((c) => c.method === "answerCallbackQuery" && c.ok).map((c) => String(c.params.text ?? ""));
/**
 * The text each press got, in the order of `presses` ("" while a press is unanswered). Answers go in
 * the background (bot/intake/answer-query.ts), so two of them may reach the emulator in either order;
 * each is paired with its press by callback_query_id.
 */
const answersTo = (s: Stack, presses: Array<{ callback_query_id?: string }>): string[] =>
  presses.map((p) => String(s.em.calls.find((c) => c.method === "answerCallbackQuery" && c.ok && c.params.callback_query_id === p.callback_query_id)?.params.text ?? ""));

describe("actions on a result (issue 15)", () => {
  test("rotate (en): the keyboard fits a PDF, the rotate menu, 90° every page as a new job with its statuses; pressing again is the same job", async () => {
    await withStack({}, async (s) => {
      const u = s.em.user({ language_code: "en" });
      const { id, final } = await readyWithKeyboard(s, u, fivePages(), "five.pdf", "Done, job #");
      // Searchable PDF only where the OCR path's /settings choice exists.
      expect(buttons(final)).toEqual([`a:${id}:rot`, `a:${id}:ext`, `a:${id}:spl`, `a:${id}:cmp`, `a:${id}:mrg`, ...(SEARCHABLE ? [`a:${id}:ocr`] : [])]);
      await u.pressButton(final.message_id, `a:${id}:rot`);
      await u.waitFor((m) => buttons(m.find((x) => x.message_id === final.message_id)).includes(`a:${id}:r90`));
      await u.pressButton(final.message_id, `a:${id}:r90`);
      const job = await nextJob(s, u.chatId, id);
      expect([job.status, job.variant, job.fileId]).toEqual(["ready", "rotate:90", (await s.app.services.store.get(id))!.fileId]);
      const doc = await PDFDocument.load(await resultBytes(s, job.id));
      expect(doc.getPages().map((p) => p.getRotation().angle)).toEqual([90, 90, 90, 90, 90]);
      const msgs = await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${job.id}: 5 pages of 5 turned by 90°`)));
      // Its own status line: accepted as a reply to the user's file, edited to Done.
      expect(s.em.calls.some((c) => c.method === "sendMessage" && String(c.params.text).startsWith(`Job #${job.id}: rotating the file of job #${id}.`))).toBe(true);
      // The rotated result has actions of its own (on the result's file_id).
      expect(buttons(msgs.find((x) => x.text?.startsWith(`Done, job #${job.id}`)))).toContain(`a:${job.id}:rot`);
      // Pressing twice is one job: the same key, answered from its result.
      await u.pressButton(final.message_id, `a:${id}:r90`);
      await u.waitFor((m) => m.some((x) => x.text === `This file was already processed (job #${job.id}). Sending the result again.`));
      expect((await s.app.services.store.listByChat(u.chatId, 20)).length).toBe(2);
    });
  }, 120_000);

  test("extract and split (ru): the range asked in a reply, a range past the end gets one clear message and no job; split goes as one album", async () => {
    await withStack({}, async (s) => {
      const u = s.em.user({ language_code: "ru" });
      const { id, final } = await readyWithKeyboard(s, u, fivePages(), "five.pdf", "Готово, задача № ");
      await u.pressButton(final.message_id, `a:${id}:ext`);
      await u.waitFor((m) => m.some((x) => x.text?.startsWith(`В задаче № ${id} 5 страниц. Какие страницы извлечь?`)));
      await u.sendText("2-9");
      await u.waitFor((m) => m.some((x) => x.text === "«2-9» за концом файла: в нём 5 страниц. Укажите страницы от 1 до 5."));
      expect((await s.app.services.store.listByChat(u.chatId, 20)).length).toBe(1);
      await u.sendText("4, 1-2");
      const ex = await nextJob(s, u.chatId, id);
      expect([ex.status, ex.variant]).toEqual(["ready", "extract:4,1-2"]);
      const doc = await PDFDocument.load(await resultBytes(s, ex.id));
      expect(doc.getPageCount()).toBe(3);
      await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Готово, задача № ${ex.id}: извлечено 3 из 5 стр.`)));
      // Split: one range → one file per page, sent as one album.
      await u.pressButton(final.message_id, `a:${id}:spl`);
      await u.waitFor((m) => m.some((x) => x.text?.startsWith(`В задаче № ${id} 5 страниц. Как разделить?`)));
      const albumsBefore = s.em.calls.filter((c) => c.method === "sendMediaGroup" && c.ok).length;
      await u.sendText("1-3,4-");
      const sp = await nextJob(s, u.chatId, ex.id);
      expect([sp.status, sp.variant]).toEqual(["ready", "split:1-3,4-5"]);
      const results = await s.app.services.store.results(sp.id);
      expect(results.map((r) => r.fileName)).toEqual(["five-p1-3.pdf", "five-p4-5.pdf"]);
      const pages = await Promise.all(results.map(async (r) => (await PDFDocument.load(s.em.uploaded(r.telegramFileId!)!)).getPageCount()));
      expect(pages).toEqual([3, 2]);
      await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Готово, задача № ${sp.id}: 5 стр. разделены на 2`)));
      expect(s.em.calls.filter((c) => c.method === "sendMediaGroup" && c.ok).length - albumsBefore).toBe(1);
    });
  }, 120_000);

  test("compress (en): a large page image re-encoded, text kept, sizes before/after; a PDF with nothing to shrink comes back as the original by file_id", async () => {
    await withStack({}, async (s) => {
      const u = s.em.user({ language_code: "en" });
      const jpeg = await makeJpeg(2000, 2800, { quality: 98 });
      const pdf = makePdf({ pages: [["Keep this text"]], images: [{ jpeg, width: 2000, height: 2800, colorSpace: "DeviceRGB" }] });
      const { id, final } = await readyWithKeyboard(s, u, pdf, "scan.pdf", "Done, job #");
      await u.pressButton(final.message_id, `a:${id}:cmp`);
      await u.waitFor((m) => buttons(m.find((x) => x.message_id === final.message_id)).includes(`a:${id}:ce`));
      await u.pressButton(final.message_id, `a:${id}:ce`);
      const job = await nextJob(s, u.chatId, id);
      expect([job.status, job.variant]).toEqual(["ready", "compress:ebook"]);
      const out = await resultBytes(s, job.id);
      expect(out.byteLength).toBeLessThan(pdf.byteLength / 2);
      const facts = JSON.parse(job.facts!) as { sizeBefore: number; sizeAfter: number };
      expect([facts.sizeBefore, facts.sizeAfter]).toEqual([pdf.byteLength, out.byteLength]);
      const { openPdf, closePdf } = await import("../../processors/pdf/open.ts");
      const opened = await openPdf(out);
      const text = (await (await opened.doc.getPage(1)).getTextContent()).items.map((x) => ("str" in x ? x.str : "")).join("");
      await closePdf(opened);
      expect(text).toBe("Keep this text");
      await u.waitFor((m) => m.some((x) => /^Done, job #\d+: compressed from [\d.]+ (MB|KB) to [\d.]+ KB \(\d+ % smaller\)/.test(x.text ?? "")));
      // Nothing to shrink: the original comes back by its file_id, not a bigger file.
      const small = await readyWithKeyboard(s, u, await packedPdf(), "plain.pdf", "Done, job #");
      await u.pressButton(small.final.message_id, `a:${small.id}:cmp`);
      await u.waitFor((m) => buttons(m.find((x) => x.message_id === small.final.message_id)).includes(`a:${small.id}:cs`));
      await u.pressButton(small.final.message_id, `a:${small.id}:cs`);
      const same = await nextJob(s, u.chatId, small.id);
      expect(same.status).toBe("ready");
      const sourceFileId = (await s.app.services.store.get(small.id))!.fileId;
      const resent = s.em.calls.filter((c) => c.method === "sendDocument" && c.params.document === sourceFileId);
      expect(resent.map((c) => c.ok)).toEqual([true]);
      await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${same.id}: compressing would not make it smaller than`)));
    });
  }, 120_000);

  test("buttons are chat-scoped and owner-only in groups; an expired result says so and loses its buttons; a rotate by 45° is refused with no job", async () => {
    await withStack({}, async (s) => {
      const g = s.em.group();
      const owner = g.member(s.em.user({ language_code: "en" }));
      const other = g.member(s.em.user({ language_code: "en" }));
      const { id, final } = await readyWithKeyboard(s, owner, fivePages(), "g.pdf", "Done, job #");
      await other.pressButton(final.message_id, `a:${id}:rot`);
      await expect.poll(() => s.em.calls.filter((c) => c.method === "answerCallbackQuery" && c.params.text === notYours(id)).length).toBe(1);
      // Some pages, by 45°: one clear message, no job.
      await owner.pressButton(final.message_id, `a:${id}:rot`);
      await owner.waitFor((m) => buttons(m.find((x) => x.message_id === final.message_id)).includes(`a:${id}:rrng`));
      await owner.pressButton(final.message_id, `a:${id}:rrng`);
      await owner.waitFor((m) => m.some((x) => x.text?.startsWith(`Job #${id} has 5 pages. Which pages, and by how much clockwise?`)));
      await owner.sendText("1-2 45");
      await owner.waitFor((m) => m.some((x) => x.text === "I can turn pages by 90°, 180° or 270° only, not 45°."));
      await owner.sendText("2 270");
      const rot = await nextJob(s, g.id, id);
      expect(rot.variant).toBe("rotate:270:2");
      expect((await PDFDocument.load(await resultBytes(s, rot.id))).getPages().map((p) => p.getRotation().angle)).toEqual([0, 270, 0, 0, 0]);
      expect((await s.app.services.store.listByChat(g.id, 20)).length).toBe(2);
      // Expired: the press says so and the keyboard goes.
      await s.app.services.store.expire(id, "ready", Date.now());
      await owner.pressButton(final.message_id, `a:${id}:back`);
      await expect.poll(() => s.em.calls.filter((c) => c.method === "answerCallbackQuery" && String(c.params.text ?? "").startsWith(`The result of job #${id} has expired`)).length).toBe(1);
      await owner.waitFor((m) => buttons(m.find((x) => x.message_id === final.message_id)).length === 0);
    });
  }, 120_000);

  test("group rights (en): a member's press and answer make nothing; a group administrator (getChatMember), a bot admin and an anonymous admin (answering as the group) may", async () => {
    const BOT_ADMIN = 5_550_001;
    await withStack({ env: { ADMIN_USER_IDS: String(BOT_ADMIN) } }, async (s) => {
      const g = s.em.group();
      const owner = g.member(s.em.user({ language_code: "en" }));
      const member = g.member(s.em.user({ language_code: "en" }));
      const admin = g.member(s.em.user({ language_code: "en" }), "administrator");
      const botAdmin = g.member(s.em.user({ id: BOT_ADMIN, language_code: "en" }));
      const anon = g.member(s.em.user({ language_code: "en" }), "administrator", { anonymous: true });
      const { id, final } = await readyWithKeyboard(s, owner, fivePages(), "g.pdf", "Done, job #");
      const jobs = async () => (await s.app.services.store.listByChat(g.id, 20)).filter((j) => j.id !== id);

      // A plain member (getChatMember: member): refused, no question opened, so their range makes nothing.
      await member.pressButton(final.message_id, `a:${id}:ext`);
      await expect.poll(() => answers(s), { timeout: 15_000 }).toEqual([notYours(id)]);
      await member.sendText("1-2");
      await expect.poll(() => s.em.pendingUpdates(), { timeout: 15_000 }).toBe(0);
      expect(await jobs()).toEqual([]);
      expect(g.messages().some((m) => m.text?.includes("Which pages"))).toBe(false);

      // A bot admin (ADMIN_USER_IDS, not a group admin): allowed without asking getChatMember.
      await botAdmin.pressButton(final.message_id, `a:${id}:ext`);
      await botAdmin.waitFor((m) => m.some((x) => x.text?.startsWith(`Job #${id} has 5 pages. Which pages`)));
      await botAdmin.sendText("1-2");
      const ex = await nextJob(s, g.id, id);
      expect([ex.status, ex.variant, ex.userId]).toEqual(["ready", "extract:1-2", BOT_ADMIN]);

      // An anonymous administrator presses as themselves and answers as the group (sender_chat): the split is the group's.
      await anon.pressButton(final.message_id, `a:${id}:spl`);
      await anon.waitFor((m) => m.some((x) => x.text?.startsWith(`Job #${id} has 5 pages. How should I split it?`)));
      await anon.sendText("1-3,4-");
      const sp = await nextJob(s, g.id, ex.id);
      expect([sp.status, sp.variant, sp.userId]).toEqual(["ready", "split:1-3,4-5", g.id]);

      // A group administrator: the rotate menu, then 90° — their job; their second press used the cached answer.
      await admin.pressButton(final.message_id, `a:${id}:rot`);
      await admin.waitFor((m) => buttons(m.find((x) => x.message_id === final.message_id)).includes(`a:${id}:r90`));
      await admin.pressButton(final.message_id, `a:${id}:r90`);
      const rot = await nextJob(s, g.id, sp.id);
      expect([rot.status, rot.variant, rot.userId]).toEqual(["ready", "rotate:90", admin.id]);
      expect((await PDFDocument.load(await resultBytes(s, rot.id))).getPages().map((p) => p.getRotation().angle)).toEqual([90, 90, 90, 90, 90]);
      expect((await jobs()).length).toBe(3);
      expect(s.em.calls.filter((c) => c.method === "getChatMember").map((c) => c.params.user_id)).toEqual([member.id, anon.id, admin.id]);
    });
  }, 180_000);

  test("a forged press in another chat carrying this chat's job id: 'not found' like a job that does not exist, no job, nothing sent, no getChatMember", async () => {
    await withStack({}, async (s) => {
      const [gA, gB] = [s.em.group(), s.em.group()];
      const alice = gA.member(s.em.user({ language_code: "en" }));
      // An administrator of B, not of A: her rights in B are no key to A's jobs.
      const mallory = gB.member(s.em.user({ language_code: "en" }), "administrator");
      const { id: a } = await readyWithKeyboard(s, alice, fivePages(), "a.pdf", "Done, job #");
      const { id: b, final } = await readyWithKeyboard(s, mallory, fivePages(), "b.pdf", "Done, job #");
      await expect.poll(() => s.em.pendingUpdates(), { timeout: 15_000 }).toBe(0);
      const from = s.em.calls.length;
      const seenA = gA.messages().length;
      const seenB = gB.messages().length;
      const none = b + 1000;
      const presses = [
        await mallory.pressForged(final.message_id, `a:${a}:r90`),
        await mallory.pressForged(final.message_id, `a:${a}:ext`),
        await mallory.pressForged(final.message_id, `a:${none}:r90`),
      ];
      await expect.poll(() => answersTo(s, presses), { timeout: 15_000 }).toEqual([`Job #${a} was not found in this chat.`, `Job #${a} was not found in this chat.`, `Job #${none} was not found in this chat.`]);
      await expect.poll(() => s.em.pendingUpdates(), { timeout: 15_000 }).toBe(0);
      // Every call those presses made was its answer: nothing sent or edited in either chat, nobody asked about.
      expect(s.em.calls.slice(from).filter((c) => c.method !== "getUpdates").map((c) => c.method)).toEqual(["answerCallbackQuery", "answerCallbackQuery", "answerCallbackQuery"]);
      expect([gA.messages().length, gB.messages().length]).toEqual([seenA, seenB]);
      expect((await s.app.services.store.listByChat(gA.id, 20)).map((j) => j.id)).toEqual([a]);
      expect((await s.app.services.store.listByChat(gB.id, 20)).map((j) => j.id)).toEqual([b]);
      expect((await s.app.services.store.get(a))?.status).toBe("ready");
      // The same forged data naming B's own job works in B (her own job): the refusal above was the chat scope.
      await mallory.pressForged(final.message_id, `a:${b}:r90`);
      const rot = await nextJob(s, gB.id, b);
      expect([rot.status, rot.variant, rot.chatId]).toEqual(["ready", "rotate:90", gB.id]);
    });
  }, 120_000);

  test("merge with the next files (en): the PDF and the files sent after the press become one PDF in order; text instead of files makes no job", async () => {
    await withStack({ env: { MERGE_QUIET: "2s" } }, async (s) => {
      const u = s.em.user({ language_code: "en" });
      const { id, final } = await readyWithKeyboard(s, u, makePdf({ pages: [["Base 1"], ["Base 2"]] }), "base.pdf", "Done, job #");
      // Text before any file: one clear message, no job.
      await u.pressButton(final.message_id, `a:${id}:mrg`);
      await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Send the PDFs or images to add after the file of job #${id}`)));
      await u.sendText("done");
      await u.waitFor((m) => m.some((x) => x.text?.startsWith(`A merge needs at least one more file after job #${id}’s; nothing was made.`)));
      expect((await s.app.services.store.listByChat(u.chatId, 20)).length).toBe(1);
      await u.pressButton(final.message_id, `a:${id}:mrg`);
      await u.sendDocument({ bytes: makePdf({ pages: [["Next A"]] }), file_name: "a.pdf" });
      await u.sendDocument({ bytes: await makeJpeg(300, 200), file_name: "photo.jpg" });
      const job = await nextJob(s, u.chatId, id);
      expect([job.status, job.source, job.reason]).toEqual(["ready", "album", null]);
      expect(JSON.parse(job.facts!)).toMatchObject({ pages: 4, parts: 3 });
      expect((await s.app.services.store.listByChat(u.chatId, 20)).length).toBe(2);
      const { openPdf, closePdf } = await import("../../processors/pdf/open.ts");
      const pdf = await openPdf(await resultBytes(s, job.id));
      const texts: string[] = [];
      for (let i = 1; i <= pdf.doc.numPages; i++) texts.push((await (await pdf.doc.getPage(i)).getTextContent()).items.map((x) => ("str" in x ? x.str : "")).join(""));
      await closePdf(pdf);
      expect(texts).toEqual(["Base 1", "Base 2", "Next A", ""]);
      expect(s.em.calls.filter((c) => c.method === "sendMessage" && String(c.params.text).startsWith(`Job #${job.id}: merging the file of job #${id}`))).toHaveLength(1);
    });
  }, 120_000);

  test("to PDF (ru): an image's result offers it; the press makes a one-page PDF of the image", async () => {
    await withStack({}, async (s) => {
      const u = s.em.user({ language_code: "ru" });
      const { id, final } = await readyWithKeyboard(s, u, await makeJpeg(600, 400), "фото.jpg", "Готово, задача № ");
      expect(buttons(final)).toEqual([`a:${id}:pdf`]);
      await u.pressButton(final.message_id, `a:${id}:pdf`);
      const job = await nextJob(s, u.chatId, id);
      expect([job.status, job.variant]).toEqual(["ready", "topdf"]);
      const doc = await PDFDocument.load(await resultBytes(s, job.id));
      expect(doc.getPages().map((p) => Math.round((p.getWidth() / p.getHeight()) * 100) / 100)).toEqual([1.5]);
      expect((await s.app.services.store.results(job.id)).map((r) => r.fileName)).toEqual(["фото.pdf"]);
    });
  }, 120_000);

  test.skipIf(!SEARCHABLE || !toolReady("tesseract") || !toolReady("convert") || !toolReady("tiff2pdf"))("searchable PDF (en): the button on a scan's result makes the searchable variant of the same file", async () => {
    const scan = await makeScanPdf("g4", [ENGLISH_LINES]);
    await withStack({}, async (s) => {
      const u = s.em.user({ language_code: "en" });
      const sent = await u.sendDocument({ bytes: scan, file_name: "scan.pdf" });
      const { id } = await s.waitJob((await s.jobFor(u.chatId, sent.message_id)).id, undefined, 180_000);
      const msgs = await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${id}`) && buttons(x).includes(`a:${id}:ocr`)), 60_000);
      await u.pressButton(msgs.find((x) => x.text?.startsWith(`Done, job #${id}`))!.message_id, `a:${id}:ocr`);
      let next = 0;
      await expect.poll(async () => (next = (await s.app.services.store.listByChat(u.chatId, 20)).find((j) => j.id > id)?.id ?? 0), { timeout: 15_000 }).toBeGreaterThan(0);
      const job = await s.waitJob(next, undefined, 180_000);
      expect([job.status, job.variant, job.fileUniqueId]).toEqual(["ready", "searchable", (await s.app.services.store.get(id))!.fileUniqueId]);
      expect((await s.app.services.store.results(job.id)).map((r) => r.fileName)).toEqual(["scan.txt", "scan-searchable.pdf"]);
    });
  }, 300_000);
});
