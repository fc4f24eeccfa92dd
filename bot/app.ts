/**
 * Wiring: config → database → store → Bot API client → intake Composer → engine
 * → janitor. `createApp()` builds everything without starting it; `bot/main.ts`
 * starts long polling and handles signals.
 */
import { autoRetry } from "@grammyjs/auto-retry";
import { sequentialize } from "@grammyjs/runner";
import { Api, Bot } from "grammy";
import type { Config } from "./config.ts";
import type { OpenDb } from "./db/open.ts";
import { openStore, type OpenedStore } from "./open-store.ts";
import { LOCKS } from "./db/pg-locks.ts";
import { Delivery } from "./deliver/delivery.ts";
import { OUTBOX_CLOSE_MS } from "./shutdown.ts";
import { cloudFetcher } from "./fetch/cloud.ts";
import { CLOUD_GETFILE_LIMIT } from "./fetch/errors.ts";
import { localFetcher } from "./fetch/local.ts";
import type { Fetcher } from "./fetch/types.ts";
import { i18n, localeFor, type DocketContext } from "./i18n/index.ts";
import { ChatAdmins } from "./intake/chat-admins.ts";
import { accessControl } from "./intake/access.ts";
import { commands } from "./intake/commands.ts";
import { fileIntake } from "./intake/files.ts";
import { actions } from "./intake/actions.ts";
import { settings } from "./intake/settings.ts";
import { ReplyNotDelivered, ReplySender } from "./intake/replies.ts";
import { Janitor, janitorOptions } from "./janitor/janitor.ts";
import type { Logger } from "./log.ts";
import type { Services } from "./services.ts";
import { createMetrics } from "./ops/metrics.ts";
import { IntakeActivity } from "./ops/activity.ts";
import { buildInfo } from "./ops/build-info.ts";
import { RecentLog } from "./ops/recent-log.ts";
import { count429s } from "./ops/count-429.ts";
import { readBackupStatus } from "./backup/status.ts";
import { OutboxStatusReporter } from "./status/outbox-reporter.ts";
import { statusMessageOf } from "./status/status-message.ts";
import { QueuePositions } from "./status/positions.ts";
import { FinalSender } from "./status/finals.ts";
import { newStartId, ownerId } from "./jobs/owner.ts";
import { chatHoldsTransformer, makeOptions, Outbox } from "./outbox/index.ts";
import { epochClock, PgLedger } from "./outbox/pg-ledger.ts";
import type { StatusReporter } from "./status/reporter.ts";
import { Engine } from "./worker/engine.ts";
import { OcrState } from "./worker/ocr-state.ts";
import { dataPaths, type DataPaths } from "./worker/paths.ts";
import type { ProcessRunner } from "./worker/types.ts";
import { createProcessorPool } from "./worker/processor-pool.ts";
import type { ProcessorPool } from "../processors/pool/index.ts";

/** Everything `createApp` built. */
export interface App {
  readonly bot: Bot<DocketContext>;
  readonly services: Services;
  readonly engine: Engine;
  readonly janitor: Janitor;
  /** The job store's database (SQLite file or PostgreSQL pool). */
  readonly database: OpenedStore;
  /** The SQLite database; null with PostgreSQL (`DATABASE_URL`). */
  readonly db: OpenDb | null;
  readonly paths: DataPaths;
  /** The outbox every chat message of a job goes through. */
  readonly outbox: Outbox;
  /** When intake last heard from Telegram (metrics, readiness). */
  readonly activity: IntakeActivity;
  /** The warm processor children (processors/pool/), the only processing path; null when a runner was injected. */
  readonly pool: ProcessorPool | null;
  /** This process's recent warn+ journal lines (`docket status`, metrics). */
  readonly recent: RecentLog;
  /**
   * One janitor pass inside the bot, counted (`docket_janitor_runs_total`,
   * `docket_janitor_last_run_timestamp_seconds`); a failure is logged, never thrown.
   */
  janitorPass(): Promise<void>;
  /** Intake's recorded replies: `resume()` at start sends what an earlier process left pending. */
  readonly replies: ReplySender;
  /**
   * Final status messages shown from their records: `start()` (run by `engine.start()`; call it yourself
   * where the engine does not run, DOCKET_ROLE=intake) shows what an earlier process left.
   */
  readonly finals: FinalSender;
  /**
   * Waiting jobs' queue positions (bot/status/positions.ts): `start()` where this process receives
   * updates (bot/main.ts, with intake), so one process across all hosts shows them.
   */
  readonly positions: QueuePositions;
  /**
   * Send one plain-text message to a chat through the outbox (operator alerts).
   * @throws StreamFailedError when Telegram refused it (chat not found, bot blocked, …)
   */
  sendOperatorMessage(chatId: number, text: string): Promise<void>;
  /** Whether text recognition can run (its start-up self-check; issue 13). */
  readonly ocr: OcrState;
  /** Stop the engine, flush status messages, stop the processor pool, close the database. */
  close(deadlineMs?: number): Promise<void>;
}

