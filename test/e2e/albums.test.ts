/**
 * Albums through the real bot and the emulator (issue 13 item 5): photos or image documents sent as one
 * album (`media_group_id`, each part its own update) become ONE job with one reply and ONE PDF, pages in
 * album order; each part has its own getFile right before its own download; a part that is not an image
 * is named in the final message and the rest still makes the PDF.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { PDFDocument } from "@cantoo/pdf-lib";
import sharp from "sharp";
import { describe, expect, test } from "vitest";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { characterErrorRate } from "../../scripts/samples/cer.ts";
import { ENGLISH_LINES, makePdf, RUSSIAN_LINES, typesetPage } from "../../scripts/samples/index.ts";
import { toolPath, toolReady } from "../support/tools.ts";
import { FILE_DOWNLOAD, type ApiCall } from "../emulator/index.ts";
import { startStack, type Stack } from "../support/stack.ts";
import { checkLogs, withStack } from "../support/with-stack.ts";
import { sentDocuments } from "../support/sent-documents.ts";

/** A flat-colour JPEG of `width`×`height` (its aspect ratio tells the pages apart). */
const jpeg = (width: number, height: number, r: number) => sharp({ create: { width, height, channels: 3, background: { r, g: 90, b: 40 } } }).jpeg().toBuffer().then((b) => new Uint8Array(b));
const png = (width: number, height: number) => sharp({ create: { width, height, channels: 4, background: { r: 0, g: 0, b: 200, alpha: 0.5 } } }).png().toBuffer().then((b) => new Uint8Array(b));

/** Texts of the sendMessage calls the bot made to `chatId` that Telegram accepted. */
const textsSent = (calls: readonly ApiCall[], chatId: number) => calls.filter((c) => c.method === "sendMessage" && c.chatId === chatId && c.ok).map((c) => String(c.params.text));

/** Aspect ratios (width / height, 2 decimals) of the pages of a PDF's bytes. */
async function pageRatios(bytes: Uint8Array): Promise<number[]> {
  const doc = await PDFDocument.load(bytes);
  return doc.getPages().map((p) => Math.round((p.getWidth() / p.getHeight()) * 100) / 100);
}

