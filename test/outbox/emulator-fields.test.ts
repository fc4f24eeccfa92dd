/**
 * The grammY executor's chunk fields against the project's Bot API emulator (audit-002 MEDIUM 6):
 * reply_to goes out as reply_parameters with allow_sending_without_reply (seed 002: a deleted
 * original must not kill the send), link_preview_options on send and edit, reply_markup set again
 * on every edit (seed: «На edit клавиатура выставляется заново»), message_thread_id on sends and
 * chat actions, and ctx.outbox taking the topic from a topic message (middleware). Also splitText's
 * "no blank part" rule end to end (audit-002 MEDIUM 2).
 */
import { Api, Bot, type Context } from "grammy";
import type { Update } from "grammy/types";
import { describe, expect, test } from "vitest";
import { Outbox, outboxMiddleware, type OutboxFlavor } from "../../bot/outbox/index.ts";
import type { Emulator } from "../emulator/index.ts";
import { useEmulator } from "./core-helpers.ts";

let em: Emulator;
useEmulator((e) => (em = e));

/** The parameters of `method` calls to `chatId` that Telegram answered 200, in order. */
function okParams(method: string, chatId: number): Record<string, unknown>[] {
  return em.calls.filter((c) => c.method === method && c.chatId === chatId && c.ok).map((c) => c.params);
}

describe("executor chunk fields (emulator)", () => {
  test("reply_to a message that no longer exists is still delivered (allow_sending_without_reply)", async () => {
    const api = new Api(em.token, { apiRoot: em.apiRoot });
    const outbox = new Outbox();
    const u = em.user();
    const s = outbox.stream(api, u.chatId, { typing: false, replyTo: 999_999 });
    s.update("answer to a deleted message");
    const ids = await s.finish();
    expect(s.outcome()?.status).toBe("ok");
    expect(u.messages().map((m) => [m.message_id, m.text])).toEqual([[ids[0], "answer to a deleted message"]]);
    expect(okParams("sendMessage", u.chatId).map((p) => p.reply_parameters)).toEqual([{ message_id: 999_999, allow_sending_without_reply: true }]);
    await outbox.close();
  });

  test("updateText of 4096 units plus a trailing newline is one message, not a second blank one (400 'message text is empty')", async () => {
    const api = new Api(em.token, { apiRoot: em.apiRoot });
    const outbox = new Outbox();
    const u = em.user();
    const s = outbox.stream(api, u.chatId, { typing: false });
    s.updateText("x".repeat(4096) + "\n");
    const ids = await s.finish();
    expect(s.outcome()).toEqual({ status: "ok", messageIds: ids });
    expect(ids).toHaveLength(1);
    expect(em.calls.filter((c) => c.chatId === u.chatId).map((c) => [c.method, c.status])).toEqual([["sendMessage", 200]]);
    await outbox.close();
  });

  test("link_preview goes out as link_preview_options on the send and on the edit", async () => {
    const api = new Api(em.token, { apiRoot: em.apiRoot });
    const outbox = new Outbox();
    const u = em.user();
    const s = outbox.stream(api, u.chatId, { typing: false });
    s.update({ text: "see https://example.org", link_preview: { is_disabled: true } });
    await u.waitFor((m) => m.length === 1);
    s.update({ text: "see https://example.org/2", link_preview: { url: "https://example.org/2", prefer_small_media: true } });
    await s.finish();
    expect(okParams("sendMessage", u.chatId).map((p) => p.link_preview_options)).toEqual([{ is_disabled: true }]);
    expect(okParams("editMessageText", u.chatId).map((p) => p.link_preview_options)).toEqual([{ url: "https://example.org/2", prefer_small_media: true }]);
    await outbox.close();
  });

  test("same text, new keyboard: the edit sets the keyboard again and the chat shows the new one", async () => {
    const api = new Api(em.token, { apiRoot: em.apiRoot });
    const outbox = new Outbox();
    const u = em.user();
    const kb1 = { inline_keyboard: [[{ text: "Page 1", callback_data: "p1" }]] };
    const kb2 = { inline_keyboard: [[{ text: "Page 2", callback_data: "p2" }]] };
    const s = outbox.stream(api, u.chatId, { typing: false });
    s.update({ text: "Results", reply_markup: kb1 });
    await u.waitFor((m) => m.length === 1);
    s.update({ text: "Results", reply_markup: kb2 });
    await s.finish();
    expect(okParams("editMessageText", u.chatId).map((p) => [p.text, p.reply_markup])).toEqual([["Results", kb2]]);
    expect(u.messages().map((m) => [m.text, m.reply_markup])).toEqual([["Results", kb2]]);
    await outbox.close();
  });

  test("a forum topic stream carries message_thread_id on sendMessage and on sendChatAction", async () => {
    const api = new Api(em.token, { apiRoot: em.apiRoot });
    const outbox = new Outbox();
    const g = em.group();
    const s = outbox.stream(api, g.id, { threadId: 7 }); // typing on: "typing…" goes to the topic too
    await expect.poll(() => em.count("sendChatAction", g.id), { timeout: 5000 }).toBeGreaterThanOrEqual(1);
    s.update("in the topic");
    await s.finish();
    expect(okParams("sendChatAction", g.id).map((p) => p.message_thread_id)).toEqual([7]);
    expect(okParams("sendMessage", g.id).map((p) => [p.text, p.message_thread_id])).toEqual([["in the topic", 7]]);
    await outbox.close();
  });

  test("middleware: ctx.outbox replies into the topic of a topic message", async () => {
    const outbox = new Outbox();
    const bot = new Bot<Context & OutboxFlavor>(em.token, { client: { apiRoot: em.apiRoot } });
    bot.use(outboxMiddleware(outbox));
    bot.on("message:text", (ctx) => ctx.outbox.send(`echo: ${ctx.msg.text}`).then(() => undefined));
    await bot.init();
    const g = em.group();
    const u = em.user();
    const base = { date: Math.floor(Date.now() / 1000), chat: { id: g.id, type: "supergroup" as const, title: "forum", is_forum: true as const }, from: { id: u.id, is_bot: false, first_name: "u" } };
    const inTopic: Update = { update_id: 1, message: { ...base, message_id: 10, text: "in topic", message_thread_id: 42, is_topic_message: true } };
    // a plain reply thread (no topic): message_thread_id names the thread, but it is not a topic
    const notTopic: Update = { update_id: 2, message: { ...base, message_id: 11, text: "plain", message_thread_id: 5 } };
    await bot.handleUpdate(inTopic);
    await bot.handleUpdate(notTopic);
    expect(okParams("sendMessage", g.id).map((p) => [p.text, p.message_thread_id])).toEqual([
      ["echo: in topic", 42],
      ["echo: plain", undefined],
    ]);
    await outbox.close();
  }, 15_000);
});
