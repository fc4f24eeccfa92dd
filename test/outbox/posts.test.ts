/**
 * Posts (uploads, albums, keyboard edits) in the chat machine: one pace and one hold with the chat's
 * messages (issue 11 item 1), the seed's apply() order, weights, order, long uploads beside text.
 * Pure core, fake clock.
 */
import { describe, expect, test } from "vitest";
import type { Action, Result } from "../../bot/outbox/action.ts";
import { RateLimiter } from "../../bot/outbox/limiter.ts";
import type { PostRequest } from "../../bot/outbox/post.ts";
import { chunks, machine, stream, take } from "./core-helpers.ts";

const err = new Error("x");
const doc = (id: string): PostRequest => ({ method: "sendDocument", document: id });
const upload = (name: string): PostRequest => ({ method: "sendDocument", document: { filename: name } as never });
const album = (n: number): PostRequest => ({ method: "sendMediaGroup", media: Array.from({ length: n }, (_, i) => ({ type: "document" as const, media: `file-${i}` })) });
const tooMany = (s: number): Result => ({ ok: false, kind: "transient", reason: "Too Many Requests: retry after " + s, error: err, retryAfterMs: s * 1000 });
const ok = (value: unknown = { message_id: 1 }): Result => ({ ok: true, value });

describe("posts in the chat machine", () => {
  test("a post and a stream share one per-chat pace: after the upload, the edit waits one interval (and vice versa)", () => {
    const m = machine();
    const s = stream(m, 1);
    s.update(chunks("accepted"));
    m.apply(take(m, 0), { ok: true, messageId: 7 }, 0); // the reply at 0
    m.addPost(2, doc("f"));
    s.update(chunks("processing"));
    expect(m.plan(500)).toEqual({ type: "sleep", until: 1000 }); // the upload waits for the pace too
    const a = take(m, 1000);
    expect(a.type).toBe("post"); // results first
    m.apply(a, ok(), 1000);
    expect(m.plan(1999)).toEqual({ type: "sleep", until: 2000 }); // and the edit waits after it
    expect(take(m, 2000).type).toBe("edit");
  });

  test("a 429 on a post holds the whole chat: no message, edit, delete, typing or post until it ends; not an attempt", () => {
    const m = machine({ maxAttempts: 1, typingEnabled: true });
    const s = stream(m, 1, { typing: true });
    m.addPost(2, doc("f"));
    const a = take(m, 0);
    expect(a.type).toBe("post");
    m.apply(a, tooMany(5), 0);
    s.update(chunks("hello"));
    m.addPost(3, doc("g"));
    for (const t of [1, 2500, 4999]) expect(m.plan(t)).toEqual({ type: "sleep", until: 5000 });
    expect(m.drainEvents()).toEqual([{ type: "ChatHold", chatId: 42, retryAfterMs: 5000, untilMs: 5000, fresh: true }]);
    const again = take(m, 5000);
    expect([again.type, again.streamId]).toEqual(["post", 2]); // the same post again, maxAttempts 1 notwithstanding
    m.apply(again, ok(), 5000);
    m.tick(5000);
    expect(m.takeSettled().map((x) => [x.streamId, x.post?.ok])).toEqual([[2, true]]);
  });

  test("a second 429 while held extends the hold and is not a fresh one", () => {
    const m = machine();
    m.hold(3000, 0);
    m.hold(5000, 1000);
    m.hold(1000, 2000); // never shortens
    expect(m.timings.holdUntil).toBe(6000);
    expect(m.drainEvents().map((e) => e.type === "ChatHold" && e.fresh)).toEqual([true, false, false]);
    m.hold(1000, 7000);
    expect(m.drainEvents().map((e) => e.type === "ChatHold" && e.fresh)).toEqual([true]);
  });

  test("posts go one at a time, in order, before the chat's text at equal readiness", () => {
    const m = machine({ messageIntervalMs: 0, sendIntervalMs: 0, editIntervalMs: 0 });
    const s = stream(m, 1);
    s.update(chunks("reply"));
    s.finalize();
    m.addPost(2, doc("a"));
    m.addPost(3, doc("b"));
    const first = take(m, 0);
    expect([first.type, first.streamId]).toEqual(["post", 2]);
    // post 3 waits while post 2 is at the executor; the text may go meanwhile
    const second = take(m, 0);
    expect(second.type).toBe("send");
    expect(m.plan(0)).toEqual({ type: "sleep", until: Infinity });
    m.apply(first, ok(), 0);
    expect(take(m, 0).streamId).toBe(3);
  });

  test("an album of n documents spends the chat's pace and the bot-wide slots n times", () => {
    const m = machine();
    m.addPost(1, album(3));
    const a = take(m, 0);
    expect(a.type === "post" && a.weight).toBe(3);
    m.apply(a, ok([]), 100);
    const s = stream(m, 2);
    s.update(chunks("Done"));
    expect(m.plan(200)).toEqual({ type: "sleep", until: 100 + 3 * 1000 });
    const l = new RateLimiter(10); // 100 ms apart
    expect(l.reserve(0, 3)).toBe(0);
    expect(l.reserve(0, 1)).toBe(300);
    l.use(0, 3);
    expect(l.useWait(50)).toBe(250);
  });

  test("transient failures back off and fail the post at maxAttempts with the last error; a 4xx refusal is final at once", () => {
    const m = machine({ maxAttempts: 2 });
    m.addPost(1, doc("a"));
    const a = take(m, 0);
    m.apply(a, { ok: false, kind: "transient", reason: "Internal Server Error", error: err }, 0);
    expect(m.plan(500)).toEqual({ type: "sleep", until: 1000 }); // backoff 1 s (jitter 0 with random 0.5)
    const last = new Error("Bad Gateway");
    m.apply(take(m, 1000), { ok: false, kind: "transient", reason: "Bad Gateway", error: last }, 1000);
    m.tick(1000);
    expect(m.takeSettled().map((x) => x.post)).toEqual([{ ok: false, reason: "max attempts (2): Bad Gateway", error: last }]);
    const refused = new Error("Request Entity Too Large");
    m.addPost(2, doc("b"));
    m.apply(take(m, 5000), { ok: false, kind: "message_dead", reason: "Request Entity Too Large", error: refused }, 5000);
    m.tick(5000);
    expect(m.takeSettled().map((x) => x.post)).toEqual([{ ok: false, reason: "Request Entity Too Large", error: refused }]);
    expect(m.posts.size).toBe(0);
  });

  test("an upload (long post) runs beside the chat's text: the pace counts from its start and again from its end", () => {
    const m = machine();
    m.addPost(1, upload("big.pdf"));
    m.addPost(2, doc("small"));
    const up = take(m, 0);
    expect(up.type === "post" && up.long).toBe(true);
    m.start(up, 0); // the worker passes the start time for a long call
    const s = stream(m, 3);
    s.update(chunks("another reply"));
    expect(m.plan(500)).toEqual({ type: "sleep", until: 1000 }); // paced from the upload's start…
    const reply = take(m, 1000);
    expect(reply.type).toBe("send"); // …but not blocked by it
    m.apply(reply, { ok: true, messageId: 9 }, 1000);
    expect(m.plan(60_000)).toEqual({ type: "sleep", until: Infinity }); // the next post waits for the upload
    m.apply(up, ok(), 60_000);
    expect(m.plan(60_500)).toEqual({ type: "sleep", until: 61_000 }); // paced from its end
    expect(take(m, 61_000).streamId).toBe(2);
  });

  test("a post its caller abandoned is dropped while waiting; abandoned in flight, it fails when its call returns", () => {
    const m = machine();
    m.addPost(1, doc("a"));
    m.addPost(2, doc("b"));
    const reason = new Error("cancelled");
    m.abandon(2, reason);
    const a = take(m, 0);
    m.abandon(1, reason);
    m.apply(a, tooMany(3), 0); // even a 429: no hold to wait out for a post nobody wants
    m.tick(0);
    expect(m.takeSettled().map((x) => [x.streamId, x.post?.ok, x.post?.ok === false && x.post.error])).toEqual([
      [1, false, reason],
      [2, false, reason],
    ]);
    expect(m.timings.holdUntil).toBe(-Infinity);
  });

  test("killAll fails waiting and in-flight posts, so every caller gets an answer", () => {
    const m = machine();
    m.addPost(1, doc("a"));
    m.addPost(2, doc("b"));
    const a: Action = take(m, 0);
    expect(a.streamId).toBe(1);
    m.killAll("worker cancelled");
    m.tick(0);
    expect(m.takeSettled().map((x) => [x.streamId, x.post?.ok])).toEqual([
      [1, false],
      [2, false],
    ]);
    expect(m.isEvictable(0 + 30_000)).toBe(true);
  });
});
