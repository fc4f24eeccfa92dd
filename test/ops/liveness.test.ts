/**
 * The liveness checks of `/livez` fail on what they watch (issue 10 item 1): a loop blocked past the
 * limit, a worker loop that died, a closed outbox — and only on that (no Telegram, no disk).
 */
import { describe, expect, test } from "vitest";
import type { EventLoopLag } from "../../bot/ops/event-loop.ts";
import { MAX_EVENT_LOOP_LAG_MS, eventLoopCheck, outboxCheck, poolsCheck } from "../../bot/ops/liveness.ts";

const lagOf = (ms: number) => ({ maxLagMs: () => ms }) as unknown as EventLoopLag;

describe("liveness checks", () => {
  test("eventLoop: ok below the limit, failing at it, naming the block", async () => {
    expect(await eventLoopCheck(lagOf(MAX_EVENT_LOOP_LAG_MS - 1)).run(new AbortController().signal)).toEqual({ ok: true, detail: `max lag ${MAX_EVENT_LOOP_LAG_MS - 1} ms in the last 10 s` });
    expect(await eventLoopCheck(lagOf(12_345)).run(new AbortController().signal)).toEqual({
      ok: false,
      detail: `max lag 12345 ms in the last 10 s (limit ${MAX_EVENT_LOOP_LAG_MS} ms): the main thread is blocked`,
    });
  });

  test("pools: every loop running once started; one fewer is a dead loop; before the start it is not a failure", async () => {
    const run = (p: { started: boolean; download: number; process: number }) => poolsCheck(() => p, { download: 4, process: 2 }).run(new AbortController().signal);
    expect(await run({ started: true, download: 4, process: 2 })).toEqual({ ok: true, detail: "4/4 download and 2/2 processing loops running" });
    expect(await run({ started: true, download: 4, process: 1 })).toEqual({ ok: false, detail: "4/4 download and 1/2 processing loops running: a worker loop died" });
    expect(await run({ started: false, download: 0, process: 0 })).toEqual({ ok: true, detail: "not started yet (start-up)" });
  });

  test("outbox: open, or closed and saying what that means", async () => {
    expect(await outboxCheck(() => true).run(new AbortController().signal)).toEqual({ ok: true, detail: "open" });
    expect(await outboxCheck(() => false).run(new AbortController().signal)).toEqual({ ok: false, detail: "closed: chat messages are not delivered" });
  });
});
