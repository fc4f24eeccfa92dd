/**
 * Prometheus metrics (prom-client) for `/metrics` (issue 10 item 2). Every family is documented in
 * docs/operations.md ("Metrics"); test/ops/metrics-docs.test.ts checks that the list there and the
 * registry agree, and that the shipped Grafana dashboard names only these families.
 *
 * Gauges are read at scrape time from their source (the store, the intake clock, the chat holds,
 * the outbox, the backup status file, the readiness checks), so they are true after a restart;
 * counters and histograms count from the start of the process.
 */
import { statfs } from "node:fs/promises";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { BackupStatus } from "../backup/status.ts";
import type { JobStore } from "../jobs/store.ts";
import { JOB_STATES } from "../jobs/states.ts";
import type { IntakeActivity } from "./activity.ts";
import type { BuildInfo } from "./build-info.ts";
import type { Check } from "./check.ts";
import { registerProcessMetrics } from "./process-metrics.ts";

/** Where the scrape-time gauges read from. */
export interface MetricSources {
  readonly store: JobStore;
  /** DOWNLOAD_BUDGET, bytes. */
  readonly budgetTotal: number;
  /** DATA_DIR (free bytes of its filesystem). */
  readonly dataDir: string;
  readonly build: BuildInfo;
  readonly mode: "cloud" | "local";
  /** `sqlite` now; `postgres` with the PostgreSQL store. */
  readonly storeKind: "sqlite" | "postgres";
  readonly activity: IntakeActivity;
  /** Chats held after a 429 right now. */
  readonly chatsOnHold: () => number;
  /** Outbox streams with a message still to send or edit. */
  readonly outboxQueue: () => number;
  /** The backup status file (CONTRACTS.md §1). */
  readonly backupStatus: () => BackupStatus;
  /** Journal lines at warning and above since the start, by level (bot/ops/recent-log.ts). */
  readonly logCounts: () => Readonly<Record<string, number>>;
}

/** What the operator runtime (bot/ops/runtime.ts) adds once it exists. */
export interface OpsSources {
  /** The readiness checks' last verdicts, by name (null: not run yet). */
  readonly readiness: () => ReadonlyArray<{ readonly name: string; readonly last: Check | null }>;
  /** The last getWebhookInfo seen (webhook mode), or null. */
  readonly webhook: () => { readonly pending: number; readonly lastErrorDate: number | null } | null;
}

/** Step of a job whose duration `docket_step_duration_seconds` records. */
export type Step = "download" | "processing" | "delivery";

/** docket's metrics and their registry. */
export interface Metrics {
  readonly registry: Registry;
  /** Seconds one processor run took (the isolated child), by detected type. */
  readonly processingSeconds: Histogram<"type">;
  /** Seconds of one try of a step, by step and outcome (`ok`, `failed`). */
  readonly stepSeconds: Histogram<"step" | "outcome">;
  /** Peak resident memory of the processor child's process tree during one job, bytes. */
  readonly childPeakRss: Histogram;
  /** Chat holds after a 429 (a new hold counted once). */
  readonly chatHolds: Counter;
  /** Every 429 answer from the Bot API, by method. */
  readonly telegram429: Counter<"method">;
  /** Jobs that ended, by final state and reason. */
  readonly jobsEnded: Counter<"status" | "reason">;
  /** Failed tries (retried or final), by step and reason code. */
  readonly tryFailures: Counter<"step" | "reason">;
  /** Janitor passes inside the bot, by result (`ok`, `failed`). */
  readonly janitorRuns: Counter<"result">;
  /** Epoch seconds of the janitor's last finished pass in the bot. */
  readonly janitorLastRun: Gauge;
  /** Operator alerts, by cause and what happened (`sent`, `suppressed`, `failed`). */
  readonly alerts: Counter<"cause" | "result">;
  /** Called by the operator runtime with what only it knows (readiness, event loop, webhook). */
  attachOps(sources: OpsSources): void;
}

const MB = 1024 * 1024;

