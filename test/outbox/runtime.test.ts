/**
 * The I/O shell (worker + runtime + LiveStream) with an in-process executor and the real clock,
 * short intervals. The grammY executor itself is exercised against the emulator in emulator-*.test.ts.
 */
import { isMessageAction } from "../../bot/outbox/action.ts";
import { AsyncLocalStorage } from "node:async_hooks";
import { Api } from "grammy";
import { describe, expect, test } from "vitest";
import type { Action, Result } from "../../bot/outbox/action.ts";
import { realClock, type Clock } from "../../bot/outbox/clock.ts";
import { deliverEvents, type OutboxEvent, type OutboxLogger } from "../../bot/outbox/events.ts";
import type { Executor } from "../../bot/outbox/executor.ts";
import { Outbox, StreamFailedError, type Options } from "../../bot/outbox/index.ts";
import { RateLimiter } from "../../bot/outbox/limiter.ts";
import { LiveStream } from "../../bot/outbox/live-stream.ts";
import { StreamState } from "../../bot/outbox/stream-state.ts";
import { TimingsCache } from "../../bot/outbox/timings.ts";
import { maxInWindow, sleep } from "./core-helpers.ts";

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
    // Woken, not polled: the worker's next deadline is ≥ 29 s away, so a send well within that proves the wake.
    await expect.poll(() => calls.length, { timeout: 10_000 }).toBe(1);
    for (let i = 0; i < 100; i++) s.update(`hello ${i}`);
    expect(await s.finish()).toEqual([100]);
    expect(calls.map((c) => isMessageAction(c.action) && c.action.chunk?.text)).toEqual(["hello", "hello 99"]);
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
    const chat1 = calls.filter((x) => x.chatId === 1 && isMessageAction(x.action) && x.action.chunk?.text !== "d");
    expect(chat1).toHaveLength(2);
    expect(chat1[1]!.at - chat1[0]!.at).toBeGreaterThanOrEqual(55); // one shared send budget
    await outbox.close();
  });

  test("an idle machine is evicted after machine_ttl; the timings cache outlives it", async () => {
    const { calls, executor } = recorder();
    const outbox = new Outbox({ options: { ...fast, sendIntervalMs: 400, messageIntervalMs: 400, machineTtlMs: 40, streamTtlMs: 10 }, executor });
    expect(await outbox.send(api, 5, "first")).toEqual([100]);
    await expect.poll(() => outbox.activeChats).toBe(0);
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
    expect(calls.map((c) => [isMessageAction(c.action) && c.action.chunk?.text, c.store])).toEqual([
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
    expect(await Promise.race([closing.then(() => "closed"), sleep(3000).then(() => "hung")])).toBe("closed");
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
    const { calls, executor } = recorder((a) => (a.type === "edit" ? { ok: false, kind: "message_dead", reason: "Bad Request: message to edit not found", error: null } : { ok: true }));
    const log: OutboxLogger & { n: number } = { n: 0, warn: () => {}, error: () => void log.n++ };
    const outbox = new Outbox({ options: { ...fast, raiseOnFailure: false }, executor, logger: log, events: (e) => { seen.push(e); throw new Error("broken telemetry"); } });
    const s = outbox.stream(api, 10);
    s.update(["a", "b"]);
    await expect.poll(() => calls.length).toBe(2); // both sent, so "a2" must be an edit
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
    // typing repeats every actionIntervalMs while nothing is written yet
    await expect.poll(() => calls.filter((c) => c.action.type === "typing").length).toBeGreaterThanOrEqual(2);
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
    const sent = calls.map((c) => (isMessageAction(c.action) ? c.action.chunk : null));
    expect(sent.map((c) => [c?.text.length, c?.reply_to, c?.reply_markup !== undefined])).toEqual([
      [4096, 77, false],
      [904, undefined, true],
    ]);
    await outbox.close();
  });
});