/** Options of {@link createApp} (tests inject a clock or a runner). */
export interface AppOptions {
  readonly config: Config;
  readonly log: Logger;
  /** Replaces the processor pool (tests); then `App.pool` is null. */
  readonly runner?: ProcessRunner;
  /** OCR availability (default: checked by the self-check in a processor child). */
  readonly ocr?: OcrState;
  readonly now?: () => number;
  /** The logger's recent warn+ lines (the logger's `onLine` feeds it); default: an empty one. */
  readonly recentLog?: RecentLog;
  /** Build the status reporter (default: {@link OutboxStatusReporter}, edits through the outbox). */
  readonly statusReporter?: (api: Api, services: Pick<Services, "store" | "log">) => StatusReporter;
  /** Build the result sender from the default's arguments (benchmarks compare a naive one). */
  readonly delivery?: (args: ConstructorParameters<typeof Delivery>) => Delivery;
}


/**
 * One journal line when DOWNLOAD_LIMIT_CLOUD is above the cloud Bot API's own getFile limit (20 MiB,
 * botapi-facts.md §1): files between the two are accepted at intake and then refused by getFile. Chat
 * texts name the configured limit (issue 11 item 5), so the operator's figure is the one users see.
 */
function warnAboveCloudLimit(config: Config, log: Logger): void {
  if (config.mode !== "cloud" || config.limits.downloadCloud <= CLOUD_GETFILE_LIMIT) return;
  log.warn(
    { download_limit_cloud: config.limits.downloadCloud, cloud_getfile_limit: CLOUD_GETFILE_LIMIT },
    `DOWNLOAD_LIMIT_CLOUD (${config.limits.downloadCloud} B) is above the cloud Bot API's getFile limit (${CLOUD_GETFILE_LIMIT} B): larger files are accepted, then fail too_big at getFile; set DOWNLOAD_LIMIT_CLOUD=20MB or use local mode (docs/local-mode.md)`,
  );
}

