/** Text methods against real grammY: exact Bot API errors (botapi-facts.md §3, §6; checklist 8, 9, 11; BR-06). */
import type { Api } from "grammy";
import { describe, expect, it } from "vitest";
import type { Emulator } from "./index.ts";
import { apiFailure, rawCall } from "./raw-call.ts";
import { useEmulator } from "./use-emulator.ts";

let em: Emulator;
let api: Api;
useEmulator((e, a) => {
  em = e;
  api = a;
});

const NOT_MODIFIED =
  "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message";

describe("sendMessage", () => {
  it("returns a Message the chat then shows", async () => {
    const u = em.user({ first_name: "Alice", username: "alice" });
    const m = await api.sendMessage(u.chatId, "hello");
    expect(m).toMatchObject({ chat: { id: u.chatId, type: "private", first_name: "Alice", username: "alice" }, text: "hello", from: { is_bot: true } });
    expect(u.messages()).toMatchObject([{ message_id: m.message_id, from: "bot", text: "hello", edits: 0, deleted: false }]);
    const byName = await api.sendMessage("@alice", "by username");
    expect(byName.chat.id).toBe(u.chatId);
  });

  it("rejects empty and too long texts with the exact descriptions", async () => {
    const u = em.user();
    expect(await apiFailure(api.sendMessage(u.chatId, ""))).toEqual({ code: 400, description: "Bad Request: message text is empty" });
    expect(await apiFailure(api.sendMessage(u.chatId, "   "))).toEqual({ code: 400, description: "Bad Request: message text is empty" });
    expect(await apiFailure(api.sendMessage(u.chatId, "x".repeat(4097)))).toEqual({ code: 400, description: "Bad Request: message is too long" });
    // 4096 UTF-16 units after parsing is fine, even if the markup makes the raw text longer.
    const ok = await api.sendMessage(u.chatId, `<b>${"y".repeat(4096)}</b>`, { parse_mode: "HTML" });
    expect(ok.text).toHaveLength(4096);
    // An emoji outside the BMP counts as two units.
    expect(await apiFailure(api.sendMessage(u.chatId, "😀".repeat(2049)))).toEqual({ code: 400, description: "Bad Request: message is too long" });
  });

  it("parses HTML and MarkdownV2 into entities and rejects malformed markup", async () => {
    const u = em.user();
    const h = await api.sendMessage(u.chatId, 'a <b>bold</b> <a href="https://x.org">link</a> &lt;3', { parse_mode: "HTML" });
    expect(h.text).toBe("a bold link <3");
    expect(h.entities).toEqual([
      { type: "bold", offset: 2, length: 4 },
      { type: "text_link", offset: 7, length: 4, url: "https://x.org" },
    ]);
    const md = await api.sendMessage(u.chatId, "*b* _i_ __u__ `c` 1\\.5", { parse_mode: "MarkdownV2" });
    expect(md.text).toBe("b i u c 1.5");
    expect(md.entities!.map((e) => e.type)).toEqual(["bold", "italic", "underline", "code"]);
    const cases: Array<[string, string, string]> = [
      ["HTML", "<b>open", 'Can\'t find end tag corresponding to start tag "b"'],
      ["HTML", "a <x>b</x>", 'Unsupported start tag "x" at byte offset 2'],
      ["HTML", "<b>x</i>", 'Unmatched end tag at byte offset 4, expected "</b>", found "</i>"'],
      ["HTML", "x</b>", "Unexpected end tag at byte offset 1"],
      ["HTML", "1 < 2", 'Unsupported start tag "" at byte offset 2'],
      ["MarkdownV2", "Done.", "Character '.' is reserved and must be escaped with the preceding '\\'"],
      ["MarkdownV2", "x *bold", "Can't find end of Bold entity at byte offset 2"],
      ["Markdown", "a_b", "Can't find end of the entity starting at byte offset 1"],
    ];
    for (const [mode, text, detail] of cases) {
      const f = await apiFailure(api.sendMessage(u.chatId, text, { parse_mode: mode as "HTML" }));
      expect(f, `${mode} ${text}`).toEqual({ code: 400, description: `Bad Request: can't parse entities: ${detail}` });
    }
    expect(await apiFailure(api.sendMessage(u.chatId, "x", { parse_mode: "BBCode" as "HTML" }))).toEqual({
      code: 400,
      description: "Bad Request: unsupported parse_mode",
    });
  });

  it("answers chat not found, chat_id is empty and 403 for a blocked user", async () => {
    expect(await apiFailure(api.sendMessage(424242, "x"))).toEqual({ code: 400, description: "Bad Request: chat not found" });
    expect((await rawCall(em, "sendMessage", { text: "x" })).body.description).toBe("Bad Request: chat_id is empty");
    const u = em.user();
    u.block();
    expect(await apiFailure(api.sendMessage(u.chatId, "x"))).toEqual({ code: 403, description: "Forbidden: bot was blocked by the user" });
    expect(await apiFailure(api.sendChatAction(u.chatId, "typing"))).toEqual({ code: 403, description: "Forbidden: bot was blocked by the user" });
    u.unblock();
    expect((await api.sendMessage(u.chatId, "x")).text).toBe("x");
  });

  it("honours reply_parameters and allow_sending_without_reply", async () => {
    const u = em.user();
    const sent = await u.sendText("question");
    const r = await api.sendMessage(u.chatId, "answer", { reply_parameters: { message_id: sent.message_id } });
    expect(r.reply_to_message).toMatchObject({ message_id: sent.message_id, text: "question" });
    expect(await apiFailure(api.sendMessage(u.chatId, "x", { reply_parameters: { message_id: 9999 } }))).toEqual({
      code: 400,
      description: "Bad Request: message to be replied not found",
    });
    const loose = await api.sendMessage(u.chatId, "x", { reply_parameters: { message_id: 9999, allow_sending_without_reply: true } });
    expect(loose.reply_to_message).toBeUndefined();
  });

  it("validates callback_data length", async () => {
    const u = em.user();
    const f = await apiFailure(
      api.sendMessage(u.chatId, "k", { reply_markup: { inline_keyboard: [[{ text: "b", callback_data: "x".repeat(65) }]] } }),
    );
    expect(f).toEqual({ code: 400, description: "Bad Request: BUTTON_DATA_INVALID" });
  });
});

