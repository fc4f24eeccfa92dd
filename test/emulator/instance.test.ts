/**
 * Telegram's rules for leaving a server, on the emulator's manual clock (botapi-facts.md §4;
 * TBA Client.cpp `on_cmd`, ClientManager.cpp): close answers 429 during the first 10 minutes after
 * the bot was launched on a server that had been up for more than 10 minutes; after logOut the
 * server answers "Logged out" for 10 minutes and then accepts the bot again.
 */
import { Api } from "grammy";
import { afterEach, describe, expect, it } from "vitest";
import { SERVER_WINDOW_MS } from "./bot-instance.ts";
import { manualClock } from "./clock.ts";
import { startEmulator, type Emulator } from "./index.ts";
import { apiFailure, rawCall } from "./raw-call.ts";

let em: Emulator | undefined;
afterEach(async () => {
  await em?.close();
  em = undefined;
});
const MIN = 60_000;

describe("close", () => {
  it("429 with the rest of the window while the bot was launched less than 10 minutes ago on a server up for longer", async () => {
    const clock = manualClock();
    em = await startEmulator({ mode: "local", localDir: "/nonexistent", now: clock.now });
    clock.advance(11 * MIN); // the server has been up 11 minutes when the bot first calls it
    const api = new Api(em.token, { apiRoot: em.apiRoot });
    await api.getMe(); // launch
    clock.advance(4 * MIN + 30_500);
    const early = await rawCall(em, "close");
    expect(early).toMatchObject({ status: 429, retryAfter: "329", body: { ok: false, error_code: 429, description: "Too Many Requests: retry after 329", parameters: { retry_after: 329 } } });
    expect(em.calls.at(-1)).toMatchObject({ method: "close", status: 429 });
    clock.advance(329_000); // 9:59.5 after the launch: truncated to 0, allowed as in TBA
    expect(await api.close()).toBe(true);
    // The next request launches a new instance: its own 10-minute window starts.
    await api.getMe();
    clock.advance(SERVER_WINDOW_MS - 1000);
    expect(await apiFailure(api.close())).toEqual({ code: 429, description: "Too Many Requests: retry after 1", retryAfter: 1 });
    clock.advance(1000);
    expect(await api.close()).toBe(true);
  });

  it("no 429 when the bot was launched within the server's first 10 minutes", async () => {
    const clock = manualClock();
    em = await startEmulator({ mode: "local", localDir: "/nonexistent", now: clock.now });
    clock.advance(SERVER_WINDOW_MS); // launched exactly 10 minutes after the start: not "more than"
    const api = new Api(em.token, { apiRoot: em.apiRoot });
    await api.getMe();
    expect(await api.close()).toBe(true);
  });
});

describe("logOut", () => {
  it("answers Logged out for 10 minutes, then takes the bot back with an empty update queue", async () => {
    const clock = manualClock();
    em = await startEmulator({ now: clock.now, rateLimits: false });
    const alice = em.user();
    await alice.sendText("before");
    const api = new Api(em.token, { apiRoot: em.apiRoot });
    expect(await api.logOut()).toBe(true);
    expect(em.pendingUpdates()).toBe(0);
    clock.advance(SERVER_WINDOW_MS - 1);
    expect(await apiFailure(api.getMe())).toEqual({ code: 400, description: "Logged out" });
    expect(await apiFailure(api.close())).toEqual({ code: 400, description: "Logged out" });
    clock.advance(1);
    expect((await api.getMe()).username).toBe("docket_test_bot");
    expect(await api.getUpdates({ timeout: 0 })).toEqual([]);
  });
});
