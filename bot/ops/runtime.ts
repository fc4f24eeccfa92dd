/**
 * The operator side of a running bot, wired once: the phase (starting → running → stopping), the
 * outage state of start-up and of long polling, the event-loop sampler, the named liveness and
 * readiness checks, the readiness monitor and the operator HTTP server. `bot/main.ts` drives the
 * phases; tests build one around an in-process app the same way.
 */
import type { Api } from "grammy";
import type { App } from "../app.ts";
import type { Config } from "../config.ts";
import type { Logger } from "../log.ts";
import type { BotReport } from "./report.ts";
import { AlertWatch } from "./alert-watch.ts";
import { Alerts } from "./alerts.ts";
import { buildInfo } from "./build-info.ts";
import { CachedCheck, runChecks, type CheckSpec } from "./check.ts";
import { botApiDirCheck } from "./bot-api-dir-check.ts";
import { EventLoopLag } from "./event-loop.ts";
import { startOpsServer, type OpsServer, type Phase } from "./http.ts";
import { eventLoopCheck, outboxCheck, poolsCheck } from "./liveness.ts";
import { ReadinessMonitor, type FailLevel } from "./monitor.ts";
import { OutageTracker } from "./outage.ts";
import { backupCheck, botApiCheck, databaseCheck, diskCheck, pollingCheck, webhookCheck } from "./readiness.ts";
import { WebhookJudge } from "./webhook-state.ts";

/** Options of {@link Ops}. */
export interface OpsOptions {
  readonly config: Config;
  readonly app: App;
  readonly log: Logger;
  /** The plain operator Api (bot/ops/operator-api.ts) for getMe and getWebhookInfo. */
  readonly api: Api;
  /** Clock, epoch ms. */
  readonly now?: () => number;
  /** How often the monitor asks the readiness checks, ms (default 15 000). */
  readonly monitorIntervalMs?: number;
  /** Cache lifetimes by check name, ms, instead of each check's own (tests watch transitions faster). */
  readonly ttlMs?: Readonly<Record<string, number>>;
}

/** Journal level of each failing readiness check (issue 9 item 3: a webhook in error is an error line). */
const LEVELS: Readonly<Record<string, FailLevel>> = { database: "error", disk: "error", botApiDir: "error", webhook: "error", backup: "warn", botApi: "warn", polling: "warn" };

/** The operator side of one bot process. */
export class Ops {
  /** Where the bot is; the HTTP answers and the checks read it. */
  phase: Phase = "starting";
  /** Start-up's attempts to reach the Bot API (getMe, setWebhook). */
  readonly startup = new OutageTracker();
  /** Long polling's attempts after start-up (bot/intake/poll-outages.ts). */
  readonly polling = new OutageTracker();
  readonly eventLoop: EventLoopLag;
  readonly liveness: readonly CachedCheck[];
  readonly readiness: readonly CachedCheck[];
  readonly monitor: ReadinessMonitor;
  /** Operator alerts: raised by {@link AlertWatch} and `docket notify`, sent while running. */
  readonly alerts: Alerts;
  private server: OpsServer | null = null;
  private readonly build = buildInfo();
  private pollingSince = 0;
  private signalStopping!: () => void;
  /** Resolves when shutdown begins. */
  readonly stopping = new Promise<void>((resolve) => (this.signalStopping = resolve));

