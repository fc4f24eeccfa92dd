/**
 * bot/intake/poll-outages.ts with a fake Bot API below it: long polling that loses the Bot API after
 * start-up keeps trying (network errors, 5xx, 429) with capped backoff, one warning per kind of
 * failure, one info line when it answers again; a 401 and other 4xx answers pass through untouched
 * (the runner rethrows a 401 and the bot exits 78), and stopping the runner ends the wait.
 */
import { HttpError } from "grammy";
import { expect, test } from "vitest";
import { pollOutages } from "../../bot/intake/poll-outages.ts";
import { createLogger } from "../../bot/log.ts";
import { OutageTracker } from "../../bot/ops/outage.ts";

type Answer = { ok: true; result: unknown[] } | { ok: false; error_code: number; description: string; parameters?: { retry_after: number } } | Error;
const OK = { ok: true as const, result: [] };
const refused = () => new HttpError("Network request for 'getUpdates' failed!", Object.assign(new TypeError("ECONNREFUSED: Unable to connect"), { code: "ECONNREFUSED" }));

function harness(answers: Answer[]) {
  const lines: Array<{ level: number; msg: string; kind?: string }> = [];
  const log = createLogger({ level: "debug", write: (l) => void lines.push(JSON.parse(l)) });
  const tracker = new OutageTracker();
  let calls = 0;
  const prev = (async () => {
    calls++;
    const a = answers.shift() ?? OK;
    if (a instanceof Error) throw a;
    return a;
  }) as never;
  const t = pollOutages({ log, tracker, capMs: 20, random: () => 0 });
  return { lines, tracker, calls: () => calls, poll: (signal?: AbortSignal) => t(prev, "getUpdates", { timeout: 30 } as never, signal as never) };
}

test("network errors, a 502 and a 429 are waited out; one line per kind, one when polling works again", async () => {
  const h = harness([refused(), refused(), { ok: false, error_code: 502, description: "Bad Gateway" }, { ok: false, error_code: 429, description: "Too Many Requests: retry after 0", parameters: { retry_after: 0 } }, refused()]);
  expect(await h.poll()).toEqual(OK);
  expect(h.calls()).toBe(6);
  expect(h.lines.map((l) => [l.level, l.kind ?? null, l.msg.split(" (")[0]])).toEqual([
    [40, "refused", "long polling cannot reach the Bot API"],
    [40, "api", "long polling cannot reach the Bot API"],
    [40, "refused", "long polling cannot reach the Bot API"],
    [30, null, "long polling reached the Bot API again after 5 failed attempts"],
  ]);
  expect(h.tracker.attempts).toBe(0);
});

test("a 401 (token revoked while running) and a 400 pass through at once, not retried", async () => {
  const h = harness([{ ok: false, error_code: 401, description: "Unauthorized" }, { ok: false, error_code: 400, description: "Bad Request: wrong offset" }]);
  expect(await h.poll()).toEqual({ ok: false, error_code: 401, description: "Unauthorized" });
  expect(await h.poll()).toEqual({ ok: false, error_code: 400, description: "Bad Request: wrong offset" });
  expect([h.calls(), h.lines]).toEqual([2, []]);
});

test("stopping the runner (abort) ends the wait with an error", async () => {
  const h = harness(Array.from({ length: 1000 }, refused));
  const ctl = new AbortController();
  const p = h.poll(ctl.signal);
  await expect.poll(() => h.calls()).toBeGreaterThan(2);
  ctl.abort();
  await expect(p).rejects.toThrow("polling stopped");
});
