/**
 * `bun run start`: the bot from environment variables. Long polling through
 * @grammyjs/runner with per-chat `sequentialize`, the engine's two pools, the
 * janitor on a schedule. SIGTERM/SIGINT stop it gracefully within a deadline
 * (runner stop is bounded by our own timer: on Bun the pending poll may not abort).
 */
import { loadConfigForCli } from "./config.ts";
import { createApp } from "./app.ts";
import { createLogger } from "./log.ts";
import { pollConflicts } from "./intake/poll-conflicts.ts";
import { healthApi, startOpsServer } from "./ops/http.ts";
import { DRAIN_MS, INTAKE_STOP_MS } from "./shutdown.ts";
import { startWebhook } from "./intake/webhook.ts";
import { startPolling } from "./intake/polling.ts";
import { ALLOWED_UPDATES } from "./intake/allowed-updates.ts";
import { Api, GrammyError, HttpError } from "grammy";
import type { UserFromGetMe } from "grammy/types";
import type { Logger } from "./log.ts";
import { pdfSelfCheckInChild } from "../processors/isolate.ts";

async function main(): Promise<number> {
  const config = loadConfigForCli("docket");
  if (!config) return 2;
  const log = createLogger({ level: config.logLevel, token: config.token });
  const app = await createApp({ config, log });
  const { bot, engine, janitor } = app;
  bot.api.config.use(pollConflicts({ log, deleteWebhook: config.deleteWebhookOnStart }));

  // Reach the Bot API first, with a deadline: auto-retry would retry network errors forever and
  // the journal would stay empty. SIGTERM during start-up stops at once.
  log.info({ api_root: config.apiRoot, mode: config.mode }, "connecting to the Bot API");
  const startup = new AbortController();
  const early = () => startup.abort(new Error("signal during start-up"));
  process.once("SIGTERM", early);
  process.once("SIGINT", early);
  // A plain Api (no auto-retry, no transformers) for start-up and the health check: both bound their own waits.
  const plainApi = healthApi(config.token, config.apiRoot);
  const me = await reachBotApi(plainApi, startup.signal, log, config.startupTimeoutMs);
  process.off("SIGTERM", early);
  process.off("SIGINT", early);
  if (!me) {
    await app.close(1000);
    return startup.signal.aborted ? 0 : 1;
  }
  bot.botInfo = me;
  log.info({ bot: bot.botInfo.username, mode: config.mode, data_dir: config.dataDir, pid: process.pid }, "docket starting");
  // BR-11: find out now, not per job, whether pdf.js can load; PDFs then fail with pdf_engine_unavailable.
  const pdf = await pdfSelfCheckInChild();
  if (pdf.ok) {
    log.info({ version: pdf.version, ms: pdf.ms, page_worker: pdf.pageWorker }, "pdf engine self-check passed");
    // In-process, a busy page blocks the budget timer: only PROCESS_TIMEOUT stops it.
    if (pdf.pageWorker !== "thread") log.warn("pdf.js runs without its worker thread: PDF_PAGE_BUDGET cannot stop a busy page, only PROCESS_TIMEOUT can");
  }
  else log.error({ missing: pdf.missing }, "pdf engine self-check FAILED: PDFs will fail with pdf_engine_unavailable; run `bun install`");

  // Intake: a webhook behind nginx when WEBHOOK_URL is set, else long polling (never both).
  const webhook = config.webhook ? await startWebhook(bot, config.webhook, log) : null;
  const runner = webhook
    ? null
    : startPolling(bot, log, { runner: { fetch: { timeout: 30, allowed_updates: [...ALLOWED_UPDATES] }, silent: true, retryInterval: "exponential" } });
  await engine.start();
  const ops = config.httpPort > 0 ? startOpsServer(config.httpPort, { sqlite: app.db.sqlite, api: plainApi, dataDir: config.dataDir, budget: config.downloadBudget }, app.services.metrics, log) : null;
  const janitorTimer = setInterval(() => void janitor.runOnce().catch((err) => log.error({ err }, "janitor failed")), config.janitorIntervalMs);
  void janitor.runOnce().catch((err) => log.error({ err }, "janitor failed"));

  let stopping = false;
  const done = new Promise<number>((resolve) => {
    const stop = async (signal: string, code = 0) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, "stopping");
      clearInterval(janitorTimer);
      void ops?.stop(true);
      await Promise.race([runner?.isRunning() ? runner.stop() : undefined, webhook?.stop(), Bun.sleep(INTAKE_STOP_MS)]);
      await app.close(DRAIN_MS);
      log.info("stopped");
      resolve(code);
    };
    process.on("SIGTERM", () => void stop("SIGTERM"));
    process.on("SIGINT", () => void stop("SIGINT"));
    runner?.task()?.catch((err) => {
      log.fatal({ err }, "long polling stopped");
      void stop("polling-error", 1);
    });
  });
  return done;
}

/**
 * getMe with retries for up to `deadlineMs` (default 30 s): resolves with the bot's User, or null
 * after logging why (401: wrong token — no retry; network: unreachable root).
 */
async function reachBotApi(api: Api, signal: AbortSignal, log: Logger, deadlineMs = 30_000): Promise<UserFromGetMe | null> {
  const until = Date.now() + deadlineMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await api.getMe(AbortSignal.any([signal, AbortSignal.timeout(Math.max(1000, until - Date.now()))]) as never);
    } catch (err) {
      if (signal.aborted) return null;
      if (err instanceof GrammyError && (err.error_code === 401 || err.error_code === 404)) {
        log.fatal({ error_code: err.error_code, description: err.description }, "the Bot API refused getMe: check BOT_TOKEN (and BOT_API_ROOT)");
        return null;
      }
      if (Date.now() >= until) {
        log.fatal({ cause: networkCause(err), attempts: attempt }, `cannot reach the Bot API at BOT_API_ROOT within ${deadlineMs / 1000} s (${networkCause(err)}); is the server up (local mode: docker-compose ps)?`);
        return null;
      }
      log.warn({ cause: networkCause(err), attempt }, `getMe failed (${networkCause(err)}); retrying`);
      await Bun.sleep(Math.min(5000, 500 * 2 ** attempt));
    }
  }
}

/** The operator-readable cause of a failed request: the network error's code and message, no stack. */
function networkCause(err: unknown): string {
  const inner = (err instanceof HttpError ? err.error : err) as { code?: unknown; message?: unknown } | undefined;
  const code = typeof inner?.code === "string" ? inner.code : "";
  const message = typeof inner?.message === "string" ? inner.message : "";
  if (!message) return code || String(err);
  return code && !message.startsWith(code) ? `${code}: ${message}` : message;
}

process.exitCode = await main();
process.exit(process.exitCode);
