/**
 * The I/O shell (worker + runtime + LiveStream) with an in-process executor and the real clock,
 * short intervals. The grammY executor itself is exercised against the emulator in emulator.test.ts.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { Api } from "grammy";
import { describe, expect, test } from "vitest";
import type { Action, Result } from "../../bot/outbox/action.ts";
import { realClock, type Clock } from "../../bot/outbox/clock.ts";
import type { OutboxEvent, OutboxLogger } from "../../bot/outbox/events.ts";
import type { Executor } from "../../bot/outbox/executor.ts";
import { Outbox, StreamFailedError, type Options } from "../../bot/outbox/index.ts";
import { RateLimiter } from "../../bot/outbox/limiter.ts";
import { TimingsCache } from "../../bot/outbox/timings.ts";

const api = new Api("123456:TEST-token-never-used");
const api2 = new Api("777:other-bot");

interface Call {
  at: number;
  chatId: number;
  action: Action;
  store: unknown;
}

const als = new AsyncLocalStorage<string>();

/** In-process executor: records calls (with the async context they ran in) and answers `respond`. */
function recorder(respond: (a: Action, n: number) => Result | Promise<Result> = () => ({ ok: true })) {
  const calls: Call[] = [];
  let id = 100;
  const executor: Executor = {
    async execute(_api, chatId, action) {
      calls.push({ at: performance.now(), chatId, action, store: als.getStore() });
      const r = await respond(action, calls.length);
      return r.ok && action.type === "send" && r.messageId === undefined ? { ok: true, messageId: id++ } : r;
    },
  };
  return { calls, executor };
}

