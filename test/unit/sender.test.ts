/** bot/intake/sender.ts: who sent a message (sender_chat before from) and who may act on a job or /settings (issue 11 item 6). */
import { describe, expect, test } from "vitest";
import { CHANNEL_BOT_ID, GROUP_ANONYMOUS_BOT_ID, mayActOnJob, mayChangeSettings, senderOf, type Sender } from "../../bot/intake/sender.ts";

const GROUP = -4_000_000_001;
const CHANNEL = -1_002_000_000_001;
const alice: Sender = senderOf({ from: { id: 11 }, chat: { id: GROUP } })!;
const anon: Sender = senderOf({ from: { id: GROUP_ANONYMOUS_BOT_ID }, sender_chat: { id: GROUP }, chat: { id: GROUP } })!;
const channel: Sender = senderOf({ from: { id: CHANNEL_BOT_ID }, sender_chat: { id: CHANNEL }, chat: { id: GROUP } })!;

describe("senderOf", () => {
  test("sender_chat names the sender when present: the group for an anonymous admin, the channel for a channel", () => {
    expect(alice).toEqual({ id: 11, userId: 11, anonymousAdmin: false, channel: false });
    expect(anon).toEqual({ id: GROUP, userId: GROUP_ANONYMOUS_BOT_ID, anonymousAdmin: true, channel: false });
    expect(channel).toEqual({ id: CHANNEL, userId: CHANNEL_BOT_ID, anonymousAdmin: false, channel: true });
    expect(senderOf({ chat: { id: CHANNEL } })).toBeNull();
  });
});

describe("mayActOnJob (/cancel, /delete)", () => {
  const cases: Array<[string, number, Sender, string, number[], string]> = [
    ["the owner", 11, alice, "group", [], "yes"],
    ["a bot admin", 99, alice, "group", [11], "yes"],
    ["another member of a group: ask getChatMember", 99, alice, "supergroup", [], "ask"],
    ["someone else in a private chat", 99, alice, "private", [], "no"],
    ["an anonymous admin, on a member's job", 11, anon, "supergroup", [], "yes"],
    ["an anonymous admin, on their own (the group's) job", GROUP, anon, "group", [], "yes"],
    ["a channel, on a member's job", 11, channel, "supergroup", [], "no"],
    ["a channel, on its own job", CHANNEL, channel, "supergroup", [], "yes"],
    ["another channel, on a channel's job", CHANNEL - 1, channel, "supergroup", [], "no"],
    ["a member, on an anonymous admin's job (owned by the group, not by GroupAnonymousBot)", GROUP, alice, "group", [GROUP_ANONYMOUS_BOT_ID], "ask"],
  ];
  test.each(cases)("%s", (_name, owner, s, type, admins, want) => expect(mayActOnJob(owner, s, type, admins)).toBe(want));
  test("a member whose id equals GroupAnonymousBot's never matches an anonymous admin's job by from", () => {
    const fake = senderOf({ from: { id: GROUP_ANONYMOUS_BOT_ID }, chat: { id: GROUP } })!;
    expect(mayActOnJob(GROUP, fake, "group", [])).toBe("no");
  });
});

describe("mayChangeSettings", () => {
  test("anyone in private; in groups bot admins and anonymous admins at once, members by getChatMember, channels never", () => {
    expect(mayChangeSettings(alice, "private", [])).toBe("yes");
    expect(mayChangeSettings(alice, "group", [11])).toBe("yes");
    expect(mayChangeSettings(alice, "group", [])).toBe("ask");
    expect(mayChangeSettings(anon, "supergroup", [])).toBe("yes");
    expect(mayChangeSettings(channel, "supergroup", [])).toBe("no");
  });
});
