/**
 * bot/intake/poll-conflicts.ts with a fake clock (field case BR-04; botapi-facts.md §2 "409";
 * audit 000 T3): backoff of at least 1 s with jitter by default, warnings, one error naming
 * "another process is polling with this token" once the conflict outlasts alertAfterMs,
 * deleteWebhook once (pending updates kept), and the fatal 409 when that is not allowed.
 */
import { GrammyError } from "grammy";
import { describe, expect, test } from "vitest";
import { ANOTHER_POLLER, pollConflicts, type PollConflictOptions } from "../../bot/intake/poll-conflicts.ts";
import { createLogger } from "../../bot/log.ts";

const TERMINATED = { ok: false, error_code: 409, description: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running" } as const;
const WEBHOOK = { ok: false, error_code: 409, description: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first" } as const;
const OK = { ok: true, result: [] } as const;

type Answer = typeof TERMINATED | typeof WEBHOOK | typeof OK | { ok: true; result: boolean };

/**
 * A fake Bot API below the transformer (answers given in order, then OK) and a fake clock
 * that the transformer's sleeps advance.
 */
function harness(answers: Answer[], opts: Partial<PollConflictOptions> = {}) {
  const calls: Array<{ method: string; payload: unknown }> = [];
  const waits: number[] = [];
  const lines: Array<{ level: number; msg: string }> = [];
  let t = Date.parse("2026-11-30T10:00:00.000Z");
  const log = createLogger({ level: "debug", write: (l) => void lines.push(JSON.parse(l)) });
  const transformer = pollConflicts({
    log,
    deleteWebhook: true,
    now: () => t,
    sleep: async (ms) => {
      waits.push(ms);
      t += ms;
    },
    ...opts,
  });
  const prev = (async (method: string, payload: unknown) => {
    calls.push({ method, payload });
    if (method === "deleteWebhook") return { ok: true, result: true };
    return answers.shift() ?? OK;
  }) as unknown as Parameters<typeof transformer>[0];
  const poll = () => transformer(prev, "getUpdates", { timeout: 30 } as never);
  const at = (level: number) => lines.filter((l) => l.level === level).map((l) => l.msg);
  return { calls, waits, lines, poll, prev, transformer, warns: () => at(40), errors: () => at(50), infos: () => at(30), advance: (ms: number) => void (t += ms) };
}

describe("409 'terminated by other getUpdates request'", () => {
  test("three conflicts, then updates: backoff base + jitter each time, a warning each, the poll goes on", async () => {
    const seq = [0, 0.5, 0.999];
    const h = harness([TERMINATED, TERMINATED, TERMINATED], { random: () => seq.shift()! });
    expect(await h.poll()).toEqual(OK);
    expect(h.calls.map((c) => c.method)).toEqual(["getUpdates", "getUpdates", "getUpdates", "getUpdates"]);
    expect(h.waits).toEqual([1000, 1500, 1999]);
    expect(h.warns()).toEqual(Array(3).fill("getUpdates conflict (409); backing off"));
    expect(h.errors()).toEqual([]);
    expect(h.infos()).toEqual(["getUpdates conflict resolved"]);
  });

  test("default backoff: at least 1 s, below 2 s, with jitter (not one fixed delay)", async () => {
    const h = harness(Array(40).fill(TERMINATED), { alertAfterMs: Number.MAX_SAFE_INTEGER });
    await h.poll();
    expect(h.waits).toHaveLength(40);
    expect(Math.min(...h.waits)).toBeGreaterThanOrEqual(1000);
    expect(Math.max(...h.waits)).toBeLessThan(2000);
    expect(new Set(h.waits).size).toBeGreaterThan(5);
  });

  test("a conflict lasting longer than alertAfterMs (default 60 s) logs one error naming another poller", async () => {
    // random 0 → exactly 1 s per backoff: conflict n (1-based) is seen n-1 s after the first.
    const h = harness(Array(70).fill(TERMINATED), { random: () => 0 });
    await h.poll();
    const errors = h.lines.filter((l) => l.level === 50);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.msg).toBe(`getUpdates keeps answering 409: ${ANOTHER_POLLER}`);
    expect((errors[0] as unknown as { ms: number }).ms).toBe(61_000);
    // 61 warnings up to 60 s, the error at 61 s, warnings again after it (one alert per conflict).
    const levels = h.lines.filter((l) => l.level >= 40).map((l) => l.level);
    expect(levels.indexOf(50)).toBe(61);
    expect(levels.filter((l) => l === 40)).toHaveLength(69);
  });

  test("after the conflict resolved, a new one alerts again only after its own alertAfterMs", async () => {
    const answers: Answer[] = [TERMINATED, TERMINATED, TERMINATED];
    const h = harness(answers, { alertAfterMs: 1500, random: () => 0 });
    await h.poll();
    expect(h.errors()).toHaveLength(1);
    h.advance(3_600_000);
    // A fresh conflict counts from its own start (0 s, 1 s: below 1.5 s), not from the old one.
    answers.push(TERMINATED, TERMINATED);
    await h.poll();
    expect(h.errors()).toHaveLength(1);
    answers.push(TERMINATED, TERMINATED, TERMINATED);
    await h.poll();
    expect(h.errors()).toHaveLength(2);
    expect(h.infos()).toEqual(Array(3).fill("getUpdates conflict resolved"));
  });

  test("an abort during the backoff ends the call (the default timer honours the signal)", async () => {
    const lines: string[] = [];
    const transformer = pollConflicts({ log: createLogger({ write: (l) => void lines.push(l) }), deleteWebhook: true, backoffMs: 60_000 });
    const prev = (async () => TERMINATED) as unknown as Parameters<typeof transformer>[0];
    const ac = new AbortController();
    const call = transformer(prev, "getUpdates", {} as never, ac.signal as never);
    setTimeout(() => ac.abort(), 20);
    await expect(call).rejects.toThrow("aborted");
  });
});

describe("409 'webhook is active'", () => {
  test("deleteWebhook allowed: called once with drop_pending_updates false, then polling, no backoff", async () => {
    const h = harness([WEBHOOK]);
    expect(await h.poll()).toEqual(OK);
    expect(h.calls).toEqual([
      { method: "getUpdates", payload: { timeout: 30 } },
      { method: "deleteWebhook", payload: { drop_pending_updates: false } },
      { method: "getUpdates", payload: { timeout: 30 } },
    ]);
    expect(h.waits).toEqual([]);
  });

  test("DELETE_WEBHOOK_ON_START=false: a fatal 409 GrammyError naming another poller, nothing deleted", async () => {
    const h = harness([WEBHOOK], { deleteWebhook: false });
    const err = await h.poll().then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(GrammyError);
    // @grammyjs/runner rethrows error_code 401/409 from its fetcher: polling stops, main exits 1.
    expect((err as GrammyError).error_code).toBe(409);
    expect((err as GrammyError).message).toContain(ANOTHER_POLLER);
    expect((err as GrammyError).message).toContain("DELETE_WEBHOOK_ON_START=true");
    expect(h.calls.map((c) => c.method)).toEqual(["getUpdates"]);
  });

  test("a webhook set again after the one deletion: fatal, not a deleteWebhook loop", async () => {
    const h = harness([WEBHOOK, WEBHOOK]);
    await expect(h.poll()).rejects.toThrow(ANOTHER_POLLER);
    expect(h.calls.map((c) => c.method)).toEqual(["getUpdates", "deleteWebhook", "getUpdates"]);
  });
});

test("other methods and other errors pass through untouched", async () => {
  const h = harness([]);
  const prev = (async () => TERMINATED) as unknown as Parameters<typeof h.transformer>[0];
  expect(await h.transformer(prev, "sendMessage", {} as never)).toEqual(TERMINATED);
  const tooMany = { ok: false, error_code: 429, description: "Too Many Requests: retry after 5", parameters: { retry_after: 5 } };
  const prev429 = (async () => tooMany) as unknown as Parameters<typeof h.transformer>[0];
  expect(await h.transformer(prev429, "getUpdates", {} as never)).toEqual(tooMany);
  expect(h.waits).toEqual([]);
});
