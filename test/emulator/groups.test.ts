/** Groups: getChatMember statuses and errors, anonymous admins and channels as senders (`sender_chat`). */
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