describe("edits and deletes", () => {
  it("edits text, refuses identical edits with the full not-modified string, and counts edits", async () => {
    const u = em.user();
    const m = await api.sendMessage(u.chatId, "step 1");
    const e = await api.editMessageText(u.chatId, m.message_id, "step 2");
    expect(e).toMatchObject({ text: "step 2", edit_date: expect.any(Number) });
    expect(await apiFailure(api.editMessageText(u.chatId, m.message_id, "step 2"))).toEqual({ code: 400, description: NOT_MODIFIED });
    // Same text with a new keyboard is a change; the same keyboard again is not.
    const kb = { inline_keyboard: [[{ text: "Cancel", callback_data: "cancel" }]] };
    await api.editMessageText(u.chatId, m.message_id, "step 2", { reply_markup: kb });
    expect(await apiFailure(api.editMessageText(u.chatId, m.message_id, "step 2", { reply_markup: kb }))).toEqual({ code: 400, description: NOT_MODIFIED });
    expect(await apiFailure(api.editMessageReplyMarkup(u.chatId, m.message_id, { reply_markup: kb }))).toEqual({ code: 400, description: NOT_MODIFIED });
    // Same visible text but bold is a change.
    await api.editMessageText(u.chatId, m.message_id, "<b>step 2</b>", { parse_mode: "HTML" });
    expect(u.messages()[0]).toMatchObject({ text: "step 2", edits: 3, entities: [{ type: "bold", offset: 0, length: 6 }] });
    expect(u.messages()[0]!.reply_markup).toBeUndefined();
  });

  it("trims surrounding whitespace like TDLib, so an edit that differs only there is not modified", async () => {
    const u = em.user();
    const m = await api.sendMessage(u.chatId, "\n  <b>done</b>\n", { parse_mode: "HTML" });
    expect(m.text).toBe("done");
    expect(m.entities).toEqual([{ type: "bold", offset: 0, length: 4 }]);
    expect(await apiFailure(api.editMessageText(u.chatId, m.message_id, "<b>done</b>  ", { parse_mode: "HTML" }))).toEqual({
      code: 400,
      description: NOT_MODIFIED,
    });
  });

  it("refuses to edit a user's message", async () => {
    const u = em.user();
    const s = await u.sendText("mine");
    expect(await apiFailure(api.editMessageText(u.chatId, s.message_id, "x"))).toEqual({ code: 400, description: "Bad Request: message can't be edited" });
  });

  it("answers message to edit not found / message to delete not found", async () => {
    const u = em.user();
    expect(await apiFailure(api.editMessageText(u.chatId, 777, "x"))).toEqual({ code: 400, description: "Bad Request: message to edit not found" });
    const m = await api.sendMessage(u.chatId, "bye");
    expect(await api.deleteMessage(u.chatId, m.message_id)).toBe(true);
    expect(u.messages()).toEqual([]);
    expect(u.messages({ includeDeleted: true })[0]).toMatchObject({ deleted: true });
    expect(await apiFailure(api.deleteMessage(u.chatId, m.message_id))).toEqual({ code: 400, description: "Bad Request: message to delete not found" });
    expect(await apiFailure(api.editMessageText(u.chatId, m.message_id, "x"))).toEqual({ code: 400, description: "Bad Request: message to edit not found" });
    expect(u.transcript()).toEqual([`bot #${m.message_id}: bye`, `bot deleted #${m.message_id}`]);
  });
});