describe("albums end to end (issue 13 item 5)", () => {
  test("a photo album (ru): one reply, one job, one PDF with the photos in album order; a getFile right before each part's download", async () => {
    await withStack({ env: { ALBUM_QUIET: "1s" } }, async (s) => {
      const u = s.em.user({ language_code: "ru" });
      const photos = [await jpeg(400, 200, 10), await jpeg(200, 400, 80), await jpeg(300, 300, 160)];
      const sent = [];
      for (const p of photos) sent.push(await u.sendPhoto({ bytes: p, media_group_id: "A1" }));
      const job = await s.jobFor(u.chatId, sent[0]!.message_id);
      expect(job).toMatchObject({ source: "album", fileUniqueId: "album:A1" });
      const done = await s.waitJob(job.id, undefined, 60_000);
      expect([done.status, done.reason]).toEqual(["ready", null]);
      expect(JSON.parse(done.facts!)).toMatchObject({ type: "application/pdf", pages: 3, parts: 3 });
      expect((await s.app.services.store.listByChat(u.chatId, 10)).map((j) => j.id)).toEqual([job.id]);
      const results = await s.app.services.store.results(job.id);
      expect(results.map((r) => [r.fileName, r.mime])).toEqual([["album.pdf", "application/pdf"]]);
      expect(await pageRatios(s.em.uploaded(results[0]!.telegramFileId!)!)).toEqual([2, 0.5, 1]);
      // One reply for the album (its status message, edited into the final one).
      const msgs = await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Готово, задача № ${job.id}`)));
      expect(textsSent(s.em.calls, u.chatId)).toEqual([`Принял альбом, задача № ${job.id}. Соберу все его файлы в один PDF в порядке альбома.`]);
      expect(msgs.find((m) => m.text?.startsWith("Готово"))!.text).toContain("один PDF, 3 страницы, из 3 файлов");
      // Seed 000, per part: getFile, then that part's download, three times.
      const fetches = s.em.calls.filter((c) => c.method === "getFile" || c.method === FILE_DOWNLOAD).map((c) => (c.method === "getFile" ? `getFile ${String(c.params.file_id)}` : "download"));
      expect(fetches).toEqual(sent.flatMap((x) => [`getFile ${x.file_id}`, "download"]));
    });
  }, 120_000);

  test("an album of documents (en) with a text file in it: the file is named in the final message, the images still make the PDF", async () => {
    await withStack({ env: { ALBUM_QUIET: "1s" } }, async (s) => {
      const u = s.em.user({ language_code: "en" });
      const a = await u.sendDocument({ bytes: await png(300, 600), file_name: "scan-1.png", media_group_id: "D1" });
      await u.sendDocument({ bytes: new TextEncoder().encode("just some notes\n"), file_name: "notes.txt", media_group_id: "D1" });
      await u.sendDocument({ bytes: await jpeg(800, 400, 200), file_name: "scan-3.jpg", media_group_id: "D1" });
      const job = await s.waitJob((await s.jobFor(u.chatId, a.message_id)).id, undefined, 60_000);
      expect([job.status, job.reason]).toEqual(["ready", null]);
      expect(JSON.parse(job.facts!)).toMatchObject({ pages: 2, parts: 3, failedParts: [{ part: 2, name: "notes.txt", reason: "unsupported_type" }] });
      const results = await s.app.services.store.results(job.id);
      expect(results.map((r) => r.fileName)).toEqual(["scan-1.pdf"]);
      expect(await pageRatios(s.em.uploaded(results[0]!.telegramFileId!)!)).toEqual([0.5, 2]);
      const msgs = await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${job.id}`)));
      const final = msgs.find((m) => m.text?.startsWith("Done"))!.text!;
      expect(final).toContain("one PDF of 2 pages from 3 files; file 2 “notes.txt” was left out:");
      expect(textsSent(s.em.calls, u.chatId)).toEqual([`Got an album, job #${job.id}. I’ll collect its files and make one PDF of them, in album order.`]);
      expect(sentDocuments(s.em.calls).filter((d) => d.status === 200)).toHaveLength(1);
    });
  }, 120_000);

  test("merge (issue 15 item 3): PDFs sent as one album become one PDF in the order sent, text kept; an encrypted one is named and left out", async () => {
    await withStack({ env: { ALBUM_QUIET: "1s" } }, async (s) => {
      const u = s.em.user({ language_code: "en" });
      const a = await u.sendDocument({ bytes: makePdf({ pages: [["First A"], ["First B"]] }), file_name: "first.pdf", media_group_id: "M1" });
      await u.sendDocument({ bytes: makePdf({ pages: [["Locked"]], encrypt: { userPassword: "pw", ownerPassword: "pw" } }), file_name: "locked.pdf", media_group_id: "M1" });
      await u.sendDocument({ bytes: makePdf({ pages: [["Second"]] }), file_name: "second.pdf", media_group_id: "M1" });
      const job = await s.waitJob((await s.jobFor(u.chatId, a.message_id)).id, undefined, 60_000);
      expect([job.status, job.reason]).toEqual(["ready", null]);
      const results = await s.app.services.store.results(job.id);
      expect(results.map((r) => r.fileName)).toEqual(["first.pdf"]);
      const { openPdf, closePdf } = await import("../../processors/pdf/open.ts");
      const pdf = await openPdf(s.em.uploaded(results[0]!.telegramFileId!)!);
      const texts: string[] = [];
      for (let i = 1; i <= pdf.doc.numPages; i++) texts.push((await (await pdf.doc.getPage(i)).getTextContent()).items.map((x) => ("str" in x ? x.str : "")).join(""));
      await closePdf(pdf);
      expect(texts).toEqual(["First A", "First B", "Second"]);
      await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${job.id}: one PDF of 3 pages from 3 files; file 2 “locked.pdf” was left out: `)));
    });
  }, 120_000);

  test.skipIf(!toolReady("convert"))(
    "a part that comes while the album is downloading joins it (en): its own getFile after the part before it, one reply, one PDF with it in album order — a BMP part (ImageMagick) included",
    async () => {
      await withStack({ env: { ALBUM_QUIET: "1s" } }, async (s) => {
        const u = s.em.user({ language_code: "en" });
        const store = s.app.services.store;
        // The getFile of part 1 passes at once; part 2's is held: the album is downloading while part 3 comes.
        const hold1 = s.em.holdGetFile();
        const hold2 = s.em.holdGetFile();
        const a = await u.sendDocument({ bytes: await jpeg(400, 200, 10), file_name: "p1.jpg", media_group_id: "J1" });
        const b = await u.sendDocument({ bytes: await jpeg(200, 400, 80), file_name: "p2.jpg", media_group_id: "J1" });
        const { id } = await s.jobFor(u.chatId, a.message_id);
        await hold1.arrived;
        hold1.release();
        await hold2.arrived;
        expect(await store.get(id)).toMatchObject({ status: "accepted", leaseOwner: expect.any(String) });
        expect((await store.parts(id)).map((p) => p.status)).toEqual(["fetched", "accepted"]);
        // 60×80, red: a BMP, which sharp cannot read (the image processor's decoder reads it).
        const bmp = new Uint8Array(execFileSync(toolPath("convert")!, ["-size", "60x80", "xc:red", "bmp3:-"]));
        const c = await u.sendDocument({ bytes: bmp, file_name: "p3.bmp", media_group_id: "J1" });
        await expect.poll(async () => (await store.parts(id)).map((p) => [p.messageId, p.status]), { timeout: 15_000 }).toEqual([
          [a.message_id, "fetched"],
          [b.message_id, "accepted"],
          [c.message_id, "accepted"],
        ]);
        hold2.release();
        const done = await s.waitJob(id, undefined, 60_000);
        expect([done.status, done.reason]).toEqual(["ready", null]);
        expect(JSON.parse(done.facts!)).toMatchObject({ pages: 3, parts: 3 });
        expect(JSON.parse(done.facts!).failedParts).toBeUndefined();
        expect((await store.listByChat(u.chatId, 10)).map((j) => j.id)).toEqual([id]);
        const results = await store.results(id);
        expect(await pageRatios(s.em.uploaded(results[0]!.telegramFileId!)!)).toEqual([2, 0.5, 0.75]);
        // Seed 000 for the part that joined too: its own getFile right before its own download, after part 2's.
        const fetches = s.em.calls.filter((x) => x.method === "getFile" || x.method === FILE_DOWNLOAD).map((x) => (x.method === "getFile" ? `getFile ${String(x.params.file_id)}` : "download"));
        expect(fetches).toEqual([a, b, c].flatMap((x) => [`getFile ${x.file_id}`, "download"]));
        await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${id}: one PDF of 3 pages from 3 files`)));
        expect(textsSent(s.em.calls, u.chatId)).toEqual([`Got an album, job #${id}. I’ll collect its files and make one PDF of them, in album order.`]);
      });
    },
    120_000,
  );

  test("a joined part's budget share: when it does not fit beside another download, the album waits for the budget with its parts on disk kept, then downloads only the new part", async () => {
    const x = new Uint8Array(await sharp(randomBytes(200 * 100 * 3), { raw: { width: 200, height: 100, channels: 3 } }).jpeg({ quality: 100 }).toBuffer());
    const p1 = await jpeg(400, 200, 10);
    const p2 = await jpeg(200, 400, 80);
    const p3 = await jpeg(300, 300, 160);
    // Multiplier 1, no floor: the budget is exactly the other file plus the album's first two parts.
    const env = { ALBUM_QUIET: "1s", BUDGET_MULTIPLIER: "1", BUDGET_MIN_RESERVATION: "1", DOWNLOAD_BUDGET: String(x.byteLength + p1.byteLength + p2.byteLength) };
    await withStack({ env }, async (s) => {
      const u = s.em.user({ language_code: "en" });
      const store = s.app.services.store;
      const holdX = s.em.holdGetFile();
      const hold1 = s.em.holdGetFile();
      const hold2 = s.em.holdGetFile();
      const other = await u.sendDocument({ bytes: x, file_name: "other.jpg" });
      await holdX.arrived; // the other file is downloading: its reservation is held
      const a = await u.sendDocument({ bytes: p1, file_name: "p1.jpg", media_group_id: "B1" });
      const b = await u.sendDocument({ bytes: p2, file_name: "p2.jpg", media_group_id: "B1" });
      const { id } = await s.jobFor(u.chatId, a.message_id);
      await hold1.arrived;
      hold1.release();
      await hold2.arrived;
      expect((await store.get(id))!.reservedBytes).toBe(p1.byteLength + p2.byteLength);
      const c = await u.sendDocument({ bytes: p3, file_name: "p3.jpg", media_group_id: "B1" });
      await expect.poll(async () => (await store.parts(id)).length, { timeout: 15_000 }).toBe(3);
      hold2.release();
      // Part 3's share does not fit beside the other file's: the album gives its lease back and waits.
      await expect.poll(async () => {
        const j = (await store.get(id))!;
        return [j.status, j.leaseOwner, j.reservedBytes, (await store.parts(id)).map((p) => p.status)];
      }, { timeout: 15_000 }).toEqual(["accepted", null, p1.byteLength + p2.byteLength, ["fetched", "fetched", "accepted"]]);
      expect(s.em.calls.filter((x) => x.method === "getFile" && x.params.file_id === c.file_id)).toEqual([]);
      holdX.release();
      const done = await s.waitJob(id, undefined, 60_000);
      expect([done.status, done.reason]).toEqual(["ready", null]);
      expect(JSON.parse(done.facts!)).toMatchObject({ pages: 3, parts: 3 });
      // Parts 1 and 2 were not fetched again; part 3 once, after the budget had room.
      const getFiles = (fileId: string | undefined) => s.em.calls.filter((x) => x.method === "getFile" && x.params.file_id === fileId).length;
      expect([getFiles(a.file_id), getFiles(b.file_id), getFiles(c.file_id)]).toEqual([1, 1, 1]);
      expect((await s.waitJob((await s.jobFor(u.chatId, other.message_id)).id, undefined, 60_000)).status).toBe("ready");
      expect(await pageRatios(s.em.uploaded((await store.results(id))[0]!.telegramFileId!)!)).toEqual([2, 0.5, 1]);
    });
  }, 120_000);

  test("a part that comes after the album's download finished is a job of its own, and the chat is told so (ru); the album's PDF is as it was", async () => {
    await withStack({ env: { ALBUM_QUIET: "1s" } }, async (s) => {
      const u = s.em.user({ language_code: "ru" });
      const store = s.app.services.store;
      const a = await u.sendDocument({ bytes: await jpeg(400, 200, 10), file_name: "p1.jpg", media_group_id: "K1" });
      await u.sendDocument({ bytes: await jpeg(200, 400, 80), file_name: "p2.jpg", media_group_id: "K1" });
      const album = await s.waitJob((await s.jobFor(u.chatId, a.message_id)).id, undefined, 60_000);
      expect([album.status, JSON.parse(album.facts!).parts]).toEqual(["ready", 2]);
      // Telegram delivered the album's third file this late: the album's download is long over.
      const late = await u.sendDocument({ bytes: await jpeg(300, 300, 160), file_name: "p3.jpg", media_group_id: "K1" });
      const own = await s.jobFor(u.chatId, late.message_id);
      expect(own.id).not.toBe(album.id);
      expect(own).toMatchObject({ source: "document", declaredName: "p3.jpg" });
      expect([(await s.waitJob(own.id, undefined, 60_000)).status]).toEqual(["ready"]);
      expect(await store.parts(album.id)).toHaveLength(2);
      expect(textsSent(s.em.calls, u.chatId)).toEqual([
        `Принял альбом, задача № ${album.id}. Соберу все его файлы в один PDF в порядке альбома.`,
        `«p3.jpg» пришёл, когда альбом (задача № ${album.id}) уже собирался, поэтому в его PDF не попал: это отдельная задача № ${own.id}.`,
      ]);
    });
  }, 120_000);

  test("the daily quota counts every part (en): a part after USER_MAX_BYTES_PER_DAY is used up is left out and named with the reason, the rest is made; the album is one job for USER_MAX_JOBS_IN_FLIGHT", async () => {
    const p1 = await jpeg(400, 200, 10);
    const p2 = await png(300, 600);
    // Parts 1 and 2 use the day's bytes exactly: part 3 comes after the quota is used up.
    await withStack({ env: { ALBUM_QUIET: "1s", USER_MAX_BYTES_PER_DAY: String(p1.byteLength + p2.byteLength), USER_MAX_JOBS_IN_FLIGHT: "1" } }, async (s) => {
      const u = s.em.user({ language_code: "en" });
      const a = await u.sendDocument({ bytes: p1, file_name: "p1.jpg", media_group_id: "Q1" });
      await u.sendDocument({ bytes: p2, file_name: "p2.png", media_group_id: "Q1" });
      const c = await u.sendDocument({ bytes: await jpeg(300, 300, 160), file_name: "p3.jpg", media_group_id: "Q1" });
      const job = await s.waitJob((await s.jobFor(u.chatId, a.message_id)).id, undefined, 60_000);
      expect([job.status, job.reason, job.realSize]).toEqual(["ready", null, p1.byteLength + p2.byteLength]);
      expect(JSON.parse(job.facts!)).toMatchObject({ pages: 2, parts: 3, failedParts: [{ part: 3, name: "p3.jpg", reason: "daily_quota" }] });
      // Part 3 was never downloaded.
      expect(s.em.calls.filter((x) => x.method === "getFile" && x.params.file_id === c.file_id)).toEqual([]);
      const msgs = await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${job.id}`)));
      expect(msgs.find((m) => m.text?.startsWith("Done"))!.text).toContain(
        "one PDF of 2 pages from 3 files; file 3 “p3.jpg” was left out: It came after you had sent 0.1 MB in the last 24 hours, and the daily limit is 0.1 MB.",
      );
      expect(textsSent(s.em.calls, u.chatId)).toEqual([`Got an album, job #${job.id}. I’ll collect its files and make one PDF of them, in album order.`]);
    });
  }, 120_000);

  test("an album refused by USER_MAX_JOBS_IN_FLIGHT gets one refusal, not one per part (en); no album job", async () => {
    await withStack({ env: { ALBUM_QUIET: "1s", USER_MAX_JOBS_IN_FLIGHT: "1" } }, async (s) => {
      const u = s.em.user({ language_code: "en" });
      const store = s.app.services.store;
      const hold = s.em.holdGetFile();
      const busy = await u.sendDocument({ bytes: await jpeg(100, 100, 50), file_name: "busy.jpg" });
      await hold.arrived; // one job in flight: the limit is reached
      const first = await u.sendPhoto({ bytes: await jpeg(400, 200, 10), media_group_id: "N1" });
      await u.sendPhoto({ bytes: await jpeg(200, 400, 10), media_group_id: "N1" });
      await u.sendPhoto({ bytes: await jpeg(300, 300, 10), media_group_id: "N1" });
      const own = await s.jobFor(u.chatId, busy.message_id);
      await u.waitFor((m) => m.some((x) => x.reply_to === first.message_id && x.text?.startsWith("You already have 1 files in progress")));
      // Parts 2 and 3 were handled: each logged that its album had its refusal already.
      await expect.poll(() => s.logs.filter((l) => l.includes("no second refusal")).length, { timeout: 15_000 }).toBe(2);
      hold.release();
      expect((await s.waitJob(own.id, undefined, 60_000)).status).toBe("ready");
      expect((await store.listByChat(u.chatId, 10)).map((j) => j.id)).toEqual([own.id]);
      await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${own.id}`)));
      const texts = textsSent(s.em.calls, u.chatId);
      expect(texts.filter((t) => t.startsWith("You already have"))).toHaveLength(1);
      expect(texts).toHaveLength(2);
    });
  }, 120_000);

  test("a crash mid-album resumes per part: the part on disk is kept (no second getFile for it), the others are downloaded by the new process", async () => {
    const first = await startStack({ env: { ALBUM_QUIET: "1s" } });
    let second: Stack | null = null;
    try {
      const u = first.em.user({ language_code: "en" });
      // Every download trickles (1 KB per 40 ms): part 1 (2 KB) lands quickly, part 2 (200 KB) is still coming when the bot stops.
      first.em.faultFileDownload({ kind: "trickle", chunkBytes: 1024, everyMs: 40 }, 2);
      const tiny = await jpeg(16, 32, 30);
      // Random pixels do not compress: ≈ 200 KB of JPEG.
      const big = await sharp(randomBytes(600 * 300 * 3), { raw: { width: 600, height: 300, channels: 3 } }).jpeg({ quality: 100 }).toBuffer();
      const a = await u.sendDocument({ bytes: tiny, file_name: "p1.jpg", media_group_id: "R1" });
      const b = await u.sendDocument({ bytes: new Uint8Array(big), file_name: "p2.jpg", media_group_id: "R1" });
      const c = await u.sendDocument({ bytes: await jpeg(300, 300, 99), file_name: "p3.jpg", media_group_id: "R1" });
      const { id } = await first.jobFor(u.chatId, a.message_id);
      await expect.poll(async () => (await first.app.services.store.parts(id)).map((p) => p.status), { timeout: 15_000 }).toEqual(["fetched", "accepted", "accepted"]);
      await expect.poll(() => first.em.calls.filter((x) => x.method === "getFile" && x.params.file_id === b.file_id).length).toBe(1);
      await first.stop({ keep: true });
      expect((await first.app.services.store.get(id))!.status).toBe("accepted");
      second = await startStack({ resume: first, env: { ALBUM_QUIET: "1s" } });
      const done = await second.waitJob(id, undefined, 60_000);
      expect([done.status, done.reason]).toEqual(["ready", null]);
      expect(JSON.parse(done.facts!)).toMatchObject({ pages: 3, parts: 3 });
      const getFiles = (fileId: string | undefined) => second!.em.calls.filter((x) => x.method === "getFile" && x.params.file_id === fileId).length;
      expect([getFiles(a.file_id), getFiles(b.file_id), getFiles(c.file_id)]).toEqual([1, 2, 1]);
      const results = await second.app.services.store.results(id);
      expect(await pageRatios(second.em.uploaded(results[0]!.telegramFileId!)!)).toEqual([0.5, 2, 1]);
      checkLogs(second);
    } finally {
      if (second) await second.stop();
      else await first.stop();
    }
  }, 120_000);

  test.skipIf(!toolReady("tesseract") || !toolReady("convert"))("a scanned album with /settings → searchable PDF (en): its pages are recognized; the .txt and a PDF with a text layer come back", async () => {
    const dir = mkdtempSync(join(tmpdir(), "docket-album-ocr-"));
    try {
      await typesetPage(ENGLISH_LINES, join(dir, "1.png"));
      await typesetPage(RUSSIAN_LINES, join(dir, "2.png"));
      await withStack({ env: { ALBUM_QUIET: "1s" } }, async (s) => {
        const u = s.em.user({ language_code: "en" });
        await s.app.services.store.setSettings(u.chatId, { pdfAction: "searchable" }, Date.now());
        const a = await u.sendDocument({ bytes: new Uint8Array(readFileSync(join(dir, "1.png"))), file_name: "scan-1.png", media_group_id: "S1" });
        await u.sendDocument({ bytes: new Uint8Array(readFileSync(join(dir, "2.png"))), file_name: "scan-2.png", media_group_id: "S1" });
        const job = await s.waitJob((await s.jobFor(u.chatId, a.message_id)).id, undefined, 180_000);
        expect([job.status, job.variant, job.reason]).toEqual(["ready", "searchable", null]);
        expect(JSON.parse(job.facts!)).toMatchObject({ pages: 2, parts: 2, ocr: { recognized: 2 } });
        const results = await s.app.services.store.results(job.id);
        expect(results.map((r) => r.fileName)).toEqual(["scan-1.txt", "scan-1-searchable.pdf"]);
        const { openPdf, closePdf } = await import("../../processors/pdf/open.ts");
        const { extractText } = await import("../../processors/pdf/text.ts");
        const doc = await openPdf(s.em.uploaded(results[1]!.telegramFileId!)!);
        try {
          const { pageTexts } = await extractText(doc, 10_000);
          expect(characterErrorRate(pageTexts[0]!, ENGLISH_LINES.join("\n"))).toBeLessThanOrEqual(0.02);
          expect(characterErrorRate(pageTexts[1]!, RUSSIAN_LINES.join("\n"))).toBeLessThanOrEqual(0.02);
        } finally {
          await closePdf(doc);
        }
        await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${job.id}: one PDF of 2 pages from 2 files; 2 pages recognized`)));
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