/** Create the registry and every family; the sources feed the gauges on each scrape. */
export function createMetrics(src: MetricSources): Metrics {
  const registry = new Registry();
  registerProcessMetrics(registry);
  let ops: OpsSources | null = null;
  const seconds = (ms: number | null) => (ms === null ? null : ms / 1000);

  new Gauge({ name: "docket_build_info", help: "The running release: version, commit, Bot API mode, job store (value 1)", labelNames: ["version", "commit", "mode", "store"], registers: [registry] }).set(
    { version: src.build.version, commit: src.build.commit, mode: src.mode, store: src.storeKind },
    1,
  );
  new Gauge({
    name: "docket_last_update_timestamp_seconds",
    help: "When the last update from Telegram reached the bot, epoch seconds (0 before the first)",
    registers: [registry],
    collect() {
      this.reset();
      const t = seconds(src.activity.lastUpdateAt);
      if (t !== null) this.set(t);
    },
  });
  new Gauge({
    name: "docket_intake_last_success_timestamp_seconds",
    help: "When getUpdates last answered ok (intake=polling) or a webhook POST was last answered 2xx (intake=webhook), epoch seconds",
    labelNames: ["intake"],
    registers: [registry],
    collect() {
      this.reset();
      const poll = seconds(src.activity.lastPollOkAt);
      const hook = seconds(src.activity.lastWebhookOkAt);
      if (poll !== null) this.set({ intake: "polling" }, poll);
      if (hook !== null) this.set({ intake: "webhook" }, hook);
    },
  });

  // Set by docket_jobs's collect (registered after it, so it is serialized after the update): one count query per scrape.
  const queueDepth = new Gauge({ name: "docket_queue_depth", help: "Jobs waiting for a worker (accepted + fetched)", registers: [] });
  new Gauge({
    name: "docket_jobs",
    help: "Jobs by state (from the database)",
    labelNames: ["state"],
    registers: [registry],
    async collect() {
      this.reset();
      const counts = await src.store.countByState();
      for (const s of JOB_STATES) this.set({ state: s }, counts[s] ?? 0);
      queueDepth.set((counts.accepted ?? 0) + (counts.fetched ?? 0));
    },
  });
  registry.registerMetric(queueDepth);
  new Gauge({
    name: "docket_jobs_failed",
    help: "Jobs in state failed, by reason code (from the database)",
    labelNames: ["reason"],
    registers: [registry],
    async collect() {
      this.reset();
      for (const [reason, n] of Object.entries(await src.store.countFailedByReason())) this.set({ reason }, n);
    },
  });
  const jobsEnded = new Counter({ name: "docket_jobs_ended_total", help: "Jobs that ended since the start, by state and reason", labelNames: ["status", "reason"], registers: [registry] });
  const tryFailures = new Counter({ name: "docket_try_failures_total", help: "Failed tries since the start (retried or final), by step and reason code", labelNames: ["step", "reason"], registers: [registry] });

  const stepSeconds = new Histogram({
    name: "docket_step_duration_seconds",
    help: "Duration of one try of a job's step (download, processing, delivery), by outcome",
    labelNames: ["step", "outcome"],
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 3600],
    registers: [registry],
  });
  const processingSeconds = new Histogram({
    name: "docket_processing_seconds",
    help: "Processing time of one successful try, by detected type, seconds",
    labelNames: ["type"],
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [registry],
  });
  const childPeakRss = new Histogram({
    name: "docket_processing_child_peak_rss_bytes",
    help: "Peak resident memory of the processor child (and what it started) during one job, bytes, sampled every 50 ms",
    buckets: [32, 64, 128, 256, 512, 768, 1024, 1536, 2048, 4096].map((m) => m * MB),
    registers: [registry],
  });

  new Gauge({
    name: "docket_budget_in_use_bytes",
    help: "Bytes reserved from the download budget",
    registers: [registry],
    async collect() {
      this.set(await src.store.budgetInUse());
    },
  });
  new Gauge({ name: "docket_budget_total_bytes", help: "The download byte budget (DOWNLOAD_BUDGET)", registers: [registry] }).set(src.budgetTotal);
  new Gauge({
    name: "docket_disk_free_bytes",
    help: "Free bytes on the filesystem of DATA_DIR (for unprivileged users)",
    registers: [registry],
    async collect() {
      const s = await statfs(src.dataDir);
      this.set(s.bavail * s.bsize);
    },
  });

  new Gauge({
    name: "docket_outbox_queue_depth",
    help: "Outbox streams (job status messages, replies) with a message still to send or edit",
    registers: [registry],
    collect() {
      this.set(src.outboxQueue());
    },
  });
  new Gauge({
    name: "docket_chats_on_hold",
    help: "Chats held right now after a 429 from Telegram",
    registers: [registry],
    collect() {
      this.set(src.chatsOnHold());
    },
  });
  const chatHolds = new Counter({ name: "docket_chat_holds_total", help: "Chats put on hold after a 429 from Telegram", registers: [registry] });
  const telegram429 = new Counter({ name: "docket_telegram_429_total", help: "429 Too Many Requests answers from the Bot API, by method", labelNames: ["method"], registers: [registry] });

  const backup = () => {
    try {
      return src.backupStatus();
    } catch {
      return {};
    }
  };
  new Gauge({
    name: "docket_backup_last_success_timestamp_seconds",
    help: "End of the last backup run when it succeeded, epoch seconds (0: the last run failed, or none ran)",
    registers: [registry],
    collect() {
      this.reset();
      const b = backup().backup;
      if (b?.ok) this.set(b.at);
    },
  });
  new Gauge({
    name: "docket_backup_last_size_bytes",
    help: "Size of what the last backup wrote when it succeeded, bytes (0 otherwise)",
    registers: [registry],
    collect() {
      this.reset();
      const b = backup().backup;
      if (b?.ok) this.set(b.bytes);
    },
  });
  new Gauge({
    name: "docket_backup_last_run_timestamp_seconds",
    help: "End of the last backup run (kind=backup) or restore drill (kind=verify), ok or not, epoch seconds; absent before the first",
    labelNames: ["kind"],
    registers: [registry],
    collect() {
      this.reset();
      const { backup: b, verify: v } = backup();
      if (b) this.set({ kind: "backup" }, b.at);
      if (v) this.set({ kind: "verify" }, v.at);
    },
  });
  new Gauge({
    name: "docket_backup_last_run_ok",
    help: "1 when the last backup run (kind=backup, where=local|restic) or restore drill (kind=verify) succeeded, 0 when it failed; absent before the first",
    labelNames: ["kind", "where"],
    registers: [registry],
    collect() {
      this.reset();
      const { backup: b, verify: v } = backup();
      if (b) this.set({ kind: "backup", where: b.where }, b.ok ? 1 : 0);
      if (v) this.set({ kind: "verify" }, v.ok ? 1 : 0);
    },
  });

  const janitorLastRun = new Gauge({ name: "docket_janitor_last_run_timestamp_seconds", help: "When the bot's janitor last finished a pass (epoch seconds)", registers: [registry] });
  const janitorRuns = new Counter({ name: "docket_janitor_runs_total", help: "Janitor passes inside the bot, by result", labelNames: ["result"], registers: [registry] });

  new Gauge({
    name: "docket_ready_check",
    help: "Last verdict of each readiness check of /readyz (1 ok, 0 failing)",
    labelNames: ["check"],
    registers: [registry],
    collect() {
      this.reset();
      for (const c of ops?.readiness() ?? []) if (c.last) this.set({ check: c.name }, c.last.ok ? 1 : 0);
    },
  });
  new Gauge({
    name: "docket_webhook_pending_updates",
    help: "pending_update_count of the last getWebhookInfo (webhook mode; 0 in polling mode)",
    registers: [registry],
    collect() {
      this.reset();
      const w = ops?.webhook();
      if (w) this.set(w.pending);
    },
  });
  new Gauge({
    name: "docket_webhook_last_error_timestamp_seconds",
    help: "last_error_date of the last getWebhookInfo, epoch seconds (webhook mode; 0 when Telegram reports no error)",
    registers: [registry],
    collect() {
      this.reset();
      const w = ops?.webhook();
      if (w?.lastErrorDate) this.set(w.lastErrorDate);
    },
  });
  const alerts = new Counter({ name: "docket_alerts_total", help: "Operator alerts since the start, by cause and result (sent, suppressed, failed)", labelNames: ["cause", "result"], registers: [registry] });
  new Counter({
    name: "docket_log_lines_total",
    help: "Journal lines at warning or above since the start, by level",
    labelNames: ["level"],
    registers: [registry],
    collect() {
      this.reset();
      for (const [level, n] of Object.entries(src.logCounts())) this.inc({ level }, n);
    },
  });

  return {
    registry,
    processingSeconds,
    stepSeconds,
    childPeakRss,
    chatHolds,
    telegram429,
    jobsEnded,
    tryFailures,
    janitorRuns,
    janitorLastRun,
    alerts,
    attachOps(s) {
      ops = s;
    },
  };
}

/**
 * Time one try of a step: `docket_step_duration_seconds{step, outcome}` with outcome `ok` when `fn`
 * resolves, `failed` when it throws (rethrown).
 * @param now clock, epoch ms
 */
export async function timed<T>(metrics: Pick<Metrics, "stepSeconds">, step: Step, now: () => number, fn: () => Promise<T>): Promise<T> {
  const started = now();
  try {
    const value = await fn();
    metrics.stepSeconds.observe({ step, outcome: "ok" }, (now() - started) / 1000);
    return value;
  } catch (err) {
    metrics.stepSeconds.observe({ step, outcome: "failed" }, (now() - started) / 1000);
    throw err;
  }
}