describe("chat actions, drafts, callbacks", () => {
  it("records chat actions and rejects unknown ones", async () => {
    const u = em.user();
    expect(await api.sendChatAction(u.chatId, "upload_document")).toBe(true);
    expect(u.chatActions()).toEqual(["upload_document"]);
    expect(await apiFailure(api.sendChatAction(u.chatId, "dancing" as "typing"))).toEqual({
      code: 400,
      description: "Bad Request: wrong parameter action in request",
    });
  });

  it("accepts drafts in private chats only, with a non-zero draft_id and 0..4096 text", async () => {
    const u = em.user();
    const g = em.group();
    expect(await rawCall(em, "sendMessageDraft", { chat_id: u.chatId, draft_id: 256000, text: "Thin" })).toMatchObject({ status: 200, body: { result: true } });
    expect((await rawCall(em, "sendMessageDraft", { chat_id: u.chatId, draft_id: 256000, text: "" })).status).toBe(200);
    expect(u.drafts()).toEqual([{ draft_id: 256000, text: "Thin" }, { draft_id: 256000, text: "" }]);
    expect((await rawCall(em, "sendMessageDraft", { chat_id: g.id, draft_id: 1, text: "x" })).body.description).toBe(
      "Bad Request: TEXTDRAFT_PEER_INVALID",
    );
    expect((await rawCall(em, "sendMessageDraft", { chat_id: u.chatId, draft_id: 0, text: "x" })).status).toBe(400);
    expect((await rawCall(em, "sendMessageDraft", { chat_id: u.chatId, draft_id: 5, text: "x".repeat(4097) })).status).toBe(400);
  });

  it("delivers a button press as callback_query and accepts one answer", async () => {
    const u = em.user();
    const m = await api.sendMessage(u.chatId, "go?", { reply_markup: { inline_keyboard: [[{ text: "Yes", callback_data: "yes" }]] } });
    await expect(u.pressButton(m.message_id, "no")).rejects.toThrow(/no button/);
    const sent = await u.pressButton(m.message_id, "yes");
    const updates = await api.getUpdates({ offset: -1, timeout: 0 });
    expect(updates.at(-1)).toMatchObject({ update_id: sent.update_id, callback_query: { data: "yes", message: { message_id: m.message_id } } });
    expect(await api.answerCallbackQuery(sent.callback_query_id!, { text: "ok" })).toBe(true);
    expect((await apiFailure(api.answerCallbackQuery(sent.callback_query_id!))).description).toBe(
      "Bad Request: query is too old and response timeout expired or query ID is invalid",
    );
  });

  it("sends /commands with a bot_command entity and accepts setMyCommands", async () => {
    const u = em.user();
    const s = await u.sendText("/start@docket_test_bot hi");
    const ups = await api.getUpdates({ offset: s.update_id, timeout: 0 });
    expect(ups[0]!.message!.entities).toEqual([{ type: "bot_command", offset: 0, length: 22 }]);
    expect(await api.setMyCommands([{ command: "start", description: "Start" }])).toBe(true);
    expect(await api.getMyCommands()).toEqual([{ command: "start", description: "Start" }]);
    expect((await apiFailure(api.setMyCommands([{ command: "Bad-Cmd", description: "x" }]))).code).toBe(400);
  });

  it("waitFor resolves on a later bot message and rejects with the transcript on timeout", async () => {
    const u = em.user();
    const waiting = u.waitFor((m) => m.some((x) => x.text === "late"), 2000);
    setTimeout(() => void api.sendMessage(u.chatId, "late"), 50);
    expect((await waiting).map((m) => m.text)).toEqual(["late"]);
    await expect(u.waitFor(() => false, 100)).rejects.toThrow(/timed out.*\n.*bot #1: late/);
  });
});
