/**
 * Time bounds of a download try (audit 000 M3): the named settings, their defaults, the deadline
 * formula, and the timer's classification (a bound that fires is a retryable `download_failed`; the
 * caller's own abort is not a timeout).
 */
import { describe, expect, test } from "vitest";
import { loadConfig } from "../../bot/config.ts";
import { downloadDeadlineMs, downloadTimer } from "../../bot/fetch/timeouts.ts";

const MB = 1024 * 1024;
const token = "123456789:AAE-test-token-docket-emulator_xyz";

describe("settings", () => {
  test("defaults: 60 s idle, deadline 2 min + size at 256 KB/s (20 MB → 200 s, 2000 MB → 8120 s)", () => {
    const c = loadConfig({ BOT_TOKEN: token });
    expect([c.downloadIdleTimeoutMs, c.downloadTimeoutMs, c.downloadMinSpeed]).toEqual([60_000, 120_000, 256 * 1024]);
    expect(downloadDeadlineMs(20 * MB, c.downloadTimeoutMs, c.downloadMinSpeed)).toBe(200_000);
    expect(downloadDeadlineMs(2000 * MB, c.downloadTimeoutMs, c.downloadMinSpeed)).toBe(8_120_000);
  });

  test("operators set them by name, with units", () => {
    const c = loadConfig({ BOT_TOKEN: token, DOWNLOAD_IDLE_TIMEOUT: "90s", DOWNLOAD_TIMEOUT: "5m", DOWNLOAD_MIN_SPEED: "1MB" });
    expect([c.downloadIdleTimeoutMs, c.downloadTimeoutMs, c.downloadMinSpeed]).toEqual([90_000, 300_000, MB]);
    expect(() => loadConfig({ BOT_TOKEN: token, DOWNLOAD_IDLE_TIMEOUT: "soon" })).toThrow(/DOWNLOAD_IDLE_TIMEOUT: expected a duration/);
  });
});

describe("downloadTimer", () => {
  test("idle starts at the first touch and restarts with every touch", async () => {
    const t = downloadTimer(undefined, 250, undefined);
    await Bun.sleep(350);
    expect(t.signal.aborted).toBe(false); // not armed before the first touch (a local getFile may block long)
    t.touch();
    for (let i = 0; i < 4; i++) {
      await Bun.sleep(60);
      t.touch();
    }
    expect(t.signal.aborted).toBe(false);
    await Bun.sleep(500);
    expect(t.signal.aborted).toBe(true);
    expect(t.failure()).toEqual({ reason: "download_failed", retryable: true, detail: "download stalled: no data for 250 ms" });
    t.stop();
  });

  test("the deadline fires even while bytes keep coming", async () => {
    const t = downloadTimer(undefined, 1000, 120);
    const touching = setInterval(() => t.touch(), 20);
    await Bun.sleep(400);
    clearInterval(touching);
    expect(t.failure()?.detail).toBe("download took longer than its deadline of 120 ms");
    t.stop();
  });

  test("the caller's abort passes through and is not reported as a timeout", async () => {
    const outer = new AbortController();
    const t = downloadTimer(outer.signal, 50, 100);
    t.touch();
    outer.abort(new Error("lease lost"));
    await Bun.sleep(150);
    expect(t.signal.aborted).toBe(true);
    expect(t.failure()).toBeNull();
    t.stop();
  });

  test("stop() clears both timers", async () => {
    const t = downloadTimer(undefined, 30, 60);
    t.touch();
    t.stop();
    await Bun.sleep(100);
    expect(t.signal.aborted).toBe(false);
  });
});
