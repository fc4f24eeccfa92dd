/**
 * Long polling through @grammyjs/runner (concurrent sink, per-chat
 * `sequentialize` in the middleware), with one change to the runner's `run()`:
 * a batch is confirmed to Telegram — the next getUpdates with a higher `offset`
 * — only after every update of the previous batch was handled. The runner's own
 * fetcher polls ahead while handlers run, so a crash between "fetched" and
 * "INSERT committed" lost updates for good (found by the kill test). Now a crash
 * means the unconfirmed batch is delivered again, and intake's idempotency
 * (`UNIQUE(chat_id, file_unique_id, variant)`) absorbs it (seed 000: "Один файл —
 * две доставки"). Handlers therefore must stay short: they INSERT and enqueue a
 * reply; they never wait for delivery.
 */
import { createConcurrentSink, createRunner, createSource, createUpdateFetcher, type RunnerHandle, type RunOptions } from "@grammyjs/runner";
import type { Bot } from "grammy";
import type { Update } from "grammy/types";
import type { DocketContext } from "../i18n/index.ts";
import type { Logger } from "../log.ts";

/** Start long polling; returns the runner handle (`stop()`, `task()`, `isRunning()`). */
export function startPolling(bot: Bot<DocketContext>, log: Logger, options: RunOptions<Update> = {}): RunnerHandle {
  const fetchUpdates = createUpdateFetcher(bot, options.runner);
  const inFlight = new Set<number>();
  let drained: Array<() => void> = [];

  const waitDrained = (signal: AbortSignal): Promise<void> =>
    new Promise((resolve, reject) => {
      if (inFlight.size === 0) return resolve();
      if (signal.aborted) return reject(new Error("polling stopped"));
      drained.push(resolve);
      signal.addEventListener("abort", () => reject(new Error("polling stopped")), { once: true });
    });

  const source = createSource(
    {
      async supply(batchSize, signal) {
        // The next fetch confirms everything fetched so far: only once all of it was handled.
        await waitDrained(signal as unknown as AbortSignal);
        const updates = await fetchUpdates(batchSize, signal);
        for (const u of updates) inFlight.add(u.update_id);
        return updates;
      },
    },
    options.source,
  );
  const sink = createConcurrentSink<Update>(
    {
      consume: async (update) => {
        try {
          await bot.handleUpdate(update);
        } finally {
          inFlight.delete(update.update_id);
          if (inFlight.size === 0) {
            const waiting = drained;
            drained = [];
            for (const w of waiting) w();
          }
        }
      },
    },
    async (error) => {
      try {
        await bot.errorHandler(error as never);
      } catch (err) {
        log.error({ err }, "update handler failed");
      }
    },
    options.sink,
  );
  const runner = createRunner(source, sink);
  runner.start();
  return runner;
}
