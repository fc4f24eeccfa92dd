/**
 * Issue 11 item 7 through the real bot and the strict emulator (rate limits on): a chat-bound call that
 * never gets an answer is aborted at CHAT_CALL_TIMEOUT and sent again, so one stalled request does not
 * freeze the chat (grammY's own client would wait 500 s). The accepted reply and the result album both
 * stall once; the job still ends ready with one reply, both documents and "Done".
 */
import { expect, test } from "vitest";
import { copyRunner } from "../support/copy-runner.ts";
import { withStack } from "../support/with-stack.ts";

const bytes = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 17 + 3) & 255);

test("a stalled reply and a stalled upload are aborted at CHAT_CALL_TIMEOUT and sent again: ready, one reply, one album, Done", async () => {
  await withStack({ emulator: { rateLimits: {} }, runner: copyRunner({ outputs: 2 }), env: { CHAT_CALL_TIMEOUT: "1s" } }, async (s) => {
    const u = s.em.user({ language_code: "en" });
    s.em.stallNext("sendMessage", { chatId: u.chatId });
    s.em.stallNext("sendMediaGroup", { chatId: u.chatId });
    const sent = await u.sendDocument({ bytes: bytes(3000), file_name: "stall.bin" });
    const job = await s.waitJob((await s.jobFor(u.chatId, sent.message_id)).id, ["ready", "failed"], 30_000);
    expect(job.status).toBe("ready");
    const msgs = await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${job.id}`)), 15_000);
    const calls = s.em.calls.filter((c) => c.chatId === u.chatId);
    expect(calls.filter((c) => c.method === "sendMessage").map((c) => c.status)).toEqual([499, 200]);
    expect(calls.filter((c) => c.method === "sendMediaGroup").map((c) => c.status)).toEqual([499, 200]);
    expect(msgs.filter((m) => !m.document)).toHaveLength(1); // the stalled reply never reached the chat: one status message
    expect(msgs.filter((m) => m.document)).toHaveLength(2);
  });
}, 60_000);
