/** The pool's pure decisions (processors/pool/policy.ts) with a fake clock: replacement and how many children to start. */
import { describe, expect, test } from "vitest";
import { childrenToStart, idleExpired, replaceAtOnce, retireAfterJob, type PoolSettings } from "../../processors/pool/policy.ts";
import { childEnv } from "../../processors/pool/env.ts";

const S: PoolSettings = { size: 2, recycleJobs: 3, recycleRssBytes: 500, idleMs: 10_000 };

describe("retireAfterJob", () => {
  test("keeps a child under both limits, retires at the job count, then on RSS above (not at) the threshold", () => {
    expect(retireAfterJob(1, 100, S)).toBeNull();
    expect(retireAfterJob(2, 500, S)).toBeNull();
    expect(retireAfterJob(2, 501, S)).toBe("rss");
    expect(retireAfterJob(3, 100, S)).toBe("jobs");
    expect(retireAfterJob(4, 9999, S)).toBe("jobs");
  });
});

describe("idleExpired (fake clock)", () => {
  test("idle since t: not yet at t + idleMs − 1, expired at t + idleMs", () => {
    const t = 1_000_000;
    expect(idleExpired(t, t, S)).toBe(false);
    expect(idleExpired(t, t + 9_999, S)).toBe(false);
    expect(idleExpired(t, t + 10_000, S)).toBe(true);
  });
});

describe("replaceAtOnce", () => {
  test("every reason but an idle exit refills the slot at once", () => {
    expect((["jobs", "rss", "killed", "crashed", "idle"] as const).map(replaceAtOnce)).toEqual([true, true, true, true, false]);
  });
});

describe("childrenToStart", () => {
  test.each([
    [{ starting: 0, idle: 0, busy: 0, waiting: 0 }, 0, "nothing waits: nothing starts"],
    [{ starting: 0, idle: 0, busy: 0, waiting: 1 }, 1, "one job, empty pool"],
    [{ starting: 0, idle: 0, busy: 0, waiting: 5 }, 2, "never above the size"],
    [{ starting: 1, idle: 0, busy: 0, waiting: 1 }, 0, "a starting child will take it"],
    [{ starting: 0, idle: 1, busy: 0, waiting: 1 }, 0, "an idle child takes it"],
    [{ starting: 0, idle: 0, busy: 1, waiting: 3 }, 1, "one slot left"],
    [{ starting: 0, idle: 0, busy: 2, waiting: 3 }, 0, "all busy: the jobs wait"],
  ])("%o → %i (%s)", (counts, want) => {
    expect(childrenToStart(counts, S)).toBe(want);
  });
});

describe("childEnv", () => {
  test("copies only the allowlist, drops secrets and everything else, adds the extras", () => {
    const parent = { PATH: "/usr/bin", LANG: "C.UTF-8", BOT_TOKEN: "1:x", WEBHOOK_SECRET: "s", DATA_DIR: "/var", HOME: "/root" };
    expect(childEnv(parent, { TESSDATA_PREFIX: "/usr/share/tessdata" })).toEqual({ PATH: "/usr/bin", LANG: "C.UTF-8", TESSDATA_PREFIX: "/usr/share/tessdata" });
  });
});