describe("Outbox lifecycle (audit-002)", () => {
  test("close() finalizes every open stream itself: no finish() call needed, outcome ok", async () => {
    const { calls, executor } = recorder();
    const outbox = new Outbox({ options: { ...fast, shutdownTimeoutMs: 1000 }, executor, logger: quietLog });
    const s = outbox.stream(api, 13);
    s.update(["p1", "p2"]);
    await outbox.close();
    expect(s.outcome()).toEqual({ status: "ok", messageIds: [100, 101] });
    expect(calls.map((c) => isMessageAction(c.action) && c.action.chunk?.text)).toEqual(["p1", "p2"]);
  });

  test("a throwing sink is logged as 'outbox event sink threw' and the chat's other streams are still delivered", async () => {
    const { calls, executor } = recorder((a) => (isMessageAction(a) && a.chunk?.text === "bad" ? { ok: false, kind: "message_dead", reason: "Bad Request: message is too long", error: null } : { ok: true }));
    const lines: string[] = [];
    const log: OutboxLogger = { warn: (_o, m) => void lines.push(m), error: (_o, m) => void lines.push(m) };
    const outbox = new Outbox({ options: { ...fast, raiseOnFailure: false }, executor, logger: log, events: () => { throw new Error("broken telemetry"); } });
    const a = outbox.stream(api, 14);
    const b = outbox.stream(api, 14);
    a.update("bad"); // MessageFailed → the sink throws inside the worker
    b.update("good"); // same chat, same worker: sent after a's event
    expect(await a.finish()).toEqual([]);
    expect(a.outcome()?.status).toBe("partial");
    expect(await b.finish()).toEqual([100]);
    expect(b.outcome()?.status).toBe("ok");
    expect(calls.map((c) => isMessageAction(c.action) && c.action.chunk?.text)).toEqual(["bad", "good"]);
    expect(lines).toEqual(["outbox event sink threw"]);
    await outbox.close();
  });

  test("a stream opened while the chat's worker is stopping gets a new worker and is delivered (no hang)", async () => {
    const { calls, executor } = recorder((a) => {
      if (isMessageAction(a) && a.chunk?.text === "boom") throw new Error("executor bug");
      return { ok: true };
    });
    let late: ReturnType<Outbox["stream"]> | null = null;
    // The sink runs on the crashed worker's way out (it is stopping, not yet gone): open a stream there.
    const outbox: Outbox = new Outbox({
      options: fast,
      executor,
      logger: quietLog,
      events: (e) => {
        if (e.type === "StreamFailed" && late === null) {
          late = outbox.stream(api, 15);
          late.update("after the crash");
        }
      },
    });
    const s = outbox.stream(api, 15);
    s.update("boom");
    expect(await s.finish().catch((x: unknown) => (x as StreamFailedError).reason)).toBe("worker crashed");
    expect(late).not.toBeNull();
    const res = await Promise.race([late!.finish().catch((x: unknown) => x), sleep(3000).then(() => "hung")]);
    expect(res).toEqual([100]);
    expect(calls.map((c) => isMessageAction(c.action) && c.action.chunk?.text)).toEqual(["boom", "after the crash"]);
    await outbox.close();
  });

  test("close(err) finishes quietly when the caller already has an error; close() raises StreamFailedError", async () => {
    const { executor } = recorder(() => ({ ok: false, kind: "stream_dead", reason: "Forbidden: bot was blocked by the user", error: null }));
    const outbox = new Outbox({ options: fast, executor, logger: quietLog });
    const a = outbox.stream(api, 16);
    a.update("x");
    expect(await a.close(new Error("handler failed"))).toEqual([]);
    expect(a.outcome()?.status).toBe("failed");
    const b = outbox.stream(api, 16);
    b.update("y");
    const e = await b.close().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(StreamFailedError);
    expect((e as StreamFailedError).reason).toBe("Forbidden: bot was blocked by the user");
    await outbox.close();
  });

  test("finish() races the worker itself: a crash with a throwing sink and a throwing logger still answers, done resolves", async () => {
    const executor: Executor = {
      execute: async () => {
        throw new Error("executor bug");
      },
    };
    const broken: OutboxLogger = {
      warn: () => {
        throw new Error("logger down");
      },
      error: () => {
        throw new Error("logger down");
      },
    };
    const outbox = new Outbox({ options: fast, executor, logger: broken, events: () => { throw new Error("sink down"); } });
    const s = outbox.stream(api, 17);
    s.update("x");
    const res = await Promise.race([s.finish().catch((x: unknown) => x), sleep(3000).then(() => "hung")]);
    expect(res).toBeInstanceOf(StreamFailedError);
    expect(s.outcome()?.status).toBe("failed");
    // close() waits for every worker's done: it must resolve, not reject or hang
    expect(await Promise.race([outbox.close().then(() => "closed"), sleep(3000).then(() => "hung")])).toBe("closed");
  });
});

