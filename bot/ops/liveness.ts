/**
 * The liveness checks of `/livez` (issue 10 item 1): the process and its event loop answer, and the
 * worker pools and the outbox are alive. None of them touches Telegram or the disk, so a restart
 * decided on `/livez` never happens because Telegram is slow or a disk filled up.
 */
import type { Check, CheckSpec } from "./check.ts";
import type { EventLoopLag } from "./event-loop.ts";

/** A loop blocked longer than this within the last 10 s fails liveness, ms. */
export const MAX_EVENT_LOOP_LAG_MS = 10_000;

/** `eventLoop`: the largest measured lag of the last 10 s stays under {@link MAX_EVENT_LOOP_LAG_MS}. */
export function eventLoopCheck(lag: EventLoopLag): CheckSpec {
  return {
    name: "eventLoop",
    ttlMs: 0,
    deadlineMs: 1000,
    run(): Check {
      const max = lag.maxLagMs();
      const detail = `max lag ${max} ms in the last 10 s`;
      return max < MAX_EVENT_LOOP_LAG_MS ? { ok: true, detail } : { ok: false, detail: `${detail} (limit ${MAX_EVENT_LOOP_LAG_MS} ms): the main thread is blocked` };
    },
  };
}

/** What the engine says about its loops (Engine.liveness). */
export interface PoolsLiveness {
  readonly started: boolean;
  readonly download: number;
  readonly process: number;
}

/** `pools`: every download and processing loop is running once the engine started. */
export function poolsCheck(pools: () => PoolsLiveness, expected: { readonly download: number; readonly process: number }): CheckSpec {
  return {
    name: "pools",
    ttlMs: 0,
    deadlineMs: 1000,
    run(): Check {
      const p = pools();
      if (!p.started) return { ok: true, detail: "not started yet (start-up)" };
      const detail = `${p.download}/${expected.download} download and ${p.process}/${expected.process} processing loops running`;
      return p.download === expected.download && p.process === expected.process ? { ok: true, detail } : { ok: false, detail: `${detail}: a worker loop died` };
    },
  };
}

/** `outbox`: the outbox takes messages (it is not closed). */
export function outboxCheck(isOpen: () => boolean): CheckSpec {
  return {
    name: "outbox",
    ttlMs: 0,
    deadlineMs: 1000,
    run: (): Check => (isOpen() ? { ok: true, detail: "open" } : { ok: false, detail: "closed: chat messages are not delivered" }),
  };
}
