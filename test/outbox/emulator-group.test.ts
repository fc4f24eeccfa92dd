/**
 * The group pace (FAQ: ≤ 20 messages per minute in a group) against the emulator's enforced
 * sliding window, scaled down 20× so it runs in seconds (audit-002 LOW 7): the emulator's window
 * is 3 s instead of 60 s, and every outbox message interval is its default divided by 20. A
 * stream that edits as fast as it likes must stay inside the window: zero 429.
 */
import { Api } from "grammy";
import { describe, expect, test } from "vitest";
import { Outbox } from "../../bot/outbox/index.ts";
import { makeOptions } from "../../bot/outbox/options.ts";
import type { Emulator } from "../emulator/index.ts";
import { maxInWindow, sleep, useEmulator } from "./core-helpers.ts";

const SCALE = 20;
const WINDOW_MS = 60_000 / SCALE;
const GROUP_PER_WINDOW = 20;

let em: Emulator;
// per-chat and global buckets scaled the same way, so only the group window can bind
useEmulator((e) => (em = e), { rateLimits: { groupPerMin: GROUP_PER_WINDOW, groupWindowMs: WINDOW_MS, perChatBurst: 3, perChatPerSec: SCALE, globalPerSec: 30 * SCALE } });

describe("group pace (emulator, scaled 1:20)", () => {
  test("a group stream edited every 20 ms stays within 20 sends+edits per window: no 429", async () => {
    const d = makeOptions();
    const outbox = new Outbox({
      options: {
        sendIntervalMs: d.sendIntervalMs / SCALE,
        editIntervalMs: d.editIntervalMs / SCALE,
        messageIntervalMs: d.messageIntervalMs / SCALE,
        groupMessageIntervalMs: d.groupMessageIntervalMs / SCALE,
        maxAttempts: 1, // a 429 is not an attempt, but any other failure would show at once
      },
    });
    const api = new Api(em.token, { apiRoot: em.apiRoot });
    const g = em.group();
    const s = outbox.stream(api, g.id, { typing: false });
    const until = performance.now() + 1.5 * WINDOW_MS;
    let i = 0;
    while (performance.now() < until) {
      s.update(`tick ${i++}`);
      await sleep(20);
    }
    s.update("final");
    await s.finish();
    await outbox.close();

    const calls = em.calls.filter((c) => c.chatId === g.id);
    expect(calls.filter((c) => c.status === 429)).toEqual([]);
    const at = calls.filter((c) => c.method === "sendMessage" || c.method === "editMessageText").map((c) => c.at);
    expect(at.length).toBeGreaterThan(GROUP_PER_WINDOW); // the window really was filled and slid
    expect(maxInWindow(at, WINDOW_MS)).toBeLessThanOrEqual(GROUP_PER_WINDOW);
    expect(g.messages().map((m) => m.text)).toEqual(["final"]);
  }, 30_000);
});