describe("no hang on a broken way out (audit-002 LOW 12, each layer alone)", () => {
  test("deliverEvents never throws, even when the sink and then the logger throw", () => {
    const thrower = () => {
      throw new Error("down");
    };
    const e: OutboxEvent = { type: "ChatHold", chatId: 1, retryAfterMs: 1000, untilMs: 1000, fresh: true };
    expect(() => deliverEvents([e, e], thrower, { warn: thrower, error: thrower })).not.toThrow();
  });

  test("finish() races the worker task: a worker that ends without settling the stream answers failed", async () => {
    let end!: () => void;
    const done = new Promise<void>((r) => (end = r));
    const state = new StreamState(1, { typing: false, drafts: false });
    const s = new LiveStream(state, { wake: () => {}, done }, 1, true, undefined);
    s.update("x");
    const waiting = s.finish().catch((x: unknown) => x);
    end(); // the loop is gone and nobody called settle()
    const res = await Promise.race([waiting, sleep(2000).then(() => "hung")]);
    expect(res).toBeInstanceOf(StreamFailedError);
    expect((res as StreamFailedError).reason).toBe("worker stopped");
    expect(s.outcome()?.status).toBe("failed");
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

describe("bot-wide rate in real send times (audit-002 LOW 8)", () => {
  test("≤ 30 sends per sliding second at the executor, even when a loaded event loop fires the workers' timers late", async () => {
    const { calls, executor } = recorder();
    // per-chat pacing far above the bot-wide cap, so the bot-wide limiter (default 28/s) is what binds
    const outbox = new Outbox({ options: { ...fast, globalPerSecond: 28 }, executor });
    // a loaded machine: the event loop is blocked 150 ms out of every 400 ms, so timers fire late in bunches
    const busy = setInterval(() => {
      const until = performance.now() + 150;
      while (performance.now() < until);
    }, 250);
    try {
      const streams = Array.from({ length: 20 }, (_, i) => outbox.stream(api, 1000 + i));
      for (const s of streams) s.update(["m1", "m2", "m3"]);
      await Promise.all(streams.map((s) => s.finish()));
    } finally {
      clearInterval(busy);
    }
    expect(calls).toHaveLength(60);
    expect(maxInWindow(calls.map((c) => c.at), 1000)).toBeLessThanOrEqual(30);
    await outbox.close();
  }, 30_000);
});

describe("posts (Outbox.post)", () => {
  const postRequest = { method: "sendDocument", document: "file-id-1" } as const;

  test("resolves with the Bot API result; a refusal rejects with the very error; other posts go on", async () => {
    const refused = new Error("Bad Request: wrong file identifier/HTTP URL specified");
    const { calls, executor } = recorder((a, n) => (n === 1 ? { ok: false, kind: "message_dead", reason: refused.message, error: refused } : { ok: true, value: { message_id: 5, streamId: a.streamId } }));
    const outbox = new Outbox({ options: fast, executor });
    const first = outbox.post(api, 30, postRequest).catch((e: unknown) => e);
    const second = outbox.post(api, 30, { method: "sendDocument", document: "file-id-2" });
    expect(await first).toBe(refused);
    expect(await second).toMatchObject({ message_id: 5 });
    expect(calls.map((c) => c.action.type)).toEqual(["post", "post"]);
    await outbox.close();
  });

  test("the caller's signal: a waiting post is dropped unsent; one in flight has its call aborted", async () => {
    let seen: AbortSignal | undefined;
    const executor: Executor = {
      execute: (_api, _chat, _a, signal) =>
        new Promise((resolve) => {
          seen = signal;
          signal?.addEventListener("abort", () => resolve({ ok: false, kind: "transient", reason: "aborted", error: signal.reason }), { once: true });
        }),
    };
    const outbox = new Outbox({ options: fast, executor });
    const ctl = new AbortController();
    const inFlight = outbox.post(api, 31, postRequest, { signal: ctl.signal }).catch((e: unknown) => e);
    const waiting = outbox.post(api, 31, { method: "sendDocument", document: "x" }, { signal: ctl.signal }).catch((e: unknown) => e);
    await expect.poll(() => seen).toBeDefined();
    const reason = new Error("cancelled by the user");
    ctl.abort(reason);
    expect(await inFlight).toBe(reason);
    expect(await waiting).toBe(reason);
    expect(seen!.aborted).toBe(true);
    await outbox.close();
  });

  test("a call with no answer is aborted at callTimeoutMs and tried again: one stalled request does not freeze the chat", async () => {
    let n = 0;
    const executor: Executor = {
      execute: (_api, _chat, a, signal) =>
        new Promise((resolve) => {
          n++;
          if (n > 1) return resolve(a.type === "send" ? { ok: true, messageId: 1 } : { ok: true });
          // the first request stalls until its signal aborts it
          signal?.addEventListener("abort", () => resolve({ ok: false, kind: "transient", reason: "HttpError: Network request failed", error: signal.reason }), { once: true });
        }),
    };
    const log: OutboxLogger & { lines: string[] } = { lines: [], warn: (_o, m) => log.lines.push(m), error: (_o, m) => log.lines.push(m) };
    const outbox = new Outbox({ options: { ...fast, callTimeoutMs: 300, backoffBaseMs: 50 }, executor, logger: log });
    const t0 = performance.now();
    expect(await outbox.send(api, 32, "hello")).toEqual([1]);
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(n).toBe(2);
    await outbox.close();
  });
});
