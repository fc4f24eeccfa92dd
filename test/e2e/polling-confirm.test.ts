/**
 * Long polling confirms a batch only after its handlers finished (found by the
 * kill test: the runner polled ahead, so a crash lost updates that were fetched
 * but not yet INSERTed). Real grammY Bot + runner against the emulator.
 */
import { Bot } from "grammy";
import { expect, test } from "vitest";
import { startPolling } from "../../bot/intake/polling.ts";
import { createLogger } from "../../bot/log.ts";
import type { DocketContext } from "../../bot/i18n/index.ts";
import { startEmulator } from "../emulator/index.ts";

test("no getUpdates confirms an update (offset > its id) before its handler returned", async () => {
  const em = await startEmulator({ rateLimits: false, repeatPollRule: false });
  const bot = new Bot<DocketContext>(em.token, { client: { apiRoot: em.apiRoot } });
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let firstRunning = false;
  const handled: number[] = [];
  bot.use(async (ctx) => {
    if (ctx.update.update_id === firstId) {
      firstRunning = true;
      await gate; // a slow handler: e.g. a process about to be killed
    }
    handled.push(ctx.update.update_id);
  });
  await bot.init();
  const u = em.user();
  const first = await u.sendText("one");
  const firstId = first.update_id;
  const runner = startPolling(bot, createLogger({ write: () => {} }), { runner: { fetch: { timeout: 1 }, silent: true } });
  try {
    // Wait for the first handler to run (not a fixed delay: on a loaded machine the first poll can come
    // late and would then fetch "two" in the same batch as "one").
    await expect.poll(() => firstRunning).toBe(true);
    await u.sendText("two"); // arrives while the first handler still runs
    await Bun.sleep(1500); // polls that would wrongly confirm "one" now had time to happen
    const polls = em.calls.filter((c) => c.method === "getUpdates").map((c) => Number(c.params.offset ?? 0));
    expect(polls.every((o) => o <= firstId)).toBe(true);
    expect(handled).toEqual([]);
    expect(em.pendingUpdates()).toBe(2); // nothing confirmed yet: a crash now loses nothing
    release();
    await expect.poll(() => handled.length).toBeGreaterThanOrEqual(2);
    expect(handled).toEqual([firstId, firstId + 1]);
    await expect.poll(() => em.pendingUpdates()).toBe(0);
  } finally {
    await Promise.race([runner.stop(), Bun.sleep(2000)]);
    await em.close();
  }
});
