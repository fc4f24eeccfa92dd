/**
 * Field cases against the project's Bot API emulator (real grammY over HTTP on 127.0.0.1,
 * default enforced limits): BR-06 (429 storm + "message is not modified"), drafts, blocked
 * user, async context through grammY's transformer chain, groups.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { Api, Bot, type Context } from "grammy";
import { describe, expect, test } from "vitest";
import { Outbox, outboxMiddleware, StreamFailedError, type OutboxEvent, type OutboxFlavor } from "../../bot/outbox/index.ts";
import type { Emulator } from "../emulator/index.ts";
import { sleep, useEmulator } from "./core-helpers.ts";

let em: Emulator;
useEmulator((e) => (em = e));
const NOT_MODIFIED =
  "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message";

describe("outbox field cases (emulator)", () => {
  test("a key move whose delete Telegram refuses: the old message is edited in place, one copy in the chat (issue 11 item 7)", async () => {
    const api = new Api(em.token, { apiRoot: em.apiRoot });
    const outbox = new Outbox();
    const u = em.user();
    const kb = (n: number) => ({ inline_keyboard: [[{ text: "Yes", callback_data: `yes-${n}` }]] });
    const s = outbox.stream(api, u.chatId, { typing: false });
    s.update([{ text: "Send? rev 1", key: "r1", reply_markup: kb(1) }]);
    await expect.poll(() => u.messages().length).toBe(1);
    em.failNext("deleteMessage", { error_code: 400, description: "Bad Request: message can't be deleted" }, { chatId: u.chatId });
    s.update([{ text: "Send? rev 2", key: "r2", reply_markup: kb(2) }]);
    const ids = await s.finish();
    await outbox.close();
    expect(em.calls.filter((c) => c.chatId === u.chatId).map((c) => [c.method, c.status])).toEqual([
      ["sendMessage", 200],
      ["deleteMessage", 400],
      ["editMessageText", 200],
    ]);
    expect(u.messages().map((m) => [m.message_id, m.text, JSON.stringify(m.reply_markup).includes("yes-2")])).toEqual([[ids[0], "Send? rev 2", true]]);
    expect(s.outcome()?.status).toBe("ok");
  });

  test("BR-06: the 3rd edit gets 429 retry_after 5 → chat silent for 5 s, not an attempt, edits collapse, not-modified is success", async () => {
    const api = new Api(em.token, { apiRoot: em.apiRoot });
    const events: OutboxEvent[] = [];
    // maxAttempts 1: a single counted failure would kill the stream, so survival proves 429 and not-modified are not attempts
    const outbox = new Outbox({ options: { maxAttempts: 1 }, events: (e) => events.push(e) });
    const alice = em.user();
    const chatId = alice.chatId;
    let edits = 0;
    em.failNext("editMessageText", { error_code: 429, description: "Too Many Requests: retry after 5", retry_after: 5 }, { chatId, match: () => ++edits === 3 });
    const typing = outbox.stream(api, chatId); // keeps "typing…" going: it must be held too
    const status = outbox.stream(api, chatId, { typing: false });
    const log: { at: number; k: number }[] = [];
    let injectedNotModified = false;
    for (let k = 0; k <= 95; k++) {
      status.update([{ text: `Processing page ${k * 30}/3000` }]);
      log.push({ at: Date.now(), k });
      if (!injectedNotModified && em.count("editMessageText", chatId) === 4) {
        em.failNext("editMessageText", { error_code: 400, description: NOT_MODIFIED }, { chatId });
        injectedNotModified = true;
      }
      await sleep(100);
    }
    status.update([{ text: "✅ ready: 3000 pages" }]);
    const ids = await status.finish();
    await typing.finish();
    await outbox.close();

    const calls = em.calls.filter((c) => c.chatId === chatId);
    const hit = calls.find((c) => c.status === 429)!;
    expect(hit.method).toBe("editMessageText");
    const during = calls.filter((c) => c.at > hit.at && c.at < hit.at + 5000);
    expect(during).toEqual([]); // no request of any kind to that chat during the hold
    const after = calls.filter((c) => c.at >= hit.at + 5000);
    const firstEdit = after.find((c) => c.method === "editMessageText")!;
    // the first edit after the hold carries the latest text of that moment, not a queued old one
    // (allow for an update that raced the request by a few ms)
    const sentK = Number(/Processing page (\d+)/.exec(String(firstEdit.params.text))![1]) / 30;
    const latestBefore = log.filter((x) => x.at <= firstEdit.at - 50).at(-1)!.k;
    expect(sentK).toBeGreaterThanOrEqual(latestBefore);
    expect(log.find((x) => x.k === sentK)!.at).toBeGreaterThan(hit.at + 4000);
    expect(after.filter((c) => c.method === "editMessageText" && c.at < firstEdit.at + 900)).toHaveLength(1);
    expect(injectedNotModified).toBe(true);
    expect(calls.filter((c) => c.description?.includes("message is not modified"))).toHaveLength(1);
    expect(calls.filter((c) => c.status === 429)).toHaveLength(1);
    expect(status.outcome()?.status).toBe("ok");
    expect(alice.messages().map((m) => [m.message_id, m.text])).toEqual([[ids[0], "✅ ready: 3000 pages"]]);
    expect(events.map((e) => e.type)).toEqual(["ChatHold"]);
    expect(events[0]).toMatchObject({ chatId, retryAfterMs: 5000 });
    expect(alice.chatActions().length).toBeGreaterThanOrEqual(2);
  }, 30_000);

  test("drafts in a private chat: sendMessageDraft while writing (non-zero draft_id), a real sendMessage at the end; a group edits instead", async () => {
    const api = new Api(em.token, { apiRoot: em.apiRoot });
    const outbox = new Outbox({ options: { draftsEnabled: true, draftIntervalMs: 200 } });
    const bob = em.user();
    const s = outbox.stream(api, bob.chatId);
    let text = "";
    for (let i = 0; i < 12; i++) {
      text += `word${i} `;
      s.update(text);
      await sleep(100);
    }
    const ids = await s.finish();
    const drafts = bob.drafts();
    expect(drafts.length).toBeGreaterThanOrEqual(3);
    expect(drafts.every((d) => d.draft_id !== 0)).toBe(true);
    expect(em.count("editMessageText", bob.chatId)).toBe(0);
    expect(em.count("sendMessage", bob.chatId)).toBe(1);
    expect(bob.messages().map((m) => [m.message_id, m.text])).toEqual([[ids[0], text.trim()]]); // Telegram trims trailing spaces

    const g = em.group();
    const gs = outbox.stream(api, g.id);
    gs.update("first");
    await sleep(300);
    gs.update("second");
    await gs.finish();
    expect(em.count("sendMessageDraft", g.id)).toBe(0);
    expect(g.messages().map((m) => m.text)).toEqual(["second"]);
    await outbox.close();
  }, 30_000);

  test("a user who blocked the bot kills the stream: StreamFailedError with the ids delivered before", async () => {
    const api = new Api(em.token, { apiRoot: em.apiRoot });
    const events: OutboxEvent[] = [];
    const outbox = new Outbox({ events: (e) => events.push(e) });
    const carol = em.user();
    const s = outbox.stream(api, carol.chatId, { typing: false });
    s.update(["one"]);
    await carol.waitFor((m) => m.length === 1);
    carol.block();
    s.update(["one", "two"]);
    const err = await s.finish().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StreamFailedError);
    expect((err as StreamFailedError).messageIds).toEqual([carol.messages()[0]!.message_id]);
    expect((err as StreamFailedError).reason).toBe("Forbidden: bot was blocked by the user");
    expect(events.map((e) => e.type)).toEqual(["StreamFailed"]);
    await outbox.close();
  });

  test("each stream's calls run in its opener's AsyncLocalStorage context, through grammY's transformers", async () => {
    const als = new AsyncLocalStorage<string>();
    const api = new Api(em.token, { apiRoot: em.apiRoot });
    const seen: [string, string | undefined][] = [];
    api.config.use((prev, method, payload, signal) => {
      seen.push([method, als.getStore()]);
      return prev(method, payload, signal);
    });
    const outbox = new Outbox();
    const dave = em.user();
    const a = als.run("update-1", () => outbox.stream(api, dave.chatId, { typing: false }));
    const b = als.run("update-2", () => outbox.stream(api, dave.chatId, { typing: false }));
    a.update("from update 1");
    b.update("from update 2");
    await Promise.all([a.finish(), b.finish()]);
    await outbox.send(api, dave.chatId, "one-shot"); // opened outside any update
    expect(seen).toEqual([
      ["sendMessage", "update-1"],
      ["sendMessage", "update-2"],
      ["sendMessage", undefined],
    ]);
    await outbox.close();
  });

  test("dropping reply_markup from a chunk removes the keyboard on the next edit", async () => {
    const api = new Api(em.token, { apiRoot: em.apiRoot });
    const outbox = new Outbox();
    const erin = em.user();
    const s = outbox.stream(api, erin.chatId, { typing: false });
    s.update({ text: "Continue?", reply_markup: { inline_keyboard: [[{ text: "Yes", callback_data: "yes" }]] } });
    await erin.waitFor((m) => m.length === 1);
    expect(erin.messages()[0]!.reply_markup).toBeDefined();
    s.update({ text: "Continuing…" });
    await s.finish();
    expect(erin.messages().map((m) => [m.text, m.reply_markup])).toEqual([["Continuing…", undefined]]);
    await outbox.close();
  });

  test("middleware: ctx.outbox is bound to the update's chat and replies through the chat machine", async () => {
    const outbox = new Outbox();
    const bot = new Bot<Context & OutboxFlavor>(em.token, { client: { apiRoot: em.apiRoot } });
    bot.use(outboxMiddleware(outbox));
    bot.on("message:text", async (ctx) => {
      const s = ctx.outbox.stream({ typing: false, replyTo: ctx.msg.message_id });
      s.update(`echo: ${ctx.msg.text}`);
      await s.finish();
    });
    await bot.init();
    const frank = em.user();
    const sent = await frank.sendText("hello");
    const updates = await bot.api.getUpdates({ timeout: 0 });
    for (const u of updates) await bot.handleUpdate(u);
    const shown = frank.messages();
    expect(shown.map((m) => [m.text, m.reply_to])).toEqual([["echo: hello", sent.message_id]]);
    await outbox.close();
  });

  test("adopt: a stream takes over an existing status message (after a restart) and edits it in place", async () => {
    const api = new Api(em.token, { apiRoot: em.apiRoot });
    const gina = em.user();
    const old = await api.sendMessage(gina.chatId, "Processing page 10/3000");
    const outbox = new Outbox();
    const s = outbox.stream(api, gina.chatId, { typing: false, adopt: [old.message_id] });
    s.update([{ text: "Processing page 20/3000" }]);
    expect(await s.finish()).toEqual([old.message_id]);
    expect(gina.messages().map((m) => [m.message_id, m.text, m.edits])).toEqual([[old.message_id, "Processing page 20/3000", 1]]);
    expect(em.count("sendMessage", gina.chatId)).toBe(1);
    // adopting and finishing without an update sends nothing and reports the id
    const quiet = outbox.stream(api, gina.chatId, { typing: false, adopt: [old.message_id] });
    expect(await quiet.finish()).toEqual([old.message_id]);
    expect(em.count("editMessageText", gina.chatId)).toBe(1);
    await outbox.close();
  });
});