/** Build the application (nothing started; the database is open and migrated). */
export async function createApp(opts: AppOptions): Promise<App> {
  const { config, log } = opts;
  const now = opts.now ?? Date.now;
  const paths = dataPaths(config.dataDir);
  const database = await openStore(config, paths.dbFile, "docket", (err) => log.warn({ err: (err as Error).message }, "a wake-up NOTIFY failed; the other processes find the work within seconds"));
  const { store } = database;
  warnAboveCloudLimit(config, log);

  const bot = new Bot<DocketContext>(config.token, { client: { apiRoot: config.apiRoot, timeoutSeconds: 600 } });
  const activity = new IntakeActivity(now);
  const recent = opts.recentLog ?? new RecentLog(now);
  bot.api.config.use(activity.transformer()); // innermost: a getUpdates Telegram answered ok
  const metrics = createMetrics({
    store,
    budgetTotal: config.downloadBudget,
    dataDir: config.dataDir,
    build: buildInfo(),
    mode: config.mode,
    storeKind: database.kind,
    activity,
    chatsOnHold: () => outbox.heldChats,
    outboxQueue: () => outbox.queueDepth,
    backupStatus: () => readBackupStatus(config.dataDir),
    logCounts: () => recent.counts,
  });
  bot.api.config.use(count429s(metrics.telegram429)); // inner: every raw 429, also those auto-retry retries

  // Every chat-bound call goes through the outbox (contract 7): messages, edits, uploads, albums,
  // keyboard edits and deletes of a chat share one pace and one 429 hold, and the bot shares one
  // bot-wide cap. A new hold is counted once.
  const outboxOptions = makeOptions({ shutdownTimeoutMs: OUTBOX_CLOSE_MS, callTimeoutMs: config.chatCallTimeoutMs });
  // Several processes of one bot (PostgreSQL): one per-chat pace, one 429 hold per chat and one bot-wide
  // cap across all of them (issue 14 item 5), on epoch-ms time every host shares.
  const shared = database.pg
    ? {
        ledger: new PgLedger(database.pg.sql, outboxOptions.timingsCapacity, outboxOptions.globalPerSecond, (err) =>
          log.warn({ err: (err as Error).message }, "the outbox's shared rate state in PostgreSQL did not answer; pacing on this process's own record until it does"),
        ),
        clock: epochClock,
      }
    : {};
  const outbox = new Outbox({
    logger: log,
    options: { shutdownTimeoutMs: OUTBOX_CLOSE_MS, callTimeoutMs: config.chatCallTimeoutMs },
    ...shared,
    events: (e) => {
      if (e.type === "ChatHold") {
        if (e.fresh) metrics.chatHolds.inc();
        log.warn({ chat_id: e.chatId, retry_after_ms: e.retryAfterMs }, "chat hold after 429");
      } else log.warn({ chat_id: e.chatId, event: e.type, reason: e.reason }, "outbox delivery problem");
    },
  });
  // The outbox's own client: exactly one HTTP call per action (seed 002), so it sees every 429
  // itself (ChatHold) and collapses stale edits; auto-retry would hide both.
  const outboxApi = new Api(config.token, { apiRoot: config.apiRoot });
  outboxApi.config.use(count429s(metrics.telegram429));
  // Plain API calls (getFile, answerCallbackQuery, …) are retried on 429 / 5xx / network errors by a
  // well-kept plugin. A 429 one of them meets for a chat holds that chat in the outbox too.
  bot.api.config.use(chatHoldsTransformer(outbox, bot.api)); // inner: sees every raw 429, also those auto-retry retries
  bot.api.config.use(autoRetry({ maxRetryAttempts: 3, maxDelaySeconds: 60 }));
  const api = bot.api;

  const status = opts.statusReporter?.(api, { store, log }) ?? new OutboxStatusReporter(outbox, outboxApi, log, (job) => statusMessageOf(store, job, now));
  const deliveryArgs: ConstructorParameters<typeof Delivery> = [outbox, outboxApi, store, log, (job) => status.shown(job)];
  const delivery = opts.delivery?.(deliveryArgs) ?? new Delivery(...deliveryArgs);
  const fetcher: Fetcher = config.mode === "local" ? localFetcher(api, config.localBotApiDir, log) : cloudFetcher(api, config.apiRoot, config.token);
  const pool = opts.runner ? null : createProcessorPool(config, log);
  const runner: ProcessRunner = opts.runner ?? ((input, options, limits) => pool!.process(input, options, limits));

  let engine!: Engine;
  const pending = new Set<Promise<unknown>>();
  const background = (task: () => Promise<unknown>, what: string): void => {
    const p = task()
      .catch((err) => log.warn({ err, task: what }, "background task failed"))
      .finally(() => pending.delete(p));
    pending.add(p);
  };
  const reply = (chatId: number, text: string, o: { replyTo?: number; replyMarkup?: unknown } = {}): Promise<void> => {
    const delivered = outbox
      .send(outboxApi, chatId, { text, ...(o.replyMarkup ? { reply_markup: o.replyMarkup as never } : {}) }, o.replyTo !== undefined ? { replyTo: o.replyTo } : {})
      .then(() => undefined);
    background(() => delivered, "chat reply");
    return delivered.catch(() => undefined);
  };
  // Intake's replies go out from their record in chat_replies (issue 11 item 3), through the outbox.
  const replies = new ReplySender({
    store,
    log,
    now,
    token: config.token,
    status,
    background,
    send: async (chatId, text, replyTo) => {
      const [id] = await outbox.send(outboxApi, chatId, text, replyTo !== null ? { replyTo } : {});
      if (id === undefined) throw new ReplyNotDelivered("the outbox finished the reply without a message in the chat", true);
      return id;
    },
    redeliver: async (job) => void (await delivery.redeliver(job, localeFor(job.languageCode))),
  });
  // Final status messages ("Done", "failed"), shown from the record each final commit writes (issue 14
  // item 6): held by this process start's owner id, the engine's lease owner.
  const finals = new FinalSender({ store, log, now, owner: ownerId(config.hostId, newStartId()), hostId: config.hostId, status, background, holdMs: config.leaseTtlMs });
  const services: Services = {
    config,
    store,
    log,
    api,
    status,
    finals,
    delivery,
    metrics,
    now,
    replies,
    reply,
    post: (chatId, request, o) => outbox.post(outboxApi, chatId, request, o),
    background,
    wake: () => engine.announce(),
    cancel: (id) => engine.cancel(id),
  };
  // OCR's start-up self-check runs in main.ts on a pool child; until it fails, recognition is assumed available.
  // With an injected runner (tests) there is no pool: the check then runs in this process.
  const ocr =
    opts.ocr ??
    new OcrState(config, async (languages) => (pool ? pool.ocrSelfCheck(languages) : (await import("../processors/ocr/self-check.ts")).ocrSelfCheck(languages)), log, now);
  engine = new Engine({ services, paths, fetcher, runner, ocr, wakeups: database.wakeups, finals });
  const janitor = new Janitor(store, paths, log, janitorOptions(config), now, (fn) => database.once(LOCKS.expiry, fn));
  const positions = new QueuePositions(services, config.queuePositionsIntervalMs);

  bot.use(activity.middleware());
  // One update at a time per chat, so a chat's messages are handled in order.
  bot.use(sequentialize((ctx) => ctx.chat?.id.toString()));
  bot.use(i18n);
  bot.use(accessControl(services));
  bot.use(fileIntake(services));
  const admins = new ChatAdmins(bot.api, log, now);
  bot.use(settings(services, admins));
  bot.use(actions(services, admins));
  bot.use(commands(services, (job) => janitor.erase(job), admins));
  bot.catch((err) => log.error({ err: err.error, update_id: err.ctx.update.update_id }, "handler error"));

  return {
    bot,
    services,
    engine,
    janitor,
    database,
    db: database.sqlite,
    paths,
    outbox,
    activity,
    pool,
    recent,
    async sendOperatorMessage(chatId, text) {
      await outbox.send(outboxApi, chatId, { text });
    },
    async janitorPass() {
      try {
        await janitor.runOnce();
        metrics.janitorRuns.inc({ result: "ok" });
      } catch (err) {
        metrics.janitorRuns.inc({ result: "failed" });
        log.error({ err }, "janitor failed");
      }
      metrics.janitorLastRun.set(now() / 1000);
    },
    replies,
    finals,
    positions,
    ocr,
    async close(deadlineMs = 20_000) {
      positions.stop();
      await engine.stop(deadlineMs);
      replies.close(); // what is not delivered now stays pending for the next start
      finals.close(); // final status messages not shown by the deadline below stay for the next start
      await pool?.close();
      await Promise.race([Promise.allSettled([...pending]), Bun.sleep(deadlineMs)]);
      await status.close();
      await database.close();
    },
  };
}
