/**
 * Issue 11 item 1: every chat-bound call under one budget. 66 private chats each send a small file
 * within one second; each job has two results (like a PDF's text + preview). The emulator enforces
 * Telegram's limits (per chat burst 3 + 1/s over sends and edits, 30/s bot-wide). Every accepted
 * reply, status edit, result upload and final edit goes through the outbox's one pacing: zero 429.
 */
import { expect, test } from "vitest";
import { copyRunner } from "../support/copy-runner.ts";
import { withStack } from "../support/with-stack.ts";

const CHATS = 66;
const bytes = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed * 7 + (i >> 8)) & 255);

test(`${CHATS} chats send a file within one second: every job ready, zero 429`, async () => {
  await withStack({ emulator: { rateLimits: {} }, runner: copyRunner({ outputs: 2 }), env: { DOWNLOAD_CONCURRENCY: "8" } }, async (s) => {
    const users = Array.from({ length: CHATS }, () => s.em.user({ language_code: "en" }));
    const sent = await Promise.all(users.map((u, i) => u.sendDocument({ bytes: bytes(1500 + i, i), file_name: `f${i}.bin` })));
    const jobs = await Promise.all(users.map((u, i) => s.jobFor(u.chatId, sent[i]!.message_id)));
    for (const j of jobs) expect((await s.waitJob(j.id, ["ready", "failed"], 120_000)).status).toBe("ready");
    await Promise.all(users.map((u, i) => u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${jobs[i]!.id}`)), 60_000)));
    const n429 = s.em.calls.filter((c) => c.status === 429);
    const chatBound = s.em.calls.filter((c) => c.chatId !== undefined && c.method !== "getFile");
    console.log(`[one budget] ${CHATS} chats: ${chatBound.length} chat-bound calls (${(chatBound.length / CHATS).toFixed(2)} per job), ${n429.length} × 429`);
    expect(n429.map((c) => `${c.method} ${c.description}`)).toEqual([]);
  });
}, 180_000);
