/**
 * End to end (issue 2): the real bot (grammY + runner + engine + processors in a
 * child process) against the project's Bot API emulator over HTTP, with SQLite
 * and files on disk. Chat users send files; assertions read what the chat shows
 * and the job rows.
 */
import { sentDocuments } from "../support/sent-documents.ts";
import sharp from "sharp";
import { afterEach, describe, expect, test } from "vitest";
import { makePdf } from "../../scripts/samples/index.ts";
import { FILE_DOWNLOAD } from "../emulator/index.ts";
import { startStack, type Stack } from "../support/stack.ts";

let stack: Stack | null = null;
afterEach(async () => {
  await stack?.stop();
  stack = null;
});

const threePages = () => makePdf({ pages: [["Hello page 1"], ["Hello page 2"], ["Hello page 3"]] });
const jpeg = (w: number, h: number) => sharp({ create: { width: w, height: h, channels: 3, background: { r: 200, g: 30, b: 30 } } }).jpeg().toBuffer();
const png = (w: number, h: number) => sharp({ create: { width: w, height: h, channels: 3, background: { r: 10, g: 90, b: 200 } } }).png().toBuffer();


describe("a document goes from a chat to a processed result", () => {
  test("a PDF: accepted → fetched → processing → ready, result document, expiry stated", async () => {
    stack = await startStack();
    const alice = stack.em.user({ language_code: "en" });
    const sent = await alice.sendDocument({ bytes: await threePages(), file_name: "Contract.pdf", mime_type: "application/pdf" });
    const job = await stack.waitJob((await stack.jobFor(alice.chatId, sent.message_id)).id);
    expect(job.status).toBe("ready");
    expect(JSON.parse(job.facts!)).toMatchObject({ type: "application/pdf", pages: 3 });
    expect(job.resultExpiresAt).not.toBeNull();
    expect(job.localPath).not.toBeNull();
    const results = await stack.app.services.store.results(job.id);
    // text and a page-1 preview; what Telegram received is byte for byte the stored result
    expect(results.map((r) => [r.fileName, r.mime])).toEqual([["Contract.txt", "text/plain; charset=utf-8"], ["Contract-page1.jpg", "image/jpeg"]]);
    for (const r of results) expect(stack.em.uploaded(r.telegramFileId!)).toEqual(new Uint8Array(await Bun.file(r.path).arrayBuffer()));
    const msgs = await alice.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${job.id}`)), 10_000);
    const status = msgs.find((x) => x.text?.startsWith(`Done, job #${job.id}`))!;
    // "Done" is said only after `ready` is committed and the source deleted (database first, then files)
    expect(await Bun.file(job.localPath!).exists()).toBe(false);
    expect(status.text).toContain("PDF, 3 pages");
    expect(status.text).toMatch(/kept until \d{4}-\d\d-\d\d \d\d:\d\d \(UTC\)/);
    expect(msgs.filter((m) => m.document).length).toBe(results.length);
    // the first reply was "accepted, job N", as a reply to the file
    expect(alice.transcript().join("\n")).toContain(`job #${job.id}. Queued`);
  });

  test("a photo: the largest size is downloaded, facts are its size, the photo note is given", async () => {
    stack = await startStack();
    const bob = stack.em.user({ language_code: "ru" });
    const sent = await bob.sendPhoto({ bytes: await jpeg(1280, 960), sizes: [[90, 67], [320, 240], [1280, 960]] });
    const job = await stack.waitJob((await stack.jobFor(bob.chatId, sent.message_id)).id);
    expect(job.status).toBe("ready");
    expect(job.source).toBe("photo");
    expect(JSON.parse(job.facts!)).toMatchObject({ width: 1280, height: 960 });
    const msgs = await bob.waitFor((m) => m.some((x) => x.text?.startsWith("Готово")), 10_000);
    expect(msgs.find((x) => x.text?.startsWith("Готово"))!.text).toContain("Отправлено как фото, поэтому Telegram его сжал");
  });

  test("a mislabeled file: a PNG named contract.pdf is processed as a PNG and the reply says so", async () => {
    stack = await startStack();
    const u = stack.em.user({ language_code: "en" });
    const sent = await u.sendDocument({ bytes: await png(420, 300), file_name: "contract.pdf", mime_type: "application/pdf" });
    const job = await stack.waitJob((await stack.jobFor(u.chatId, sent.message_id)).id);
    expect(job.status).toBe("ready");
    expect(job.detectedType).toBe("image/png");
    const msgs = await u.waitFor((m) => m.some((x) => x.text?.startsWith("Done")), 10_000);
    expect(msgs.find((x) => x.text?.startsWith("Done"))!.text).toContain("It was sent as “.pdf”, but the content is: PNG image.");
  });

  test("a file over the cloud limit is refused at intake, naming the limit, with no getFile (BR-01)", async () => {
    stack = await startStack();
    const u = stack.em.user({ language_code: "en" });
    const sent = await u.sendDocument({ bytes: await threePages(), file_name: "big.pdf", file_size: 26_214_400 });
    const row = await stack.jobFor(u.chatId, sent.message_id);
    const job = await stack.waitJob(row.id);
    expect([job.status, job.reason]).toEqual(["failed", "too_big"]);
    const msgs = await u.waitFor((m) => m.some((x) => x.text?.includes("download limit")));
    expect(msgs[0]!.text).toBe(`The file is 25 MB, over this bot’s 20 MB download limit. Job #${job.id} will not run.`);
    await Bun.sleep(300);
    expect(stack.em.count("getFile")).toBe(0);
  });

  test("a redelivered update was answered the first time: never a second job, never a second reply", async () => {
    stack = await startStack();
    const u = stack.em.user({ language_code: "en" });
    const sent = await u.sendDocument({ bytes: await threePages(), file_name: "a.pdf" });
    const row = await stack.jobFor(u.chatId, sent.message_id);
    await stack.waitJob(row.id);
    await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${row.id}`)));
    const before = u.messages().length;
    stack.em.redeliver(sent.update_id);
    await expect.poll(() => stack!.logs.some((l) => l.includes("redelivered update: answered when it was first handled"))).toBe(true);
    expect((await stack.app.services.store.listByChat(u.chatId, 10)).length).toBe(1);
    expect(u.messages()).toHaveLength(before);
  });

  test("the same file sent twice: one job; the second time the stored result is re-sent by file_id", async () => {
    stack = await startStack();
    const u = stack.em.user({ language_code: "en" });
    const bytes = await threePages();
    const first = await u.sendDocument({ bytes, file_name: "same.pdf" });
    const job = await stack.waitJob((await stack.jobFor(u.chatId, first.message_id)).id);
    const uploadsBefore = sentDocuments(stack.em.calls.filter((c) => c.ok)).length;
    expect(uploadsBefore).toBe(2); // text + page-1 preview, as one album
    const getFileBefore = stack.em.count("getFile");
    await u.sendDocument({ bytes, file_name: "same again.pdf" });
    await u.waitFor((m) => m.some((x) => x.text?.includes(`already processed (job #${job.id})`)), 10_000);
    await u.waitFor((m) => m.filter((x) => x.document).length === 2 * (uploadsBefore), 10_000);
    expect(stack.em.count("getFile")).toBe(getFileBefore);
    const resends = sentDocuments(stack.em.calls.filter((c) => c.ok)).slice(uploadsBefore);
    expect(resends.map((d) => [d.method, d.upload])).toEqual([["sendMediaGroup", false], ["sendMediaGroup", false]]); // file_ids, not uploads
    expect((await stack.app.services.store.listByChat(u.chatId, 10)).length).toBe(1);
  });

  test("a user not allowed gets a polite refusal and no job", async () => {
    stack = await startStack({ env: { ALLOWED_USER_IDS: "1,2" } });
    const u = stack.em.user({ id: 777, language_code: "en" });
    await u.sendDocument({ bytes: await threePages(), file_name: "x.pdf" });
    const msgs = await u.waitFor((m) => m.length > 0);
    expect(msgs[0]!.text).toBe("Sorry, this bot is available to invited users only.");
    expect(await stack.app.services.store.listByChat(u.chatId, 10)).toEqual([]);
  });

  test("local mode reads the file from the emulator's disk, no HTTP download", async () => {
    stack = await startStack({ emulator: { mode: "local" } });
    const u = stack.em.user({ language_code: "en" });
    const sent = await u.sendDocument({ bytes: await threePages(), file_name: "local.pdf" });
    const job = await stack.waitJob((await stack.jobFor(u.chatId, sent.message_id)).id);
    expect(job.status).toBe("ready");
    expect(JSON.parse(job.facts!).pages).toBe(3);
    // The emulator records every /file/ request (even the ones a local server answers 404), so this can fail.
    expect(stack.em.count(FILE_DOWNLOAD)).toBe(0);
    expect(stack.em.count("getFile")).toBeGreaterThanOrEqual(1);
  });

  test("cloud mode downloads over /file/bot<token>/<file_path> exactly once per getFile, token never recorded", async () => {
    stack = await startStack();
    const u = stack.em.user({ language_code: "en" });
    const sent = await u.sendDocument({ bytes: await threePages(), file_name: "cloud.pdf" });
    const job = await stack.waitJob((await stack.jobFor(u.chatId, sent.message_id)).id);
    expect(job.status).toBe("ready");
    const downloads = stack.em.calls.filter((c) => c.method === FILE_DOWNLOAD);
    expect(downloads.map((c) => [c.status, c.params.file_path])).toEqual([[200, expect.stringMatching(/^documents\/file_\d+\.pdf$/)]]);
    expect(stack.em.count("getFile")).toBe(1);
    expect(JSON.stringify(stack.em.calls)).not.toContain(stack.em.token);
  });
});
