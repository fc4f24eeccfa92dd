/**
 * The emulator's UpdateQueue with an injected clock and fake timers (audit 000 E1, E2):
 * updates live 24 h from their message's `edit_date`/`date` (TBA `add_message`; DOC #getupdates
 * "not kept longer than 24 hours"), callback queries 150 s; 409 Conflict answers are paced like
 * TBA's `fail_query_conflict` (botapi-facts.md §2: "At most one immediate 409 per 3 s, others delayed 3 s").
 */
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { ApiError, E } from "./api-error.ts";
import { UpdateQueue } from "./update-queue.ts";

const T0 = Date.parse("2026-11-30T10:00:00.000Z");
const DAY = 86_400_000;
let now = T0;
let q: UpdateQueue;
const signal = () => new AbortController().signal;
const msg = (text: string, date = Math.floor(now / 1000), extra: Record<string, unknown> = {}) => ({ message: { message_id: 1, date, chat: { id: 5, type: "private" }, text, ...extra } });
const texts = (r: unknown[]) => r.map((u) => (u as { message?: { text: string } }).message?.text ?? Object.keys(u as object).find((k) => k !== "update_id"));
const poll = (o: Partial<{ offset: number; limit: number; timeout: number }> = {}) => q.getUpdates({ offset: 0, limit: 100, timeout: 0, ...o }, signal(), now);

beforeEach(() => {
  now = T0;
  q = new UpdateQueue(1, async () => {}, false, () => now);
});
afterEach(() => q.close());

describe("updates older than 24 h are not served (E1)", () => {
  test("a message waits 24 h minus a second: served; at 24 h: gone, not pending", async () => {
    q.push(msg("old"));
    now = T0 + DAY - 1000;
    expect(texts(await poll())).toEqual(["old"]);
    expect(q.pending).toBe(1);
    now = T0 + DAY;
    expect(await poll()).toEqual([]);
    expect(q.pending).toBe(0);
  });

  test("the lifetime counts from edit_date when the message was edited", async () => {
    q.push({ edited_message: { message_id: 1, date: Math.floor((T0 - 23 * 3_600_000) / 1000), edit_date: Math.floor(T0 / 1000), chat: { id: 5, type: "private" }, text: "edited" } });
    now = T0 + DAY - 1000;
    expect(await poll()).toHaveLength(1);
    now = T0 + DAY;
    expect(await poll()).toEqual([]);
  });

  test("a message already older than 24 h is never queued and uses no update_id", async () => {
    const first = q.push(msg("fresh"));
    expect(q.push(msg("stale", Math.floor((T0 - DAY) / 1000)))).toBe(0);
    expect(q.push(msg("next"))).toBe(first + 1);
    expect(texts(await poll())).toEqual(["fresh", "next"]);
  });

  test("a callback query lives 150 s from arrival; an update without a date 24 h", async () => {
    q.push({ callback_query: { id: "1", from: { id: 5 }, chat_instance: "c", data: "x" } });
    q.push({ poll: { id: "p1", question: "?" } });
    now = T0 + 149_000;
    expect(texts(await poll())).toEqual(["callback_query", "poll"]);
    now = T0 + 150_000;
    expect(texts(await poll())).toEqual(["poll"]);
    now = T0 + DAY;
    expect(await poll()).toEqual([]);
  });

  test("a waiting long poll is not woken by a message too old to queue", async () => {
    let woken = false;
    const p = q.getUpdates({ offset: 0, limit: 100, timeout: 2 }, signal(), now).then((r) => ((woken = true), r));
    expect(q.push(msg("stale", Math.floor((T0 - DAY) / 1000)))).toBe(0);
    await Bun.sleep(20);
    expect(woken).toBe(false);
    q.push(msg("live"));
    expect(texts(await p)).toEqual(["live"]);
  });

  test("webhook delivery skips expired updates too", async () => {
    const got: string[] = [];
    const hook = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: async (r) => (got.push(((await r.json()) as { message: { text: string } }).message.text), new Response("ok")) });
    try {
      q.push(msg("a day old"));
      now = T0 + DAY;
      q.push(msg("fresh"));
      q.setWebhook({ url: `http://127.0.0.1:${hook.port}/`, maxConnections: 40 });
      const until = Date.now() + 3000;
      while (got.length < 1 && Date.now() < until) await Bun.sleep(10);
      await Bun.sleep(50);
      expect(got).toEqual(["fresh"]);
    } finally {
      q.deleteWebhook();
      await hook.stop(true);
    }
  });
});

