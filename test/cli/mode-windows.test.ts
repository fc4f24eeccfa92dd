/** The pure core of Telegram's 10-minute windows for `docket mode` (bot/cli/mode-windows.ts), on plain numbers. */
import { describe, expect, test } from "vitest";
import { launchFromRetryAfter, pendingWindow, TELEGRAM_WINDOW_MS, utcClock } from "../../bot/cli/mode-windows.ts";

const CLOUD = "https://api.telegram.org";
const LOCAL = "http://127.0.0.1:8081";
const toCloud = { fromMode: "local", fromRoot: LOCAL, target: "cloud", toRoot: CLOUD } as const;
const toLocal = { fromMode: "cloud", fromRoot: CLOUD, target: "local", toRoot: LOCAL } as const;

describe("pendingWindow", () => {
  test("nothing recorded, or windows over: none", () => {
    expect(pendingWindow({}, toCloud, 0)).toBeNull();
    const state = { logOut: { at: 0, root: CLOUD }, launch: { at: 0, root: LOCAL } };
    expect(pendingWindow(state, toCloud, TELEGRAM_WINDOW_MS)).toBeNull();
    expect(pendingWindow(state, toCloud, TELEGRAM_WINDOW_MS - 1)).toMatchObject({ until: TELEGRAM_WINDOW_MS });
  });

  test("leaving a local server: its launch; going to the cloud: the logOut; the later one wins", () => {
    const state = { logOut: { at: 1000, root: CLOUD }, launch: { at: 5000, root: LOCAL } };
    expect(pendingWindow(state, toCloud, 6000)).toMatchObject({ rule: "close", until: 5000 + TELEGRAM_WINDOW_MS });
    expect(pendingWindow({ ...state, launch: { at: 500, root: LOCAL } }, toCloud, 6000)).toMatchObject({ rule: "logOut", until: 1000 + TELEGRAM_WINDOW_MS });
    // Going to a local server meets neither rule.
    expect(pendingWindow(state, toLocal, 6000)).toBeNull();
  });

  test("a record of another server does not count", () => {
    const state = { logOut: { at: 0, root: "http://other:8081" }, launch: { at: 0, root: "http://127.0.0.1:9999" } };
    expect(pendingWindow(state, toCloud, 1)).toBeNull();
  });
});

test("a 429 retry_after gives the launch; times read as UTC clock", () => {
  expect(launchFromRetryAfter(700_000, 480)).toBe(700_000 + 480_000 - TELEGRAM_WINDOW_MS);
  expect(utcClock(Date.UTC(2026, 0, 1, 13, 5, 9))).toBe("13:05:09 UTC");
});
