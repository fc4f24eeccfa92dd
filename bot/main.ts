/**
 * `bun run start`: the bot from environment variables. Long polling through
 * @grammyjs/runner with per-chat `sequentialize` (or a webhook when WEBHOOK_URL is set),
 * the engine's two pools, the janitor on a schedule. SIGTERM/SIGINT stop it gracefully
 * within a deadline (runner stop is bounded by our own timer: on Bun the pending poll may
 * not abort).
 *
 * Start-up order (issue 9 item 2): database, then the operator HTTP server (so `/livez`
 * answers), then the Bot API — waited for with capped backoff for as long as it takes, one
 * journal line per kind of failure. A refused token (401) exits 78, which the unit never
 * restarts (CONTRACTS.md §3).
 */
import { loadConfigForCli, type Config } from "./config.ts";
import { createApp } from "./app.ts";
import { createLogger } from "./log.ts";
import { pollConflicts } from "./intake/poll-conflicts.ts";
import { pollOutages } from "./intake/poll-outages.ts";
import { DRAIN_MS, INTAKE_STOP_MS } from "./shutdown.ts";
import { startWebhook } from "./intake/webhook.ts";
import { startPolling } from "./intake/polling.ts";
import { IntakeLeader, type RunningIntake } from "./intake/leader.ts";
import { ALLOWED_UPDATES } from "./intake/allowed-updates.ts";
import { GrammyError } from "grammy";
import type { Logger } from "./log.ts";
import type { ProcessorPool } from "../processors/pool/index.ts";
import { EXIT_BAD_CONFIG, EXIT_FAILURE, EXIT_OK, EXIT_TOKEN_REFUSED } from "./ops/exit-codes.ts";
import { operatorApi } from "./ops/operator-api.ts";
import type { FatalFailure } from "./ops/outage.ts";
import { untilReached } from "./ops/reach.ts";
import { Ops } from "./ops/runtime.ts";
import { RecentLog } from "./ops/recent-log.ts";
import { SchemaTooNewError } from "./db/schema-version.ts";
import { describeUrl, passwordOf } from "./db/pg-open.ts";
import { untilAnswers, untilDatabase } from "./ops/pg-reach.ts";

/** Thrown out of start-up when the Bot API refused it for good (logged already). */
class StartupRefused extends Error {}

