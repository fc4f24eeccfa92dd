/** Scheduler rules (seed 002 "scheduler.plan"), fake clock, pure core only. */
import { isMessageAction } from "../../bot/outbox/action.ts";
import { describe, expect, test } from "vitest";
import { draftIdOf } from "../../bot/outbox/scheduler.ts";
import { chunks, drive, machine, okAll, stream, take } from "./core-helpers.ts";

describe("scheduler", () => {
  test("one action per plan, and the same plan twice without apply is identical (pure)", () => {
    const m = machine();
    const s = stream(m, 1);
    s.update(chunks("a", "b", "c"));
    const p1 = m.plan(0);
    const p2 = m.plan(0);
    expect(p1).toEqual(p2);
    expect(p1.type).toBe("act");
    expect(p1.type === "act" && p1.action.type).toBe("send");
    expect(p1.type === "act" && isMessageAction(p1.action) && p1.action.index).toBe(0);
  });

  test("same content twice sends nothing", () => {
    const m = machine();
    const s = stream(m, 1);
    s.update(chunks("hello"));
    expect(drive(m, okAll).map((x) => x.action.type)).toEqual(["send"]);
    s.update(chunks("hello"));
    s.update(chunks({ text: "hello", key: "" }));
    expect(m.plan(100_000)).toEqual({ type: "sleep", until: Infinity });
  });

  test("edits of one message follow edit_interval; intermediate texts collapse to the latest", () => {
    const m = machine();
    const s = stream(m, 1);
    s.update(chunks("t0"));
    const steps = drive(m, okAll, 0); // send at 0
    expect(steps).toHaveLength(1);
    for (let i = 1; i <= 50; i++) s.update(chunks(`t${i}`));
    expect(m.plan(500)).toEqual({ type: "sleep", until: 1000 });
    const a = take(m, 1000);
    expect(a.type).toBe("edit");
    expect(a.type === "edit" && a.kind === "edit" && a.chunk?.text).toBe("t50");
  });

  test("seed kinds are independent when messageIntervalMs = 0: an edit may follow a send at once", () => {
    const m = machine({ messageIntervalMs: 0 });
    const s = stream(m, 1);
    s.update(chunks("a"));
    const steps = drive(m, okAll, 0);
    expect(steps.map((x) => x.action.type)).toEqual(["send"]);
    s.update(chunks("a2", "b"));
    // the send of "b" waits for send_interval; the edit of "a2" is ready now
    const e = take(m, 0);
    expect([e.type, isMessageAction(e) && e.kind === "edit" && e.index]).toEqual(["edit", 0]);
  });

  test("shared send/edit budget (docket default): an edit waits messageIntervalMs after a send", () => {
    const m = machine();
    const s = stream(m, 1);
    s.update(chunks("a"));
    drive(m, okAll, 0);
    s.update(chunks("a2"));
    expect(m.plan(10)).toEqual({ type: "sleep", until: 1000 });
  });

  test("a group chat paces sends and edits at groupMessageIntervalMs (20/min)", () => {
    const m = machine({}, -100123);
    const s = stream(m, 1);
    s.update(chunks("a", "b", "c"));
    const steps = drive(m, okAll);
    expect(steps.map((x) => x.at)).toEqual([0, 3000, 6000]);
  });

  test("deletes have their own interval and do not spend the message budget", () => {
    const m = machine();
    const s = stream(m, 1);
    s.update(chunks("a", "b", "c"));
    drive(m, okAll);
    s.update(chunks("a"));
    const steps = drive(m, okAll, 600_000, 2000);
    expect(steps.map((x) => [x.action.type, isMessageAction(x.action) && x.action.index, x.at])).toEqual([
      ["delete", 2, 2000],
      ["delete", 1, 3000],
    ]);
  });

  test("sends and edits left to right, then deletes from the end", () => {
    const m = machine({ messageIntervalMs: 0, sendIntervalMs: 0, editIntervalMs: 0, deleteIntervalMs: 0 });
    const s = stream(m, 1);
    s.update(chunks("a", "b", "c", "d"));
    drive(m, okAll);
    s.update(chunks("A", "B"));
    const steps = drive(m, okAll);
    expect(steps.map((x) => `${x.action.type}${isMessageAction(x.action) ? x.action.index : ""}`)).toEqual(["edit0", "edit1", "delete3", "delete2"]);
  });

  test("winner: earlier ready first, then the finalized stream, then the lower stream id", () => {
    const m = machine({ messageIntervalMs: 0, sendIntervalMs: 0, editIntervalMs: 0 });
    const s1 = stream(m, 1);
    const s2 = stream(m, 2);
    s1.update(chunks("one"));
    s2.update(chunks("two"));
    expect(take(m, 0).streamId).toBe(1); // equal ready, neither final → lower id
    const m2 = machine({ messageIntervalMs: 0, sendIntervalMs: 0 });
    const a = stream(m2, 1);
    const b = stream(m2, 2);
    a.update(chunks("one"));
    b.update(chunks("two"));
    b.finalize();
    expect(take(m2, 0).streamId).toBe(2); // equal ready → the finalized one
  });

  test("fairness: with one shared budget, a busy stream does not starve a later one (least recently served first)", () => {
    const m = machine();
    const busy = stream(m, 1);
    const quiet = stream(m, 2);
    busy.update(chunks("b0"));
    quiet.update(chunks("q"));
    const order: number[] = [];
    let now = 0;
    for (let i = 1; i <= 4; i++) {
      const a = take(m, now);
      order.push(a.streamId);
      m.apply(a, { ok: true, messageId: 100 + i }, now);
      busy.update(chunks(`b${i}`)); // always something new for stream 1
      now += 1000;
    }
    expect(order).toEqual([1, 2, 1, 1]);
  });

  test("no priority overrides limits: a finalized stream in backoff waits behind a ready one", () => {
    const m = machine({ messageIntervalMs: 0, sendIntervalMs: 0 });
    const a = stream(m, 1);
    const b = stream(m, 2);
    a.update(chunks("one"));
    b.update(chunks("two"));
    b.finalize();
    const first = take(m, 0);
    expect(first.streamId).toBe(2);
    m.apply(first, { ok: false, kind: "transient", reason: "boom", error: new Error("boom") }, 0);
    expect(take(m, 0).streamId).toBe(1);
  });

  test("chat hold: nothing at all (typing included) before hold_until", () => {
    const m = machine();
    const s = stream(m, 1, { typing: true });
    s.update(chunks("a"));
    m.timings.holdUntil = 5000;
    expect(m.plan(0)).toEqual({ type: "sleep", until: 5000 });
    expect(m.plan(4999)).toEqual({ type: "sleep", until: 5000 });
    expect(m.plan(5000).type).toBe("act");
  });

  test("typing only while a non-final typing stream exists", () => {
    const m = machine();
    const t = stream(m, 1, { typing: true });
    stream(m, 2, { typing: false }).update(chunks("button"));
    const steps = drive(m, okAll, 11_000);
    expect(steps.map((x) => `${x.action.type}@${x.at}`)).toEqual(["send@0", "typing@0", "typing@5000", "typing@10000"]);
    t.finalize();
    expect(m.plan(20_000).type).toBe("sleep");
    const m2 = machine({ typingEnabled: false });
    stream(m2, 1, { typing: true });
    expect(m2.plan(0)).toEqual({ type: "sleep", until: Infinity });
  });

  test("key change: delete the old message then send anew, as two actions; updates during the move collapse", () => {
    const m = machine();
    const s = stream(m, 1);
    s.update(chunks({ text: "Send?", key: "r1" }));
    drive(m, okAll, 0);
    const old = s.messages[0]!.messageId;
    s.update(chunks({ text: "Send? (2)", key: "r2" }));
    const drop = take(m, 10);
    expect([drop.type, drop.kind, isMessageAction(drop) && drop.messageId]).toEqual(["drop", "delete", old]);
    for (let i = 3; i <= 12; i++) s.update(chunks({ text: `Send? (${i})`, key: `r${i}` }));
    m.apply(drop, { ok: true }, 10);
    const steps = drive(m, okAll, 600_000, 10);
    expect(steps.map((x) => x.action.type)).toEqual(["send"]);
    expect(isMessageAction(steps[0]!.action) && steps[0]!.action.chunk?.text).toBe("Send? (12)");
    expect(s.messages[0]!.sentKey).toBe("r12");
  });

  test("shrinking chunk list: unsent tails vanish, sent tails are deleted", () => {
    const m = machine();
    const s = stream(m, 1);
    s.update(chunks("a", "b", "c"));
    drive(m, okAll, 1000); // a@0, b@1000; c not yet
    expect(s.messages.map((x) => x.messageId !== null)).toEqual([true, true, false]);
    s.update(chunks("a"));
    expect(s.messages).toHaveLength(2);
    const steps = drive(m, okAll, 600_000, 1500);
    expect(steps.map((x) => x.action.type)).toEqual(["delete"]);
    expect(s.messages).toHaveLength(1);
  });

  test("an in-flight tail is never dropped: its send completes, then it is deleted", () => {
    const m = machine();
    const s = stream(m, 1);
    s.update(chunks("a"));
    const send = take(m, 0);
    s.update([]);
    expect(s.messages).toHaveLength(1);
    s.finalize();
    m.tick(1);
    expect(m.takeSettled()).toEqual([]); // not settled while in flight
    m.apply(send, { ok: true, messageId: 55 }, 1);
    const steps = drive(m, okAll, 600_000, 1);
    expect(steps.map((x) => [x.action.type, isMessageAction(x.action) && x.action.messageId])).toEqual([["delete", 55]]);
    m.tick(10_000);
    expect(m.takeSettled()).toEqual([{ streamId: 1, outcome: { status: "ok", messageIds: [] } }]);
  });

  test("draftIdOf = streamId·256 + index + 1: distinct per slot and per stream, never 0, within int32", () => {
    expect([draftIdOf(1, 0), draftIdOf(1, 255), draftIdOf(2, 0)]).toEqual([257, 512, 513]);
    const ids = new Set<number>();
    for (let sid = 1; sid <= 4; sid++) for (let i = 0; i < 256; i++) ids.add(draftIdOf(sid, i));
    expect(ids.size).toBe(4 * 256); // slots 0 and 255 (and every other pair) differ
    for (const sid of [0, 1, 2 ** 23, 2 ** 40]) for (const i of [0, 255, 256]) {
      const id = draftIdOf(sid, i);
      expect(id).toBeGreaterThanOrEqual(1);
      expect(id).toBeLessThanOrEqual(2 ** 31 - 1);
    }
  });

  test("drafts: private chat streams as sendMessageDraft, final text goes as sendMessage", () => {
    const m = machine();
    const s = stream(m, 3, { drafts: true });
    s.update(chunks("Hel"));
    const d1 = take(m, 0);
    expect([d1.type, isMessageAction(d1) && d1.draftId]).toEqual(["draft", draftIdOf(3, 0)]);
    expect(draftIdOf(0, 0)).toBe(1); // never 0, even for stream 0
    m.apply(d1, { ok: true }, 0);
    s.update(chunks("Hello"));
    s.finalize();
    const steps = drive(m, okAll, 600_000, 0);
    expect(steps.map((x) => `${x.action.type}@${x.at}`)).toEqual(["send@0"]); // drafts do not spend the send budget
    expect(isMessageAction(steps[0]!.action) && steps[0]!.action.chunk?.text).toBe("Hello");
  });

  test("drafts: an earlier part becomes a real message once a later part exists; groups never draft", () => {
    const m = machine();
    const s = stream(m, 1, { drafts: true });
    s.update(chunks("part1", "part2…"));
    const steps = drive(m, okAll, 1000);
    expect(steps.map((x) => `${x.action.type}${isMessageAction(x.action) ? x.action.index : ""}`)).toEqual(["send0", "draft1"]);
    const g = machine({}, -5);
    stream(g, 1, { drafts: true }).update(chunks("x"));
    expect(take(g, 0).type).toBe("send");
  });
});