const fast: Partial<Options> = { sendIntervalMs: 20, editIntervalMs: 20, deleteIntervalMs: 20, messageIntervalMs: 20, actionIntervalMs: 10_000, globalPerSecond: 0, typingEnabled: false };
const quietLog: OutboxLogger & { lines: string[] } = { lines: [], warn: (_o, m) => quietLog.lines.push(m), error: (_o, m) => quietLog.lines.push(m) };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("Outbox runtime", () => {
  test("update() wakes a sleeping worker at once (no polling); the latest text wins", async () => {
    const { calls, executor } = recorder();
    const sleeps: number[] = [];
    const clock: Clock = { now: realClock.now, sleep: (ms, sig) => (sleeps.push(ms), realClock.sleep(ms, sig)) };
    const outbox = new Outbox({ options: fast, executor, clock });
    const s = outbox.stream(api, 1);
    await sleep(300);
    expect(calls).toHaveLength(0);
    // idle: the worker sleeps until a deadline (machine TTL, then "until woken"), never a tick every few ms
    expect(sleeps.length).toBeLessThanOrEqual(2);
    expect(Math.min(...sleeps)).toBeGreaterThan(29_000);
    s.update("hello");
    await sleep(30);
    expect(calls).toHaveLength(1);
    for (let i = 0; i < 100; i++) s.update(`hello ${i}`);
    expect(await s.finish()).toEqual([100]);
    expect(calls.map((c) => c.action.kind !== "action" && c.action.chunk?.text)).toEqual(["hello", "hello 99"]);
    await outbox.close();
  });

  test("one machine per (bot, chat), shared by all streams of that chat", async () => {
    const { calls, executor } = recorder();
    const outbox = new Outbox({ options: { ...fast, sendIntervalMs: 60, messageIntervalMs: 60 }, executor });
    const a = outbox.stream(api, 1);
    const b = outbox.stream(api, 1);
    const c = outbox.stream(api, 2);
    const d = outbox.stream(api2, 1);
    expect(outbox.activeChats).toBe(3);
    a.update("a");
    b.update("b");
    c.update("c");
    d.update("d");
    await Promise.all([a.finish(), b.finish(), c.finish(), d.finish()]);
    const chat1 = calls.filter((x) => x.chatId === 1 && x.action.kind !== "action" && x.action.chunk?.text !== "d");
    expect(chat1).toHaveLength(2);
    expect(chat1[1]!.at - chat1[0]!.at).toBeGreaterThanOrEqual(55); // one shared send budget
    await outbox.close();
  });

  test("an idle machine is evicted after machine_ttl; the timings cache outlives it", async () => {
    const { calls, executor } = recorder();
    const outbox = new Outbox({ options: { ...fast, sendIntervalMs: 400, messageIntervalMs: 400, machineTtlMs: 40, streamTtlMs: 10 }, executor });
    expect(await outbox.send(api, 5, "first")).toEqual([100]);
    await sleep(150);
    expect(outbox.activeChats).toBe(0);
    await outbox.send(api, 5, "second");
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(395);
    await outbox.close();
  });

  test("each stream's API calls run in its opener's async context; the worker in none", async () => {
    const { calls, executor } = recorder();
    const sleeps: unknown[] = [];
    const clock: Clock = { now: realClock.now, sleep: (ms, sig) => (sleeps.push(als.getStore()), realClock.sleep(ms, sig)) };
    const outbox = new Outbox({ options: fast, executor, clock });
    const s1 = als.run("update-1", () => outbox.stream(api, 9));
    const s2 = als.run("update-2", () => outbox.stream(api, 9));
    await als.run("update-3", async () => {
      s1.update("one");
      s2.update("two");
      await Promise.all([s1.finish(), s2.finish()]);
    });
    expect(calls.map((c) => [c.action.kind !== "action" && c.action.chunk?.text, c.store])).toEqual([
      ["one", "update-1"],
      ["two", "update-2"],
    ]);
    expect(sleeps.length).toBeGreaterThan(0);
    expect(new Set(sleeps)).toEqual(new Set([undefined]));
    await outbox.close();
  });

  test("close() finishes open streams and waits for them", async () => {
    const { calls, executor } = recorder();
    const outbox = new Outbox({ options: fast, executor });
    const s = outbox.stream(api, 3);
    s.update(["p1", "p2"]);
    const done = s.finish();
    await outbox.close();
    expect(await done).toEqual([100, 101]);
    expect(calls).toHaveLength(2);
    expect(() => outbox.stream(api, 3)).toThrow("outbox is closed");
    expect(() => s.update("late")).toThrow("update() after finish()");
  });

  test("close() cancels what is still stuck after shutdown_timeout; waiters get an answer, not a hang", async () => {
    const { executor } = recorder(() => new Promise<Result>(() => {}));
    const outbox = new Outbox({ options: { ...fast, shutdownTimeoutMs: 100 }, executor, logger: quietLog });
    const s = outbox.stream(api, 4);
    s.update("never lands");
    const t0 = performance.now();
    // the executor never resolves, even on abort: the worker's own abort path must still end finish()
    const closing = outbox.close();
    const res = await Promise.race([s.finish().then(() => "resolved", (e: unknown) => e), sleep(3000).then(() => "hung")]);
    expect(res).toBeInstanceOf(StreamFailedError);
    expect(performance.now() - t0).toBeLessThan(2000);
    await Promise.race([closing, sleep(3000)]);
  });

  test("a crashed worker fails its waiters with StreamFailedError instead of leaving them hanging", async () => {
    const executor: Executor = {
      execute: async () => {
        throw new Error("executor bug");
      },
    };
    const outbox = new Outbox({ options: fast, executor, logger: quietLog });
    const s = outbox.stream(api, 6);
    s.update("x");
    const e = await s.finish().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(StreamFailedError);
    expect((e as StreamFailedError).reason).toBe("worker crashed");
    expect(quietLog.lines).toContain("outbox worker crashed");
    await outbox.close();
  });

  test("await using finishes the stream and never masks the block's own exception", async () => {
    const { calls, executor } = recorder(() => ({ ok: false, kind: "stream_dead", reason: "Forbidden: bot was blocked by the user", error: new Error("403") }));
    const outbox = new Outbox({ options: fast, executor });
    let stream: ReturnType<Outbox["stream"]> | undefined;
    const thrown = await (async () => {
      await using s = outbox.stream(api, 7);
      stream = s;
      s.update("partial answer");
      throw new Error("handler failed");
    })().catch((x: unknown) => x);
    expect(thrown).toBeInstanceOf(Error);
    expect((thrown as Error).message).toBe("handler failed");
    expect(stream!.outcome()?.status).toBe("failed");
    expect(calls).toHaveLength(1);
    // run(): same rule, and on a clean exit the delivery failure is raised with the delivered ids
    const r = await outbox.run(api, 8, (s) => s.update("y")).catch((x: unknown) => x);
    expect(r).toBeInstanceOf(StreamFailedError);
    expect((r as StreamFailedError).messageIds).toEqual([]);
    const r2 = await outbox.run(api, 8, () => { throw new RangeError("mine"); }).catch((x: unknown) => x);
    expect(r2).toBeInstanceOf(RangeError);
    await outbox.close();
  });

  test("raiseOnFailure=false: finish() returns the delivered ids; the sink sees events and its exceptions are logged", async () => {
    const seen: OutboxEvent[] = [];
    const { executor } = recorder((a) => (a.type === "edit" ? { ok: false, kind: "message_dead", reason: "Bad Request: message to edit not found", error: null } : { ok: true }));
    const log: OutboxLogger & { n: number } = { n: 0, warn: () => {}, error: () => void log.n++ };
    const outbox = new Outbox({ options: { ...fast, raiseOnFailure: false }, executor, logger: log, events: (e) => { seen.push(e); throw new Error("broken telemetry"); } });
    const s = outbox.stream(api, 10);
    s.update(["a", "b"]);
    await sleep(100);
    s.update(["a2", "b"]);
    expect(await s.finish()).toEqual([101]);
    expect(s.outcome()?.status).toBe("partial");
    expect(seen.map((e) => e.type)).toEqual(["MessageFailed"]);
    expect(log.n).toBe(1);
    await outbox.close();
  });

  test("stream({typing:false}) never shows typing; a typing stream does while it is written", async () => {
    const { calls, executor } = recorder();
    const outbox = new Outbox({ options: { ...fast, typingEnabled: true, actionIntervalMs: 60 }, executor });
    const quiet = outbox.stream(api, 11, { typing: false });
    quiet.update("status");
    await quiet.finish();
    expect(calls.filter((c) => c.action.type === "typing")).toHaveLength(0);
    const t = outbox.stream(api, 11);
    await sleep(150);
    t.update("answer");
    await t.finish();
    const n = calls.filter((c) => c.action.type === "typing").length;
    expect(n).toBeGreaterThanOrEqual(2);
    await sleep(150);
    expect(calls.filter((c) => c.action.type === "typing")).toHaveLength(n);
    await outbox.close();
  });

  test("replyTo goes on the first chunk only; updateText splits long text", async () => {
    const { calls, executor } = recorder();
    const outbox = new Outbox({ options: fast, executor });
    const s = outbox.stream(api, 12, { replyTo: 77 });
    s.updateText("x".repeat(5000), [], { reply_markup: { inline_keyboard: [[{ text: "ok", callback_data: "ok" }]] } });
    await s.finish();
    const sent = calls.map((c) => (c.action.kind !== "action" ? c.action.chunk : null));
    expect(sent.map((c) => [c?.text.length, c?.reply_to, c?.reply_markup !== undefined])).toEqual([
      [4096, 77, false],
      [904, undefined, true],
    ]);
    await outbox.close();
  });
});

describe("TimingsCache", () => {
  test("LRU: keeps the most recently used chats up to capacity; a touched entry survives", () => {
    const c = new TimingsCache(2);
    const a = c.get("1:a");
    a.send = 5;
    c.get("1:b");
    c.touch("1:a", a);
    c.get("1:c"); // evicts 1:b, the least recently used
    expect(c.size).toBe(2);
    expect(c.get("1:a").send).toBe(5);
    expect(c.get("1:b").send).toBe(-Infinity); // fresh again
  });
});

describe("RateLimiter (bot-wide)", () => {
  test("hands out slots 1000/perSecond ms apart, first come first served", () => {
    const l = new RateLimiter(25);
    expect([l.reserve(0), l.reserve(0), l.reserve(0), l.reserve(200), l.reserve(200)]).toEqual([0, 40, 80, 200, 240]);
    expect(() => new RateLimiter(0)).toThrow(RangeError);
  });
});