async function main(): Promise<number> {
  const config = loadConfigForCli("docket");
  if (!config) return EXIT_BAD_CONFIG;
  const recent = new RecentLog();
  const log = createLogger({ level: config.logLevel, token: config.token, onLine: (line) => recent.note(line) });
  if (process.env.STARTUP_TIMEOUT) log.warn("STARTUP_TIMEOUT is no longer read: start-up waits for the Bot API as long as it takes (backoff up to STARTUP_RETRY_MAX); remove it from the env file");
  let app: Awaited<ReturnType<typeof createApp>>;
  // A PostgreSQL server that does not answer yet is waited out (issue 14, faults); SIGTERM ends the wait.
  const waitDb = new AbortController();
  const stopWaiting = () => waitDb.abort();
  process.once("SIGTERM", stopWaiting);
  process.once("SIGINT", stopWaiting);
  try {
    const { url } = config.database;
    const made =
      url === null
        ? await createApp({ config, log, recentLog: recent })
        : await untilDatabase(() => createApp({ config, log, recentLog: recent }), { log, where: describeUrl(url), secret: passwordOf(url), capMs: config.startupRetryMaxMs, signal: waitDb.signal });
    if (!made) return EXIT_OK;
    app = made;
  } catch (err) {
    if (!(err instanceof SchemaTooNewError)) throw err;
    // A newer release migrated the database: this one must not run against it (issue 14, faults).
    log.fatal({ exit_status: EXIT_BAD_CONFIG }, err.message);
    return EXIT_BAD_CONFIG;
  } finally {
    process.off("SIGTERM", stopWaiting);
    process.off("SIGINT", stopWaiting);
  }
  const { bot, engine } = app;
  // The plain operator Api (no auto-retry, no transformers): start-up and the checks bound their own waits.
  const api = operatorApi(config.token, config.apiRoot);
  const ops = new Ops({ config, app, log, api });
  // The operator server comes before the Bot API handshake: /livez answers while start-up waits.
  if (config.httpPort > 0) ops.listen(config.httpPort);
  bot.api.config.use(pollConflicts({ log, deleteWebhook: config.deleteWebhookOnStart }));
  bot.api.config.use(pollOutages({ log, tracker: ops.polling, capMs: config.startupRetryMaxMs }));

  // SIGTERM during start-up stops at once (exit 0).
  const startup = new AbortController();
  const early = () => {
    ops.markStopping();
    startup.abort(new Error("signal during start-up"));
  };
  process.once("SIGTERM", early);
  process.once("SIGINT", early);
  const reach = { log, tracker: ops.startup, capMs: config.startupRetryMaxMs, signal: startup.signal };
  log.info({ api_root: config.apiRoot, mode: config.mode }, "connecting to the Bot API");
  try {
    const me = await untilReached((signal) => api.getMe(signal as never), { ...reach, method: "getMe" });
    if (!me.ok) throw "fatal" in me ? refused(log, config, "getMe", me.fatal) : new StartupRefused();
    bot.botInfo = me.value;
    log.info({ bot: bot.botInfo.username, mode: config.mode, data_dir: config.dataDir, pid: process.pid }, "docket starting");
    const works = config.role !== "intake";
    if (works) {
      await selfCheckPdf(app.pool!, log);
      // issue 13: Tesseract and OCR_LANGUAGES' data, checked now (one journal line either way), not per job.
      await app.ocr.check();
    }
  } catch (err) {
    process.off("SIGTERM", early);
    process.off("SIGINT", early);
    ops.markStopping();
    await app.close(1000);
    await ops.close();
    if (!(err instanceof StartupRefused)) throw err;
    return startup.signal.aborted ? EXIT_OK : EXIT_TOKEN_REFUSED;
  }

  // Intake (issue 14 item 3): one process across all hosts receives updates — with PostgreSQL the one
  // holding the intake lock, with SQLite this one. A webhook behind nginx when WEBHOOK_URL is set, else
  // long polling (never both). Replies an earlier process recorded but did not deliver (a crash, a
  // shutdown) go first, so a job's pending first status message is adopted before the engine updates it
  // (issue 11 item 3).
  const receives = config.role !== "worker";
  const startIntake = async (): Promise<RunningIntake> => {
    await app.replies.resume();
    const running = await receiveUpdates();
    // Queue positions belong to no job's lease: the process receiving updates shows them all (bot/status/positions.ts);
    // started once intake is up, so a start that fails leaves no timer behind.
    app.positions.start();
    return {
      stop: async () => {
        app.positions.stop();
        await running.stop();
      },
      failed: running.failed,
    };
  };
  const receiveUpdates = async (): Promise<RunningIntake> => {
    if (config.webhook) {
      const webhook = await startWebhook(bot, config.webhook, log, {
        api,
        onDelivered: () => app.activity.webhookOk(),
        register: async (setWebhook) => {
          // A refused URL or secret (400) stays refused: like a refused token, restarting cannot fix it.
          const set = await untilReached((signal) => setWebhook(signal), { ...reach, method: "setWebhook", fatalCodes: [400, 401, 404] });
          if (!set.ok) throw "fatal" in set ? refused(log, config, "setWebhook", set.fatal) : new StartupRefused();
        },
      });
      return { stop: () => webhook.stop(), failed: new Promise<never>(() => {}) };
    }
    // An update whose handler failed (the database stopped answering) is handled again once it answers
    // (tried every few seconds: intake waits on it, so its backoff stays short).
    const redo = { ready: (signal: AbortSignal) => untilAnswers(() => app.database.ping(), signal, 5000) };
    const runner = startPolling(bot, log, { runner: { fetch: { timeout: 30, allowed_updates: [...ALLOWED_UPDATES] }, silent: true, retryInterval: "exponential" } }, redo);
    ops.pollingStarted();
    return {
      stop: async () => {
        if (runner.isRunning()) await runner.stop();
      },
      failed: (async () => {
        await runner.task();
        throw new Error("long polling ended");
      })() as Promise<never>,
    };
  };
  const leader = receives ? new IntakeLeader({ lock: app.database.intakeLock(), log, start: startIntake, onLeading: (on) => ops.setLeading(on) }) : null;
  if (!receives) log.info({ role: config.role }, "role worker: this process never receives updates; it downloads and processes");
  const intakeDone = leader?.run();
  // SQLite: intake is up before the pools start, as before; a fatal start (a refused webhook) ends start-up.
  if (leader && !app.database.intakeLock()) {
    const first = await Promise.race([intakeDone!.then(() => "ended" as const, (err: unknown) => err), leader.firstLead.then(() => "up" as const)]);
    if (first !== "up") {
      process.off("SIGTERM", early);
      process.off("SIGINT", early);
      ops.markStopping();
      await leader.stop();
      await app.close(1000);
      await ops.close();
      if (!(first instanceof StartupRefused)) throw first;
      return startup.signal.aborted ? EXIT_OK : EXIT_TOKEN_REFUSED;
    }
  }
  process.off("SIGTERM", early);
  process.off("SIGINT", early);

  // The engine starts the final status messages after its reclaim; an intake-only process shows those it commits (/cancel) and any left.
  if (config.role !== "intake") await engine.start();
  else await app.finals.start();
  ops.markRunning();
  const janitorTimer = setInterval(() => void app.janitorPass(), config.janitorIntervalMs);
  void app.janitorPass();

  let stopping = false;
  return new Promise<number>((resolve) => {
    const stop = async (signal: string, code = EXIT_OK) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, "stopping");
      ops.markStopping(); // probes and scrapes answer 503 at once from here on
      clearInterval(janitorTimer);
      await Promise.race([leader?.stop(), Bun.sleep(INTAKE_STOP_MS)]);
      await app.close(DRAIN_MS);
      await ops.close();
      log.info("stopped");
      resolve(code);
    };
    process.on("SIGTERM", () => void stop("SIGTERM"));
    process.on("SIGINT", () => void stop("SIGINT"));
    intakeDone?.catch((err) => {
      if (err instanceof StartupRefused) return void stop("webhook-refused", EXIT_TOKEN_REFUSED);
      // A token revoked while running: the same line and exit status as at start-up.
      if (err instanceof GrammyError && err.error_code === 401) {
        refused(log, config, "getUpdates", { retry: false, errorCode: 401, description: err.description });
        return void stop("token-refused", EXIT_TOKEN_REFUSED);
      }
      log.fatal({ err }, "long polling stopped");
      void stop("polling-error", EXIT_FAILURE);
    });
  });
}

