/**
 * Test harness: the project's Bot API emulator on 127.0.0.1 plus the real bot
 * (createApp + @grammyjs/runner long polling + the engine), in this process, with
 * SQLite and data dirs in a fresh temp folder. Tests talk to the bot only as
 * chat users through the emulator.
 */
import type { RunnerHandle } from "@grammyjs/runner";
import { startPolling } from "../../bot/intake/polling.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp, type App } from "../../bot/app.ts";
import { loadConfig, type Config } from "../../bot/config.ts";
import { pollConflicts } from "../../bot/intake/poll-conflicts.ts";
import { createLogger, type Logger } from "../../bot/log.ts";
import type { ProcessRunner } from "../../bot/worker/types.ts";
import type { FileJob } from "../../bot/db/schema.ts";
import { ENDED_STATES } from "../../bot/jobs/states.ts";
import { startEmulator, type Emulator, type EmulatorOptions } from "../emulator/index.ts";

/** A running emulator + bot. */
export interface Stack {
  readonly em: Emulator;
  readonly app: App;
  readonly config: Config;
  readonly dir: string;
  /** Every log line the bot wrote (JSON strings). */
  readonly logs: string[];
  /** The job row created for a user's message (waits up to timeoutMs, default 15 000, for the INSERT), without waiting for its end. */
  jobFor(chatId: number, messageId: number, timeoutMs?: number): Promise<FileJob>;
  /** Wait until job `id` is in one of `states` (polls the store), returns the row. */
  waitJob(id: number, states?: readonly string[], timeoutMs?: number): Promise<FileJob>;
  /** Stop bot and emulator and delete the temp folder; `keep` stops only the bot (for `resume`). */
  stop(opts?: { keep?: boolean }): Promise<void>;
}

/** Options of {@link startStack}. */
export interface StackOptions {
  readonly emulator?: EmulatorOptions;
  /** Extra environment for loadConfig (strings, as an operator writes them). */
  readonly env?: Record<string, string>;
  readonly runner?: ProcessRunner;
  /** Runs after the emulator starts and before the bot does (inject faults, set a webhook). */
  readonly beforeStart?: (em: Emulator) => Promise<void> | void;
  /** Keep polling off (tests that drive the engine alone). */
  readonly noPolling?: boolean;
  /**
   * Restart against the same emulator and data of an earlier stack (a new bot process after a
   * crash). That stack must have been stopped with `stop({ keep: true })`.
   */
  readonly resume?: Stack;
  /** The bot's clock, epoch ms (createApp's `now`); default Date.now. Timers still run on real time. */
  readonly now?: () => number;
}

/** Start the emulator and the bot against it. */
export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const dir = opts.resume?.dir ?? mkdtempSync(join(tmpdir(), "docket-e2e-"));
  const mode = opts.resume?.em.mode ?? opts.emulator?.mode ?? "cloud";
  const em =
    opts.resume?.em ??
    (await startEmulator({ rateLimits: false, ...opts.emulator, ...(mode === "local" ? { localDir: opts.emulator?.localDir ?? join(dir, "bot-api") } : {}) }));
  await opts.beforeStart?.(em);
  const config = loadConfig({
    BOT_TOKEN: em.token,
    BOT_API_MODE: mode,
    BOT_API_ROOT: em.apiRoot,
    DATA_DIR: join(dir, "data"),
    LOCAL_BOT_API_DIR: em.localDir ?? join(dir, "bot-api"),
    HTTP_PORT: "0",
    LEASE_TTL: "5s",
    // The per-page budget is wall-clock: the 2 s default can be eaten by a loaded CI runner on an ordinary
    // page. Same 10 s as the processor tests (TEST_LIMITS); tests of the budget itself set their own.
    PDF_PAGE_BUDGET: "10s",
    ...opts.env,
  });
  const logs: string[] = [];
  const log: Logger = createLogger({ level: "debug", token: config.token, write: (l) => void logs.push(l), journald: false });
  const app = await createApp({ config, log, ...(opts.runner ? { runner: opts.runner } : {}), ...(opts.now ? { now: opts.now } : {}) });
  app.bot.api.config.use(pollConflicts({ log, deleteWebhook: true, backoffMs: 200 }));
  await app.bot.init();
  await app.replies.resume();
  let runner: RunnerHandle | null = null;
  if (!opts.noPolling) runner = startPolling(app.bot, app.services.log, { runner: { fetch: { timeout: 1 }, silent: true } });
  await app.engine.start();
  // As bot/main.ts does where updates are received (the one process of a test stack).
  app.positions.start();

  return {
    em,
    app,
    config,
    dir,
    logs,
    async jobFor(chatId, messageId, timeoutMs = 15_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const row = (await app.services.store.listByChat(chatId, 100)).find((r) => r.messageId === messageId);
        if (row) return row;
        if (Date.now() > until) throw new Error(`no job for message ${messageId} in chat ${chatId} after ${timeoutMs} ms`);
        await Bun.sleep(20);
      }
    },
    async waitJob(id, states = ENDED_STATES, timeoutMs = 30_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const job = await app.services.store.get(id);
        if (job && states.includes(job.status)) return job;
        if (Date.now() > until) throw new Error(`job ${id} not in ${states.join("/")} after ${timeoutMs} ms: ${JSON.stringify(job)}`);
        await Bun.sleep(25);
      }
    },
    async stop(stopOpts = {}) {
      if (runner?.isRunning()) await Promise.race([runner.stop(), Bun.sleep(2000)]);
      await app.close(2000);
      if (stopOpts.keep) return;
      await em.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