  constructor(private readonly opts: OpsOptions) {
    const { config, app, api } = opts;
    const now = opts.now ?? Date.now;
    const metrics = app.services.metrics;
    this.eventLoop = new EventLoopLag();
    this.eventLoop.start();
    const cached = (spec: CheckSpec) => new CachedCheck(opts.ttlMs?.[spec.name] === undefined ? spec : { ...spec, ttlMs: opts.ttlMs[spec.name]! }, now, config.token);
    this.liveness = [
      cached(eventLoopCheck(this.eventLoop)),
      // Role intake runs no pools (issue 14 item 3).
      ...(config.role === "intake" ? [] : [cached(poolsCheck(() => app.engine.liveness(), { download: config.downloadConcurrency, process: config.processConcurrency }))]),
      cached(outboxCheck(() => app.outbox.isOpen)),
    ];
    // With SQLite this is the only process: it receives updates; with PostgreSQL, once elected (setLeading).
    this.leading = app.database.kind === "sqlite";
    const judge = config.webhook ? new WebhookJudge(config.webhook.url) : null;
    const receiving = judge
      ? webhookCheck(api, judge, app.activity, now)
      : pollingCheck(app.activity, this.polling, () => this.pollingSince, undefined, now);
    // Issue 14 item 3: a process that is not the elected receiver has nothing to poll; a worker never does.
    const intake: CheckSpec | null =
      config.role === "worker"
        ? null
        : { ...receiving, run: (signal) => (this.leading ? receiving.run(signal) : { ok: true, detail: "standby: another process holds the intake lock and receives updates" }) };
    this.readiness = [
      cached(databaseCheck(() => app.database.ping())),
      cached(botApiCheck(api, { waiting: () => this.phase === "starting", tracker: this.startup })),
      cached(diskCheck(config.dataDir, config.downloadBudget, () => app.services.store.budgetInUse(), config.mode === "local" ? config.localBotApiDir : undefined)),
      ...(config.mode === "local" ? [cached(botApiDirCheck(config.localBotApiDir))] : []),
      ...(intake ? [cached(intake)] : []),
      // docket's backups are of the SQLite file; a PostgreSQL database is backed up by its own tools (docs/scaling.md).
      ...(config.backupMaxAgeMs > 0 && app.database.kind === "sqlite" ? [cached(backupCheck(config.dataDir, app.paths.dbFile, config.backupMaxAgeMs, now))] : []),
    ];
    metrics.attachOps({
      readiness: () => this.readiness.map((c) => ({ name: c.name, last: c.peek()?.check ?? null })),
      webhook: () => judge?.last ?? null,
    });
    this.alerts = new Alerts({
      store: app.services.store,
      log: opts.log,
      metrics,
      admins: config.adminUserIds,
      host: config.hostId,
      send: (chatId, text) => app.sendOperatorMessage(chatId, text),
      now,
    });
    const watch = new AlertWatch(this.alerts, metrics, config.dataDir, now);
    this.monitor = new ReadinessMonitor(this.readiness, opts.log, {
      levels: LEVELS,
      onChange: (name, check) => watch.onReadinessChange(name, check),
      onRound: () => watch.round(),
      ...(opts.monitorIntervalMs ? { intervalMs: opts.monitorIntervalMs } : {}),
    });
  }

  /** The checks of `/healthz` (compatibility): database, botApi, disk. */
  private get legacy(): CachedCheck[] {
    return this.readiness.filter((c) => ["database", "botApi", "disk"].includes(c.name));
  }

  /**
   * Start the operator HTTP server on 127.0.0.1:`port` (0 = a free port).
   * @throws Error when the port is taken
   */
  listen(port: number): OpsServer {
    const { app, log } = this.opts;
    this.server = startOpsServer(port, {
      phase: () => this.phase,
      liveness: this.liveness,
      readiness: this.readiness,
      legacy: this.legacy,
      metrics: async () => ({ body: await app.services.metrics.registry.metrics(), contentType: app.services.metrics.registry.contentType }),
      status: () => this.status(),
      stopping: this.stopping,
      log,
    });
    return this.server;
  }

  /** The `/status` document `docket status` shows (bot/cli/status-screen.ts BotReport). */
  async status(): Promise<BotReport> {
    const { config, app } = this.opts;
    const now = (this.opts.now ?? Date.now)();
    const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
    const errors = app.recent.since(now - 3_600_000);
    return {
      phase: this.phase,
      pid: process.pid,
      startedAt: new Date(Date.now() - performance.now()).toISOString(),
      ...this.build,
      host: config.hostId,
      mode: config.mode,
      intake: config.webhook ? "webhook" : "polling",
      store: app.database.kind,
      readiness: await runChecks(this.readiness),
      liveness: await runChecks(this.liveness),
      lastUpdateAt: iso(app.activity.lastUpdateAt),
      lastIntakeOkAt: iso(app.activity.lastIntakeOkAt),
      chatsOnHold: app.outbox.heldChats,
      outboxQueue: app.outbox.queueDepth,
      errors: { count: errors.length, last: errors.slice(-5).map((e) => ({ at: new Date(e.at).toISOString(), level: e.level, msg: e.msg })) },
    };
  }

  /** Whether this process receives updates now (issue 14 item 3: the elected one; SQLite: always once started). */
  private leading: boolean;

  /** This process started or stopped receiving updates (bot/intake/leader.ts). */
  setLeading(on: boolean): void {
    this.leading = on;
    for (const c of this.readiness) if (c.name === "polling" || c.name === "webhook") c.invalidate();
  }

  /** Long polling (re)started: a missing getUpdates answer counts from now. */
  pollingStarted(): void {
    this.pollingSince = (this.opts.now ?? Date.now)();
  }

  /** Start-up is done (Bot API reached, intake and pools started): readiness may pass, the monitor starts. */
  markRunning(): void {
    this.phase = "running";
    this.pollingSince = Math.max(this.pollingSince, (this.opts.now ?? Date.now)());
    for (const c of this.readiness) c.invalidate();
    this.monitor.start();
    this.alerts.start(this.opts.monitorIntervalMs);
  }

  /** Shutdown begins: every operator endpoint answers 503 from now on. */
  markStopping(): void {
    this.phase = "stopping";
    this.signalStopping();
  }

  /** Stop the monitor, the sampler and the server (last step of shutdown). */
  async close(): Promise<void> {
    this.markStopping();
    await this.monitor.stop();
    await this.alerts.stop();
    this.eventLoop.stop();
    await this.server?.stop();
  }
}
