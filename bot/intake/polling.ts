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

/**
 * Updates whose handler failed are handled again before their batch is confirmed (issue 14, faults: a
 * database that stopped answering mid-run must not lose the files sent meanwhile): `ready` resolves once
 * the store answers again (the caller waits with backoff), then each failed update is handled once more —
 * intake is idempotent (seed 000: two deliveries of one file; one reply per update_id). After
 * `rounds` rounds an update that still fails is confirmed (a handler bug must not stop intake).
 */
export interface RedoFailed {
  ready(signal: AbortSignal): Promise<void>;
  /** Rounds before a still-failing update is given up (default 5). */
  readonly rounds?: number;
}

/** Start long polling; returns the runner handle (`stop()`, `task()`, `isRunning()`). */
export function startPolling(bot: Bot<DocketContext>, log: Logger, options: RunOptions<Update> = {}, redo?: RedoFailed): RunnerHandle {
  const fetchUpdates = createUpdateFetcher(bot, options.runner);
  const inFlight = new Set<number>();
  let drained: Array<() => void> = [];
  let failed: Update[] = [];

  /** Handle the failed updates of the last batch again once the store answers (see {@link RedoFailed}). */
  const redoFailed = async (signal: AbortSignal): Promise<void> => {
    for (let round = 1; redo && failed.length > 0 && !signal.aborted; round++) {
      if (round > (redo.rounds ?? 5)) {
        log.error({ update_ids: failed.map((u) => u.update_id) }, "updates still fail after retries; confirmed to Telegram as they are");
        break;
      }
      await redo.ready(signal);
      const again = failed;
      failed = [];
      for (const u of again) {
        try {
          await bot.handleUpdate(u);
        } catch (err) {
          failed.push(u);
          await Promise.resolve(bot.errorHandler(err as never)).catch(() => {});
        }
      }
      if (failed.length === 0) log.info({ update_ids: again.map((u) => u.update_id) }, "updates that failed were handled once the store answered again");
    }
    failed = [];
  };

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
        await redoFailed(signal as unknown as AbortSignal);
        // Stopped while waiting for the store: never confirm what was not handled.
        if ((signal as unknown as AbortSignal).aborted) throw new Error("polling stopped");
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
        } catch (err) {
          // Recorded before the batch counts as drained, so the next fetch handles it again first.
          if (redo) failed.push(update);
          throw err;
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
