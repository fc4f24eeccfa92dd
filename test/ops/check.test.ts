/**
 * bot/ops/check.ts: a cached check runs at most once per ttl however often it is asked (concurrent
 * asks share one run: a scrape storm never hammers Telegram), a run past its deadline fails the check
 * instead of hanging the probe, and a throw becomes a failing verdict without the token.
 */
import { describe, expect, test } from "vitest";
import { CachedCheck, runChecks } from "../../bot/ops/check.ts";

describe("CachedCheck", () => {
  test("ttl: asks within it reuse the result, concurrent asks share one run, after it the check runs again", async () => {
    let t = 0;
    let runs = 0;
    const c = new CachedCheck({ name: "botApi", ttlMs: 30_000, deadlineMs: 1000, run: async () => ({ ok: true, detail: `run ${++runs}` }) }, () => t);
    const first = await Promise.all([c.get(), c.get(), c.get()]);
    expect(first.map((x) => x.detail)).toEqual(["run 1", "run 1", "run 1"]);
    t = 29_999;
    expect((await c.get()).detail).toBe("run 1");
    t = 30_000;
    expect((await c.get()).detail).toBe("run 2");
    c.invalidate();
    expect((await c.get()).detail).toBe("run 3");
    expect(c.peek()).toEqual({ check: { ok: true, detail: "run 3" }, at: 30_000 });
  });

  test("a run past its deadline fails the check and aborts the run's signal", async () => {
    let aborted = false;
    const c = new CachedCheck({
      name: "webhook",
      ttlMs: 0,
      deadlineMs: 50,
      run: (signal) =>
        new Promise((resolve) => {
          signal.addEventListener("abort", () => {
            aborted = true;
            resolve({ ok: true, detail: "too late" });
          });
        }),
    });
    expect(await c.get()).toEqual({ ok: false, detail: "no result within 0.05 s" });
    expect(aborted).toBe(true);
  });

  test("a throw is a failing verdict naming the error, with the token redacted", async () => {
    const token = "123456789:AAE-secret-part-of-the-token-xyz";
    const c = new CachedCheck({ name: "disk", ttlMs: 0, deadlineMs: 1000, run: () => { throw new Error(`statfs failed for https://x/bot${token}/getMe`); } }, Date.now, token);
    expect(await runChecks([c])).toEqual({ disk: { ok: false, detail: "statfs failed for https://x/bot<redacted>/getMe" } });
  });
});
