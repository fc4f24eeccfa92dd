/** ChatMachine.apply() branch order and lifecycle (seed 002 "SenderMachine"), fake clock. */
import { isMessageAction } from "../../bot/outbox/action.ts";
import { describe, expect, test } from "vitest";
import type { Result } from "../../bot/outbox/action.ts";
import { backoffMs } from "../../bot/outbox/machine.ts";
import { makeOptions } from "../../bot/outbox/options.ts";
import { chunks, drive, machine, okAll, stream, take } from "./core-helpers.ts";

const err = new Error("x");
const transient: Result = { ok: false, kind: "transient", reason: "Internal Server Error", error: err };
const tooMany = (s: number): Result => ({ ok: false, kind: "transient", reason: "Too Many Requests", error: err, retryAfterMs: s * 1000 });

describe("ChatMachine.apply", () => {
  test("1. retry_after holds the whole chat, emits ChatHold, is not an attempt, leaves last_at untouched", () => {
    const m = machine({ maxAttempts: 2 });
    const s = stream(m, 1);
    s.update(chunks("a"));
    for (let i = 0; i < 10; i++) {
      const a = take(m, i * 10_000);
      m.apply(a, tooMany(5), i * 10_000);
      expect(m.timings.send).toBe(-Infinity);
      expect(m.timings.holdUntil).toBe(i * 10_000 + 5000);
      expect(m.plan(i * 10_000 + 4999)).toEqual({ type: "sleep", until: i * 10_000 + 5000 });
    }
    expect(s.status).toBe("live"); // 10 × 429 with maxAttempts 2: still alive
    expect(m.drainEvents().filter((e) => e.type === "ChatHold")).toHaveLength(10);
    expect(m.retryAt.size).toBe(0);
  });

  test("2. typing only updates last_at, whatever the result", () => {
    const m = machine();
    stream(m, 1, { typing: true });
    const a = take(m, 0);
    expect(a.type).toBe("typing");
    m.apply(a, { ok: false, kind: "stream_dead", reason: "Forbidden", error: err }, 7);
    expect(m.timings.action).toBe(7);
    expect(m.drainEvents()).toEqual([]);
    expect(m.stream(1)!.status).toBe("live");
  });

  test("1 before 2: a 429 on sendChatAction holds the chat (ChatHold) and leaves the typing time untouched", () => {
    const m = machine();
    stream(m, 1, { typing: true });
    const a = take(m, 0);
    expect(a.type).toBe("typing");
    m.apply(a, tooMany(5), 0);
    expect(m.timings.holdUntil).toBe(5000);
    expect(m.timings.action).toBe(-Infinity);
    expect(m.drainEvents()).toEqual([{ type: "ChatHold", chatId: 42, retryAfterMs: 5000, untilMs: 5000, fresh: true }]);
    expect(m.plan(4999)).toEqual({ type: "sleep", until: 5000 });
    expect(take(m, 5000).type).toBe("typing"); // the typing time was not spent: typing again right after the hold
  });

  test("3. success clears the backoff and records the delivered state", () => {
    const m = machine();
    const s = stream(m, 1);
    s.update(chunks("a"));
    const a = take(m, 0);
    m.apply(a, transient, 0);
    expect(m.retryAt.get("1:0")).toBe(1000);
    const b = take(m, 1000);
    m.apply(b, { ok: true, messageId: 9 }, 1000);
    expect(m.retryAt.size).toBe(0);
    expect([s.messages[0]!.messageId, s.messages[0]!.sentHash]).toEqual([9, chunks("a")[0]!.hash]);
    expect(m.timings.send).toBe(1000);
    expect(m.timings.message).toBe(1000);
  });

  test("4. STREAM_DEAD kills the stream, emits StreamFailed; outcome failed keeps delivered ids", () => {
    const m = machine();
    const s = stream(m, 1);
    s.update(chunks("a", "b"));
    drive(m, okAll, 0); // a sent
    s.finalize();
    const b = take(m, 1000);
    m.apply(b, { ok: false, kind: "stream_dead", reason: "Forbidden: bot was blocked by the user", error: err }, 1000);
    expect(m.drainEvents()).toEqual([{ type: "StreamFailed", chatId: 42, streamId: 1, reason: "Forbidden: bot was blocked by the user", error: err }]);
    m.tick(1000);
    expect(m.takeSettled()).toEqual([{ streamId: 1, outcome: { status: "failed", messageIds: [1000], reason: "Forbidden: bot was blocked by the user", error: err } }]);
    expect(m.plan(5000).type).toBe("sleep");
  });

  test("5. MESSAGE_DEAD kills one slot, emits MessageFailed, the stream goes on and ends partial", () => {
    const m = machine();
    const s = stream(m, 1);
    s.update(chunks("a", "b"));
    drive(m, okAll, 1000);
    s.update(chunks("a too long", "b2"));
    s.finalize();
    const e = take(m, 2000);
    m.apply(e, { ok: false, kind: "message_dead", reason: "Bad Request: message is too long", error: err }, 2000);
    expect(m.drainEvents().map((x) => x.type)).toEqual(["MessageFailed"]);
    const rest = drive(m, okAll, 600_000, 2000);
    expect(rest.map((x) => `${x.action.type}${isMessageAction(x.action) ? x.action.index : ""}`)).toEqual(["edit1"]);
    m.tick(10_000);
    expect(m.takeSettled()[0]!.outcome).toEqual({ status: "partial", messageIds: [1001] });
  });

  test("5c. a key move whose delete is refused edits the old message in place: one copy, not two (issue 11 item 7)", () => {
    const m = machine();
    const s = stream(m, 1);
    s.update(chunks({ text: "Send? (1)", key: "r1" }));
    drive(m, okAll, 0);
    const old = s.messages[0]!.messageId;
    s.update(chunks({ text: "Send? (2)", key: "r2" }));
    const refused: Result = { ok: false, kind: "message_dead", reason: "Bad Request: message can't be deleted", error: err };
    const steps = drive(m, (a) => (a.type === "drop" ? refused : { ok: true }), 600_000, 10_000);
    expect(steps.map((x) => [x.action.type, isMessageAction(x.action) && x.action.messageId])).toEqual([
      ["drop", old],
      ["edit", old],
    ]);
    expect(isMessageAction(steps[1]!.action) && steps[1]!.action.chunk?.text).toBe("Send? (2)");
    expect(m.drainEvents()).toEqual([]); // nothing died
    s.finalize();
    m.tick(20_000);
    expect(m.takeSettled()[0]!.outcome).toEqual({ status: "ok", messageIds: [old] });
  });

  test("5b. a dead slot revives with a new key (drop + send)", () => {
    const m = machine();
    const s = stream(m, 1);
    s.update(chunks({ text: "x", key: "k1" }));
    drive(m, okAll, 0);
    s.update(chunks({ text: "y", key: "k1" }));
    m.apply(take(m, 1000), { ok: false, kind: "message_dead", reason: "Bad Request: message to edit not found", error: err }, 1000);
    expect(m.plan(5000)).toEqual({ type: "sleep", until: Infinity });
    s.update(chunks({ text: "y", key: "k2" }));
    expect(drive(m, okAll, 600_000, 5000).map((x) => x.action.type)).toEqual(["drop", "send"]);
  });

  test("6. transient: exponential backoff with ±20% jitter, capped; killed at max_attempts", () => {
    const o = makeOptions();
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => backoffMs(n, o, () => 0.5))).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000]);
    expect(backoffMs(1, o, () => 0)).toBeCloseTo(800);
    expect(backoffMs(1, o, () => 1)).toBeCloseTo(1200);
    // jitter stays inside the cap (issue 11 item 7): at 30 s the spread only goes down
    for (const r of [0, 0.5, 0.75, 1]) for (let n = 5; n <= 12; n++) expect(backoffMs(n, o, () => r)).toBeLessThanOrEqual(30_000);
    expect([backoffMs(6, o, () => 1), backoffMs(6, o, () => 0)]).toEqual([30_000, 24_000]);
    expect(backoffMs(5, o, () => 1)).toBeCloseTo(19_200); // below the cap the spread goes both ways
    const m = machine();
    const s = stream(m, 1);
    s.update(chunks("a"));
    const at: number[] = [];
    drive(m, (a, now) => (at.push(now), transient));
    expect(at).toEqual([0, 1000, 3000, 7000, 15000]);
    expect(s.status).toBe("failed");
    expect(s.failure?.reason).toBe("max attempts (5): Internal Server Error");
  });

  test("drafts refused fall back to real messages without an attempt or event", () => {
    const m = machine();
    const s = stream(m, 1, { drafts: true });
    s.update(chunks("abc"));
    const d = take(m, 0);
    m.apply(d, { ok: false, kind: "transient", reason: "Bad Request: TEXTDRAFT_PEER_INVALID", error: err }, 0);
    expect(s.drafts).toBe(false);
    expect(m.drainEvents()).toEqual([]);
    expect(drive(m, okAll, 600_000, 0).map((x) => x.action.type)).toEqual(["send"]);
  });

  test("a delete that fails MESSAGE_DEAD forgets the message (partial) instead of retrying forever", () => {
    const m = machine();
    const s = stream(m, 1);
    s.update(chunks("a", "b"));
    drive(m, okAll);
    s.update(chunks("a"));
    m.apply(take(m, 5000), { ok: false, kind: "message_dead", reason: "Bad Request: message can't be deleted", error: err }, 5000);
    expect(s.messages).toHaveLength(1);
    expect(s.partial).toBe(true);
  });

  test("TTLs: a settled stream is swept after stream_ttl, an empty machine is evictable after machine_ttl", () => {
    const m = machine();
    const s = stream(m, 1);
    s.update(chunks("a"));
    s.finalize();
    drive(m, okAll, 0); // sent and settled at t = 0
    expect(m.takeSettled()).toEqual([{ streamId: 1, outcome: { status: "ok", messageIds: [1000] } }]);
    expect(m.plan(10)).toEqual({ type: "sleep", until: 5000 }); // wakes for the sweep
    m.tick(4999);
    expect(m.stream(1)).toBeDefined();
    m.tick(5000);
    expect(m.stream(1)).toBeUndefined();
    expect(m.plan(5000)).toEqual({ type: "sleep", until: 5000 + 30_000 });
    expect(m.isEvictable(34_999)).toBe(false);
    expect(m.isEvictable(35_000)).toBe(true);
  });

  test("killAll fails every live stream (worker crash / cancel)", () => {
    const m = machine();
    stream(m, 1).update(chunks("a"));
    stream(m, 2).update(chunks("b"));
    m.killAll("worker crashed", err);
    m.tick(0);
    expect(m.takeSettled().map((x) => [x.streamId, x.outcome.status, x.outcome.reason])).toEqual([
      [1, "failed", "worker crashed"],
      [2, "failed", "worker crashed"],
    ]);
  });
});