/**
 * BR-11: find out now, not per job, whether pdf.js can load; PDFs then fail with pdf_engine_unavailable.
 * It runs on a warm processor child (the bot process never loads pdf.js); then the rest of the pool warms up.
 */
async function selfCheckPdf(pool: ProcessorPool, log: Logger): Promise<void> {
  const pdf = await pool.selfCheck();
  pool.warm();
  if (pdf.ok) {
    log.info({ version: pdf.version, ms: pdf.ms, page_worker: pdf.pageWorker }, "pdf engine self-check passed");
    // In-process, a busy page blocks the budget timer: only PROCESS_TIMEOUT stops it.
    if (pdf.pageWorker !== "thread") log.warn("pdf.js runs without its worker thread: PDF_PAGE_BUDGET cannot stop a busy page, only PROCESS_TIMEOUT can");
  } else log.error({ missing: pdf.missing }, "pdf engine self-check FAILED: PDFs will fail with pdf_engine_unavailable; run `bun install`");
}

/**
 * Log the one fatal line of a refusal a restart cannot fix (CONTRACTS.md §3) and return the error
 * that ends start-up with exit 78: 401 = the token was refused, 404 = BOT_API_ROOT is no Bot API
 * server, setWebhook's 400 = WEBHOOK_URL or WEBHOOK_SECRET refused.
 */
function refused(log: Logger, config: Config, method: string, f: FatalFailure): StartupRefused {
  const fields = { method, error_code: f.errorCode, description: f.description, exit_status: EXIT_TOKEN_REFUSED };
  if (f.errorCode === 401) {
    log.fatal(fields, `the Bot API refused the token (401 ${f.description}): BOT_TOKEN is wrong or was revoked; put the current token from @BotFather into the env file (/etc/docket/docket.env) and restart (exit ${EXIT_TOKEN_REFUSED}: systemd does not restart on it)`);
  } else if (f.errorCode === 404) {
    log.fatal(fields, `BOT_API_ROOT ${config.apiRoot} answered 404 ${f.description} for ${method}: it is not a Bot API server's root (like https://api.telegram.org or http://127.0.0.1:8081, no path); fix BOT_API_ROOT and restart`);
  } else {
    log.fatal(fields, `Telegram refused ${method} (${f.errorCode} ${f.description}): check WEBHOOK_URL and WEBHOOK_SECRET, then restart`);
  }
  return new StartupRefused();
}

process.exitCode = await main();
process.exit(process.exitCode);