describe("409 pacing (E2, TBA fail_query_conflict)", () => {
  beforeEach(() => void vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] }));
  afterEach(() => void vi.useRealTimers());

  /** Settle-state of a getUpdates promise. */
  function track(p: Promise<unknown[]>) {
    const s: { done: boolean; err?: ApiError; value?: unknown[] } = { done: false };
    p.then(
      (v) => Object.assign(s, { done: true, value: v }),
      (e: ApiError) => Object.assign(s, { done: true, err: e }),
    );
    return s;
  }
  const longPoll = (offset: number) => track(q.getUpdates({ offset, limit: 100, timeout: 50 }, signal(), now));

  test("the first conflict is answered at once, a second within 3 s only 3 s later, then at once again", async () => {
    const a = longPoll(1);
    const b = longPoll(2);
    await vi.advanceTimersByTimeAsync(0);
    expect([a.done, a.err?.code, a.err?.description]).toEqual([true, 409, E.conflictPoll]);
    now = T0 + 1000;
    const c = longPoll(3);
    await vi.advanceTimersByTimeAsync(2999);
    expect(b.done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect([b.done, b.err?.code, b.err?.description]).toEqual([true, 409, E.conflictPoll]);
    // The immediate answer at T0 opened a 3 s window; at T0 + 3 s the next conflict is immediate.
    now = T0 + 3000;
    longPoll(4);
    await vi.advanceTimersByTimeAsync(0);
    expect([c.done, c.err?.code]).toEqual([true, 409]);
  });

  test("while a webhook is set: one immediate 409 per 3 s, the others 3 s late", async () => {
    q.setWebhook({ url: "http://127.0.0.1:9/", maxConnections: 40 });
    const first = track(poll());
    const second = track(poll());
    await vi.advanceTimersByTimeAsync(0);
    expect([first.done, first.err?.description]).toEqual([true, E.conflictWebhook]);
    expect(second.done).toBe(false);
    await vi.advanceTimersByTimeAsync(3000);
    expect([second.done, second.err?.code, second.err?.description]).toEqual([true, 409, E.conflictWebhook]);
    // A delayed answer does not open a new window: at T0 + 3 s the next is immediate.
    now = T0 + 3000;
    const third = track(poll());
    await vi.advanceTimersByTimeAsync(0);
    expect(third.done).toBe(true);
    q.deleteWebhook();
  });

  test("setWebhook's 'terminated by setWebhook request' shares the same window", async () => {
    const a = longPoll(1);
    longPoll(2);
    await vi.advanceTimersByTimeAsync(0);
    expect(a.err?.description).toBe(E.conflictPoll);
    now = T0 + 500;
    const b2 = longPoll(3);
    q.setWebhook({ url: "http://127.0.0.1:9/", maxConnections: 40 });
    await vi.advanceTimersByTimeAsync(2999);
    expect(b2.done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect([b2.err?.code, b2.err?.description]).toEqual([409, E.conflictSetWebhook]);
    q.deleteWebhook();
  });

  test("a poll waiting for its paced 409 is no longer the pending poll; close() answers it at once", async () => {
    longPoll(1);
    const b = longPoll(2);
    now = T0 + 100;
    const c = longPoll(3);
    await vi.advanceTimersByTimeAsync(0);
    expect(b.done).toBe(false);
    // A new update wakes the current poll (c), not the one being terminated (b).
    q.push(msg("for the newest poll"));
    await vi.advanceTimersByTimeAsync(0);
    expect(texts(c.value ?? [])).toEqual(["for the newest poll"]);
    q.close();
    await vi.advanceTimersByTimeAsync(0);
    expect([b.done, b.err?.code]).toEqual([true, 409]);
  });
});
