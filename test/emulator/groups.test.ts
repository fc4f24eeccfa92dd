/** Groups: getChatMember statuses and errors, anonymous admins and channels as senders (`sender_chat`), forged presses. */
import type { Api } from "grammy";
import { describe, expect, it } from "vitest";
import type { Emulator } from "./index.ts";
import { apiFailure } from "./raw-call.ts";
import { useEmulator } from "./use-emulator.ts";

let em: Emulator;
let api: Api;
useEmulator((e, a) => {
  em = e;
  api = a;
});

describe("getChatMember", () => {
  it("answers each member's status; a known user outside the group is left; the rights of an administrator", async () => {
    const g = em.group();
    const [owner, admin, member, outsider] = [em.user(), em.user(), em.user(), em.user()];
    g.member(owner, "creator");
    g.member(admin, "administrator");
    g.member(member);
    expect((await api.getChatMember(g.id, owner.id)).status).toBe("creator");
    const a = await api.getChatMember(g.id, admin.id);
    expect(a).toMatchObject({ status: "administrator", user: { id: admin.id, is_bot: false }, can_delete_messages: true, can_be_edited: false });
    expect(await api.getChatMember(g.id, member.id)).toEqual({ user: member.user, status: "member" });
    expect(await api.getChatMember(g.id, outsider.id)).toMatchObject({ status: "left", user: { id: outsider.id } });
  });

  it("refuses as Telegram does: chat not found, invalid user_id, user not found", async () => {
    const g = em.group();
    expect(await apiFailure(api.getChatMember(-42, 1))).toEqual({ code: 400, description: "Bad Request: chat not found" });
    expect(await apiFailure(api.getChatMember(g.id, 0))).toEqual({ code: 400, description: "Bad Request: invalid user_id specified" });
    expect(await apiFailure(api.getChatMember(g.id, 999))).toEqual({ code: 400, description: "Bad Request: user not found" });
  });
});

describe("senders with sender_chat", () => {
  it("an anonymous admin writes as the group (from GroupAnonymousBot); a channel as itself (from Channel_Bot); sender_chat follows from", async () => {
    const g = em.group({ title: "Team" });
    await g.anonymousAdmin().sendText("/settings");
    await g.channel({ id: -1_002_000_000_777, title: "News" }).sendText("post");
    const [a, c] = await api.getUpdates({ timeout: 0 });
    expect(Object.keys(a!.message!).slice(0, 4)).toEqual(["message_id", "from", "sender_chat", "chat"]);
    expect(a!.message).toMatchObject({ from: { id: 1087968824, is_bot: true, username: "GroupAnonymousBot" }, sender_chat: { id: g.id, type: "group", title: "Team" }, chat: { id: g.id } });
    expect(c!.message).toMatchObject({ from: { id: 136817688, is_bot: true, username: "Channel_Bot" }, sender_chat: { id: -1_002_000_000_777, type: "channel", title: "News" }, chat: { id: g.id } });
    const plain = g.member(em.user());
    await plain.sendText("hi");
    const [p] = await api.getUpdates({ offset: c!.update_id + 1, timeout: 0 });
    expect(p!.message!.sender_chat).toBeUndefined();
  });
});

/** The updates queued since the last call (earlier tests' updates are confirmed and skipped). */
let confirmed = 0;
async function fresh() {
  const all = await api.getUpdates({ offset: confirmed + 1, timeout: 0 });
  if (all.length) confirmed = all.at(-1)!.update_id;
  return all;
}

describe("an administrator who remains anonymous", () => {
  it("writes as the group, presses as themselves; getChatMember says is_anonymous; others are not anonymous", async () => {
    const g = em.group({ title: "Team" });
    const person = em.user({ first_name: "Ann" });
    const ann = g.member(person, "administrator", { anonymous: true });
    const bob = g.member(em.user(), "administrator");
    expect(ann.id).toBe(person.id);
    expect(await api.getChatMember(g.id, person.id)).toMatchObject({ status: "administrator", is_anonymous: true, user: { id: person.id } });
    expect(await api.getChatMember(g.id, bob.id)).toMatchObject({ status: "administrator", is_anonymous: false });
    expect(() => g.member(em.user(), "member", { anonymous: true })).toThrow(/only the creator or an administrator/);
    await fresh();
    await ann.sendText("hello");
    const [m] = await fresh();
    expect(m!.message).toMatchObject({ from: { id: 1087968824 }, sender_chat: { id: g.id }, text: "hello" });
    const sent = await api.sendMessage(g.id, "pick", { reply_markup: { inline_keyboard: [[{ text: "A", callback_data: "a" }]] } });
    await ann.pressButton(sent.message_id, "a");
    const [q] = await fresh();
    expect(q!.callback_query).toMatchObject({ from: { id: person.id, first_name: "Ann" }, data: "a", message: { message_id: sent.message_id } });
    expect(q!.callback_query).not.toHaveProperty("sender_chat");
  });
});

describe("pressForged", () => {
  it("sends data no button has, on a bot message of the chat only; the query is answered once", async () => {
    const g = em.group();
    const u = g.member(em.user());
    const sent = await api.sendMessage(g.id, "pick", { reply_markup: { inline_keyboard: [[{ text: "A", callback_data: "a" }]] } });
    await expect(u.pressButton(sent.message_id, "zzz")).rejects.toThrow(/has no button/);
    await fresh();
    const press = await u.pressForged(sent.message_id, "zzz");
    const [q] = await fresh();
    expect(q!.callback_query).toMatchObject({ id: press.callback_query_id, data: "zzz", from: { id: u.id } });
    expect(await api.answerCallbackQuery(press.callback_query_id!)).toBe(true);
    expect(await apiFailure(api.answerCallbackQuery(press.callback_query_id!))).toMatchObject({ code: 400 });
    await expect(u.pressForged(9999, "zzz")).rejects.toThrow(/no bot message 9999/);
  });
});
