/**
 * Issue 11 item 2, fewer calls per job, through the real bot and the strict emulator (rate limits on):
 * - several results of one job go as one album (sendMediaGroup, caption on the last), more than 10 as
 *   albums of 10 and the rest; /resend sends them the same way by file_id;
 * - a job that is done before the chat could show a progress edit goes from the accepted reply straight
 *   to the final edit: accepted → album → Done, three chat-bound calls.
 */
import { expect, test } from "vitest";
import { copyRunner } from "../support/copy-runner.ts";
import { withStack } from "../support/with-stack.ts";

const bytes = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed * 7 + (i >> 8)) & 255);

test("a job done before the chat could show progress: accepted → one album → Done, and nothing else", async () => {
  await withStack({ emulator: { rateLimits: {} }, runner: copyRunner({ outputs: 2 }) }, async (s) => {
    const u = s.em.user({ language_code: "en" });
    // The accepted reply meets a 429 (retry_after 2): the chat is held while the job downloads and is
    // processed, so the job is done long before the chat can take a progress edit — whatever the load.
    s.em.failNext("sendMessage", { error_code: 429, description: "Too Many Requests: retry after 2", retry_after: 2 }, { chatId: u.chatId });
    const sent = await u.sendDocument({ bytes: bytes(4000, 1), file_name: "quick.bin" });
    const job = await s.waitJob((await s.jobFor(u.chatId, sent.message_id)).id, ["ready", "failed"], 30_000);
    expect(job.status).toBe("ready");
    await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${job.id}`)), 15_000);
    const calls = s.em.calls.filter((c) => c.chatId === u.chatId && c.ok && c.method !== "getFile");
    expect(calls.map((c) => c.method)).toEqual(["sendMessage", "sendMediaGroup", "editMessageText"]);
    expect(String(calls[0]!.params.text)).toContain(`job #${job.id}`);
    // the chat reads: accepted (now Done), then the two documents replying to the file; one edit of the status message
    const shown = u.messages();
    expect(shown.map((m) => (m.document ? `doc ${m.document.file_name}` : m.text!.startsWith(`Done, job #${job.id}`)))).toEqual([true, "doc copy.bin", "doc copy-2.bin"]);
    expect(shown[0]!.edits).toBe(1);
    expect(shown.slice(1).map((m) => [m.reply_to, m.caption || null])).toEqual([
      [sent.message_id, null],
      [sent.message_id, `Job #${job.id}: copy.bin, copy-2.bin`],
    ]);
  });
}, 60_000);

test("eleven results: an album of ten and one document, file_ids stored; /resend sends them the same way by file_id", async () => {
  await withStack({ emulator: { rateLimits: {} }, runner: copyRunner({ outputs: 11 }) }, async (s) => {
    const u = s.em.user({ language_code: "en" });
    const sent = await u.sendDocument({ bytes: bytes(3000, 2), file_name: "many.bin" });
    const job = await s.waitJob((await s.jobFor(u.chatId, sent.message_id)).id, ["ready", "failed"], 30_000);
    expect(job.status).toBe("ready");
    const docs = (await u.waitFor((m) => m.filter((x) => x.document).length === 11, 20_000)).filter((x) => x.document);
    const group = docs[0]!.media_group_id;
    expect(docs.map((d) => d.media_group_id)).toEqual([...Array(10).fill(group), undefined]);
    expect(docs.map((d) => d.caption || null)).toEqual([...Array(9).fill(null), expect.stringMatching(new RegExp(`^Job #${job.id}: copy\\.bin, copy-2\\.bin, .*copy-10\\.bin$`)), `Job #${job.id}: copy-11.bin`]);
    const uploads = s.em.calls.filter((c) => c.chatId === u.chatId && c.ok && (c.method === "sendMediaGroup" || c.method === "sendDocument"));
    expect(uploads.map((c) => c.method)).toEqual(["sendMediaGroup", "sendDocument"]);
    const results = await s.app.services.store.results(job.id);
    expect(results.map((r) => s.em.uploaded(r.telegramFileId!)?.byteLength)).toEqual(Array(11).fill(3000));
    await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${job.id}`)), 15_000);
    await u.sendText(`/resend ${job.id}`);
    await u.waitFor((m) => m.filter((x) => x.document).length === 22, 30_000);
    const again = s.em.calls.filter((c) => c.chatId === u.chatId && c.ok && (c.method === "sendMediaGroup" || c.method === "sendDocument")).slice(2);
    expect(again.map((c) => c.method)).toEqual(["sendMediaGroup", "sendDocument"]);
    expect((again[0]!.params.media as Array<{ media: unknown }>).map((m) => typeof m.media)).toEqual(Array(10).fill("string")); // file_ids: nothing uploaded
  });
}, 90_000);
