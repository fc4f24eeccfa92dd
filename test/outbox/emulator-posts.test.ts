/**
 * Posts against the project's Bot API emulator (real grammY over HTTP, default enforced limits:
 * per chat burst 3 + 1/s over sends and edits, 30/s bot-wide): uploads and a stream of edits in one
 * chat share one pace (zero 429); a 429 on an upload silences the chat's text too; a 429 met by a
 * plain Api call outside the outbox holds the chat's outbox calls (issue 11 item 1).
 */
import { Api, InputFile } from "grammy";
import { describe, expect, test } from "vitest";
import { chatHoldsTransformer, Outbox, type OutboxEvent } from "../../bot/outbox/index.ts";
import type { Emulator } from "../emulator/index.ts";
import { sleep, useEmulator } from "./core-helpers.ts";

let em: Emulator;
useEmulator((e) => (em = e));

const file = (n: number) => new InputFile(new Uint8Array(2000).fill(n), `r${n}.bin`);

describe("posts through the outbox (emulator)", () => {
  test("six uploads and a stream of edits in one chat: one pace, zero 429, documents in order", async () => {
    const api = new Api(em.token, { apiRoot: em.apiRoot });
    const outbox = new Outbox();
    const u = em.user();
    const status = outbox.stream(api, u.chatId, { typing: false });
    const uploads = Array.from({ length: 6 }, (_, i) => outbox.post(api, u.chatId, { method: "sendDocument", document: file(i) }));
    for (let k = 0; k < 40; k++) {
      status.update(`progress ${k}`);
      await sleep(100);
    }
    status.update("done");
    const sent = await Promise.all(uploads);
    await status.finish();
    await outbox.close();
    expect(em.calls.filter((c) => c.chatId === u.chatId && c.status === 429)).toEqual([]);
    expect(sent.map((m) => m.document.file_name)).toEqual(["r0.bin", "r1.bin", "r2.bin", "r3.bin", "r4.bin", "r5.bin"]);
    expect(u.messages().filter((m) => m.document).map((m) => m.document!.file_name)).toEqual(["r0.bin", "r1.bin", "r2.bin", "r3.bin", "r4.bin", "r5.bin"]);
    expect(u.messages().find((m) => m.text)!.text).toBe("done");
  }, 30_000);

  test("a 429 on an upload holds the chat: no edit, send or upload to it until retry_after has passed", async () => {
    const api = new Api(em.token, { apiRoot: em.apiRoot });
    const events: OutboxEvent[] = [];
    const outbox = new Outbox({ options: { maxAttempts: 1 }, events: (e) => events.push(e) });
    const u = em.user();
    em.failNext("sendDocument", { error_code: 429, description: "Too Many Requests: retry after 3", retry_after: 3 }, { chatId: u.chatId });
    await outbox.send(api, u.chatId, "accepted");
    const progress = outbox.stream(api, u.chatId, { typing: false });
    const upload = outbox.post(api, u.chatId, { method: "sendDocument", document: file(9) });
    for (let k = 0; k < 40; k++) {
      progress.update(`progress ${k}`);
      await sleep(100);
    }
    const msg = await upload; // maxAttempts 1: the 429 was not an attempt
    await progress.finish();
    await outbox.close();
    const calls = em.calls.filter((c) => c.chatId === u.chatId);
    const hit = calls.find((c) => c.status === 429)!;
    expect(hit.method).toBe("sendDocument");
    expect(calls.filter((c) => c.at > hit.at && c.at < hit.at + 3000).map((c) => c.method)).toEqual([]);
    expect(msg.document.file_name).toBe("r9.bin");
    expect(events.filter((e) => e.type === "ChatHold")).toHaveLength(1);
  }, 30_000);

  test("a 429 met outside the outbox (a plain Api call with chat_id) holds that chat's outbox calls", async () => {
    const outbox = new Outbox();
    const plain = new Api(em.token, { apiRoot: em.apiRoot });
    plain.config.use(chatHoldsTransformer(outbox, plain));
    const api = new Api(em.token, { apiRoot: em.apiRoot });
    const u = em.user();
    em.failNext("getChat", { error_code: 429, description: "Too Many Requests: retry after 2", retry_after: 2 }, { chatId: u.chatId });
    await expect(plain.getChat(u.chatId)).rejects.toMatchObject({ error_code: 429 });
    const t0 = Date.now();
    await outbox.send(api, u.chatId, "after the hold");
    await outbox.post(api, u.chatId, { method: "sendDocument", document: file(1) });
    await outbox.close();
    const sent = em.calls.filter((c) => c.chatId === u.chatId && c.method !== "getChat");
    expect(sent.map((c) => c.method)).toEqual(["sendMessage", "sendDocument"]);
    expect(sent[0]!.at).toBeGreaterThanOrEqual(t0 + 2000 - 100);
  }, 30_000);
});
