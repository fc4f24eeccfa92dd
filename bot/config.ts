/**
 * Typed configuration from the environment (zod). A bad or missing value stops
 * start-up with a message naming the variable and the expected form.
 *
 * Limits are named per operation and per mode (seed 000: "три разных ключа, а не
 * один MAX_FILE_SIZE"); every variable is documented in `.env.example` and
 * `docs/configuration.md`.
 */
import { cpus, hostname } from "node:os";
import { resolve } from "node:path";
import * as z from "zod";

const MB = 1024 * 1024;

/** Integer byte count, written as bytes or with a unit: `20MB`, `2000 MB`, `1.5GB` (binary units). */
const bytes = z
  .string()
  .trim()
  .transform((raw, ctx) => {
    const m = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb|kib|mib|gib)?$/i.exec(raw);
    if (!m) {
      ctx.addIssue({ code: "custom", message: "expected a size like 20MB, 2000MB, 1.5GB or a byte count" });
      return z.NEVER;
    }
    const unit = (m[2] ?? "b").toLowerCase().replace("i", "");
    const mult = unit === "kb" ? 1024 : unit === "mb" ? MB : unit === "gb" ? 1024 * MB : 1;
    return Math.round(Number(m[1]) * mult);
  });

/** Duration written as `30s`, `15m`, `24h`, `7d` or milliseconds; parsed to ms. */
const duration = z
  .string()
  .trim()
  .transform((raw, ctx) => {
    const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/i.exec(raw);
    if (!m) {
      ctx.addIssue({ code: "custom", message: "expected a duration like 500ms, 30s, 15m, 24h or 7d" });
      return z.NEVER;
    }
    const unit = (m[2] ?? "ms").toLowerCase();
    const mult = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[unit as "ms"];
    return Math.round(Number(m[1]) * mult);
  });

/** Comma-separated Telegram user ids; empty = none. */
const idList = z
  .string()
  .trim()
  .transform((raw, ctx) => {
    if (raw === "") return [] as number[];
    const parts = raw.split(/[\s,]+/).filter(Boolean);
    const ids = parts.map(Number);
    if (ids.some((n) => !Number.isSafeInteger(n))) {
      ctx.addIssue({ code: "custom", message: "expected comma-separated numeric Telegram user ids, e.g. 12345,67890" });
      return z.NEVER;
    }
    return ids;
  });

const positiveInt = z
  .string()
  .trim()
  .regex(/^\d+$/, "expected a whole number")
  .transform(Number)
  .pipe(z.number().int().positive());

const bool = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.enum(["true", "false", "1", "0", "yes", "no"]))
  .transform((v) => v === "true" || v === "1" || v === "yes");

/** Raw environment schema: names are the variable names; defaults are strings as an operator would write them. */
const envSchema = z.object({
  BOT_TOKEN: z
    .string({ message: "is required: the token from @BotFather, like 123456789:AA…" })
    .trim()
    .regex(/^\d+:[A-Za-z0-9_-]{20,}$/, "expected a bot token like 123456789:AAE… (digits, colon, 20+ letters)"),
  BOT_API_MODE: z.enum(["cloud", "local"], { message: "expected cloud or local" }).default("cloud"),
  BOT_API_ROOT: z
    .string()
    .trim()
    .url("expected an http(s) URL without a trailing slash, e.g. https://api.telegram.org")
    .transform((u) => u.replace(/\/+$/, ""))
    .default("https://api.telegram.org"),
  /** Local mode: the Bot API server's --dir as this host sees it; every absolute file_path must be inside it. */
  LOCAL_BOT_API_DIR: z.string().trim().default("/var/lib/docket/bot-api"),
  DATA_DIR: z.string().trim().default("./var"),
  /** PostgreSQL instead of the SQLite file (issue 14): postgres://user:password@host:port/database. */
  DATABASE_URL: z
    .string()
    .trim()
    .regex(/^postgres(ql)?:\/\/[^\s]+$/, "expected postgres://user:password@host:5432/database (empty = the SQLite file under DATA_DIR)")
    .optional(),
  /**
   * What this process does (issue 14 item 3): `all` (receive updates when elected, and work), `intake`
   * (only receive updates when elected), `worker` (only download and process). Roles other than
   * `all` need DATABASE_URL: processes share work only through PostgreSQL.
   */
  DOCKET_ROLE: z.enum(["all", "intake", "worker"], { message: "expected all, intake or worker" }).default("all"),
  /** Connections of one process's two pools together (bot/db/pg-open.ts `poolSplit`): at least one each. */
  DB_POOL_MAX: positiveInt.pipe(z.number().min(2, "at least 2 (one for single statements, one for transactions)")).prefault("10"),
  DB_STATEMENT_TIMEOUT: duration.prefault("30s"),
  DOWNLOAD_LIMIT_CLOUD: bytes.prefault("20MB"),
  DOWNLOAD_LIMIT_LOCAL: bytes.prefault("2000MB"),
  UPLOAD_LIMIT_CLOUD: bytes.prefault("50MB"),
  UPLOAD_LIMIT_LOCAL: bytes.prefault("2000MB"),
  DOWNLOAD_BUDGET: bytes.prefault("4GB"),
  BUDGET_MULTIPLIER: z.string().trim().regex(/^\d+(\.\d+)?$/, "expected a number like 2 or 2.5").transform(Number).prefault("2.5"),
  BUDGET_MIN_RESERVATION: bytes.prefault("8MB"),
  DOWNLOAD_CONCURRENCY: positiveInt.prefault("4"),
  PROCESS_CONCURRENCY: positiveInt.optional(),
  MAX_ATTEMPTS: positiveInt.prefault("3"),
  LEASE_TTL: duration.prefault("60s"),
  HOST_ID: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "expected 1-64 characters A-Z a-z 0-9 . _ - (no '/'), e.g. docket-1")
    .optional(),
  DOWNLOAD_IDLE_TIMEOUT: duration.prefault("60s"),
  DOWNLOAD_TIMEOUT: duration.prefault("2m"),
  DOWNLOAD_MIN_SPEED: bytes.prefault("256KB"),
  PROCESS_TIMEOUT: duration.prefault("120s"),
  PROCESS_MEMORY_MB: positiveInt.prefault("1024"),
  PROCESS_RECYCLE_JOBS: positiveInt.prefault("500"),
  PROCESS_RECYCLE_RSS_MB: positiveInt.prefault("512"),
  PROCESS_IDLE_TIMEOUT: duration.prefault("10m"),
  MAX_INPUT_PIXELS: positiveInt.prefault("100000000"),
  MAX_OUTPUT_SIDE: positiveInt.prefault("2560"),
  MAX_PDF_PAGES: positiveInt.prefault("500"),
  MAX_FRAMES: positiveInt.prefault("1000"),
  PDF_PAGE_BUDGET: duration.prefault("2s"),
  OCR_LANGUAGES: z
    .string()
    .trim()
    .regex(/^[A-Za-z_]+(\+[A-Za-z_]+)*$/, "expected Tesseract language codes joined by +, e.g. rus+eng")
    .default("rus+eng"),
  OCR_DPI: z.string().trim().regex(/^\d+$/, "expected dots per inch, e.g. 300").transform(Number).pipe(z.number().int().min(72).max(1200)).prefault("300"),
  OCR_MAX_PAGES: positiveInt.prefault("500"),
  OCR_PAGE_BUDGET: duration.prefault("60s"),
  OCR_TIMEOUT: duration.prefault("30m"),
  OCR_CONCURRENCY: positiveInt.optional(),
  RESULT_TTL: duration.prefault("24h"),
  PART_MAX_AGE: duration.prefault("6h"),
  ALBUM_QUIET: duration.prefault("2s"),
  MERGE_QUIET: duration.prefault("30s"),
  JANITOR_INTERVAL: duration.prefault("10m"),
  QUEUE_POSITIONS_INTERVAL: duration.prefault("15s"),
  ALLOWED_USER_IDS: idList.prefault(""),
  ADMIN_USER_IDS: idList.prefault(""),
  USER_MAX_JOBS_IN_FLIGHT: positiveInt.prefault("5"),
  USER_MAX_BYTES_PER_DAY: bytes.prefault("2GB"),
  HTTP_PORT: z.string().trim().regex(/^\d+$/, "expected a TCP port number").transform(Number).pipe(z.number().int().min(0).max(65535)).prefault("8090"),
  STARTUP_RETRY_MAX: duration.prefault("30s"),
  BACKUP_MAX_AGE: duration.prefault("48h"),
  LOG_LEVEL: z.enum(["trace", "debug", "info", "warn", "error", "fatal"], { message: "expected trace, debug, info, warn, error or fatal" }).default("info"),
  DELETE_WEBHOOK_ON_START: bool.prefault("true"),
  CHAT_CALL_TIMEOUT: duration.prefault("30s"),
  WEBHOOK_URL: z.string().trim().url("expected the public https URL Telegram posts updates to, e.g. https://bot.example.com/tg/hook").optional(),
  WEBHOOK_SECRET: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9_-]{1,256}$/, "expected 1-256 characters A-Z a-z 0-9 _ - (Bot API: setWebhook secret_token)")
    .optional(),
  WEBHOOK_PORT: z.string().trim().regex(/^\d+$/, "expected the 127.0.0.1 TCP port nginx forwards the webhook to, e.g. 8091").transform(Number).pipe(z.number().int().min(1).max(65535)).prefault("8091"),
  WEBHOOK_PATH: z.string().trim().regex(/^\/[A-Za-z0-9/_-]*$/, "expected a URL path like /telegram/webhook").optional(),
});

/** Every environment variable the bot reads (for docs checks and tooling). */
export const CONFIG_KEYS: readonly string[] = Object.freeze(Object.keys(envSchema.shape));

/** Per-operation, per-mode limits in bytes (seed 000: "Два лимита, которые нельзя складывать в один"). */
export interface Limits {
  /** Largest file getFile may fetch in cloud mode (Bot API: 20 MB). */
  readonly downloadCloud: number;
  /** Largest file fetched from a local Bot API server. */
  readonly downloadLocal: number;
  /** Largest result upload in cloud mode (Bot API: 50 MB for sendDocument). */
  readonly uploadCloud: number;
  /** Largest result upload to a local Bot API server (2000 MB). */
  readonly uploadLocal: number;
}

/** The whole typed configuration of the bot. Sizes in bytes, durations in ms. */
export interface Config {
  readonly token: string;
  readonly mode: "cloud" | "local";
  /** grammY `apiRoot`, no trailing slash. */
  readonly apiRoot: string;
  /**
   * Bound of one chat-bound Bot API call (a message, an edit), ms: a call with no answer by then is
   * aborted and tried again (issue 11 item 7). An upload gets this plus its size at 256 KB/s.
   */
  readonly chatCallTimeoutMs: number;
  readonly localBotApiDir: string;
  /** Absolute data root; `db/`, `downloads/`, `work/`, `results/` live under it. */
  readonly dataDir: string;
  /**
   * The job store's database: `url` is DATABASE_URL (the PostgreSQL store; issue 14) or null for the
   * SQLite file under DATA_DIR. `url` holds the password: never log it (bot/db/pg-open.ts `describeUrl`).
   * `poolMax` (connections) and `statementTimeoutMs` bound the PostgreSQL client.
   */
  readonly database: { readonly url: string | null; readonly poolMax: number; readonly statementTimeoutMs: number };
  /**
   * DOCKET_ROLE (issue 14 item 3): `all` and `intake` receive updates while elected (one process across
   * all hosts), `all` and `worker` run the download and processing pools.
   */
  readonly role: "all" | "intake" | "worker";
  readonly limits: Limits;
  /** Byte budget shared by downloads in flight (seed 000: "Бюджет в байтах"). */
  readonly downloadBudget: number;
  /** Reservation = declared size × this multiplier (measured; see docs/benchmarks.md). */
  readonly budgetMultiplier: number;
  /** Smallest reservation per job (outputs such as previews have a size of their own), bytes. */
  readonly budgetMinReservation: number;
  readonly downloadConcurrency: number;
  /** Processing pool size: processing loops and warm processor children (default: available cores). */
  readonly processConcurrency: number;
  readonly maxAttempts: number;
  readonly leaseTtlMs: number;
  /**
   * This host's part of every lease owner id, `<host id>/<process start id>` (CONTRACTS.md §6; HOST_ID,
   * default the host name). A process reclaims at start the leases of its own host's earlier processes.
   */
  readonly hostId: string;
  /** A download try with no bytes for this long fails (retryable `download_failed`), ms. */
  readonly downloadIdleTimeoutMs: number;
  /** Fixed part of a download try's deadline (getFile, connecting), ms; see bot/fetch/timeouts.ts. */
  readonly downloadTimeoutMs: number;
  /** Slowest accepted average speed, bytes per second: the deadline adds size / this. */
  readonly downloadMinSpeed: number;
  readonly processTimeoutMs: number;
  readonly processMemoryMb: number;
  /** A warm processor child is replaced after this many jobs (processors/pool/policy.ts). */
  readonly processRecycleJobs: number;
  /** A warm child whose resident set after a job (after a full GC) stays above this is replaced, MB. */
  readonly processRecycleRssMb: number;
  /** A warm child with no job for this long exits (an idle bot gives the memory back), ms. */
  readonly processIdleTimeoutMs: number;
  readonly maxInputPixels: number;
  readonly maxOutputSide: number;
  readonly maxPdfPages: number;
  /** Most animation frames converted (GIF/WebP/APNG); above it only frame 1 (audit of issue 5, gap 6). */
  readonly maxFrames: number;
  readonly pdfPageBudgetMs: number;
  /** Tesseract languages joined by `+`, primary first (issue 13 §3). */
  readonly ocrLanguages: string;
  /** Resolution pages are drawn at for recognition, dpi. */
  readonly ocrDpi: number;
  /** Most pages recognized per job; later pages are left unrecognized and the chat says where it stopped. */
  readonly ocrMaxPages: number;
  /** Time allowed to recognize one page, ms (over it the page is skipped). */
  readonly ocrPageBudgetMs: number;
  /** Time allowed for all recognition of one job, ms; it then stops and delivers what it has. Added to processTimeoutMs for a child that recognizes. */
  readonly ocrTimeoutMs: number;
  /** Tesseract processes one job runs at once. */
  readonly ocrConcurrency: number;
  readonly resultTtlMs: number;
  readonly partMaxAgeMs: number;
  /** An album is complete after this long without a new part, ms (ALBUM_QUIET; issue 13 item 5: Telegram sends its parts as separate updates). */
  readonly albumQuietMs: number;
  /** "Merge with the next files" (issue 15 item 3): the merge starts this long after the last file sent, ms (MERGE_QUIET). */
  readonly mergeQuietMs: number;
  readonly janitorIntervalMs: number;
  /** How often the intake process refreshes waiting jobs' queue positions, ms (QUEUE_POSITIONS_INTERVAL; bot/status/positions.ts). */
  readonly queuePositionsIntervalMs: number;
  /** Empty = everyone may use the bot. */
  readonly allowedUserIds: readonly number[];
  readonly adminUserIds: readonly number[];
  readonly userMaxJobsInFlight: number;
  readonly userMaxBytesPerDay: number;
  /**
   * Longest wait between start-up's attempts to reach the Bot API, ms: start-up retries until it
   * answers (issue 9 item 2), only a refused token (401) ends it (exit 78).
   */
  readonly startupRetryMaxMs: number;
  /** `/readyz` fails when the last good backup is older than this, ms; 0 = no backup check. */
  readonly backupMaxAgeMs: number;
  /** 127.0.0.1 port for /healthz and /metrics; 0 = off. */
  readonly httpPort: number;
  readonly logLevel: "trace" | "debug" | "info" | "warn" | "error" | "fatal";
  readonly deleteWebhookOnStart: boolean;
  /** Webhook mode when set: the public URL Telegram posts to (nginx in front); else long polling. */
  readonly webhook: { readonly url: string; readonly secret: string; readonly host: string; readonly port: number; readonly path: string } | null;
}

/** Thrown when the environment is invalid; `message` names every bad variable and its expected form. */
export class ConfigError extends Error {
  /** @param problems one line per variable: `NAME: expected …` */
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

/**
 * Parse an environment into a {@link Config}.
 * Empty strings count as unset (so `FOO=` in an env file takes the default).
 * @throws ConfigError naming each bad or missing variable and the expected form.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const cleaned: Record<string, string> = {};
  for (const key of Object.keys(envSchema.shape)) {
    const v = env[key];
    if (v !== undefined && v.trim() !== "") cleaned[key] = v;
  }
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => {
      const name = String(i.path[0] ?? "?");
      const missing = i.code === "invalid_type" && cleaned[name] === undefined;
      const msg = missing ? (i.message.startsWith("is required") ? i.message : "is required") : i.message;
      return `${name}: ${msg}`;
    });
    throw new ConfigError(problems);
  }
  const e = parsed.data;
  const crossChecks: string[] = [];
  if (e.WEBHOOK_URL && !e.WEBHOOK_SECRET) crossChecks.push("WEBHOOK_SECRET: is required with WEBHOOK_URL (1-256 characters A-Z a-z 0-9 _ -)");
  // Local mode against Telegram's cloud server would refuse every absolute file_path (botapi-facts: --local).
  if (e.BOT_API_MODE === "local" && new URL(e.BOT_API_ROOT).hostname === "api.telegram.org") {
    crossChecks.push("BOT_API_ROOT: must point at your local telegram-bot-api server in local mode (e.g. http://127.0.0.1:8081), not api.telegram.org");
  }
  // A warm child is measured against the cap as a whole: one that stays above the cap after a job
  // would fail the next file with too_much_memory.
  if (e.PROCESS_RECYCLE_RSS_MB >= e.PROCESS_MEMORY_MB) {
    crossChecks.push(`PROCESS_RECYCLE_RSS_MB: must be below PROCESS_MEMORY_MB (${e.PROCESS_MEMORY_MB}); about half of it leaves a job room`);
  }
  if (e.DOCKET_ROLE !== "all" && !e.DATABASE_URL) {
    crossChecks.push(`DOCKET_ROLE: ${e.DOCKET_ROLE} needs DATABASE_URL (processes share work only through PostgreSQL; with the SQLite file the one process has role all)`);
  }
  if (crossChecks.length > 0) throw new ConfigError(crossChecks);
  return Object.freeze({
    token: e.BOT_TOKEN,
    mode: e.BOT_API_MODE,
    apiRoot: e.BOT_API_ROOT,
    chatCallTimeoutMs: e.CHAT_CALL_TIMEOUT,
    localBotApiDir: resolve(e.LOCAL_BOT_API_DIR),
    dataDir: resolve(e.DATA_DIR),
    database: Object.freeze({ url: e.DATABASE_URL ?? null, poolMax: e.DB_POOL_MAX, statementTimeoutMs: e.DB_STATEMENT_TIMEOUT }),
    role: e.DOCKET_ROLE,
    limits: Object.freeze({
      downloadCloud: e.DOWNLOAD_LIMIT_CLOUD,
      downloadLocal: e.DOWNLOAD_LIMIT_LOCAL,
      uploadCloud: e.UPLOAD_LIMIT_CLOUD,
      uploadLocal: e.UPLOAD_LIMIT_LOCAL,
    }),
    downloadBudget: e.DOWNLOAD_BUDGET,
    budgetMultiplier: e.BUDGET_MULTIPLIER,
    budgetMinReservation: e.BUDGET_MIN_RESERVATION,
    downloadConcurrency: e.DOWNLOAD_CONCURRENCY,
    processConcurrency: e.PROCESS_CONCURRENCY ?? Math.max(1, cpus().length),
    maxAttempts: e.MAX_ATTEMPTS,
    leaseTtlMs: e.LEASE_TTL,
    hostId: e.HOST_ID ?? defaultHostId(),
    downloadIdleTimeoutMs: e.DOWNLOAD_IDLE_TIMEOUT,
    downloadTimeoutMs: e.DOWNLOAD_TIMEOUT,
    downloadMinSpeed: e.DOWNLOAD_MIN_SPEED,
    processTimeoutMs: e.PROCESS_TIMEOUT,
    processMemoryMb: e.PROCESS_MEMORY_MB,
    processRecycleJobs: e.PROCESS_RECYCLE_JOBS,
    processRecycleRssMb: e.PROCESS_RECYCLE_RSS_MB,
    processIdleTimeoutMs: e.PROCESS_IDLE_TIMEOUT,
    maxInputPixels: e.MAX_INPUT_PIXELS,
    maxOutputSide: e.MAX_OUTPUT_SIDE,
    maxPdfPages: e.MAX_PDF_PAGES,
    maxFrames: e.MAX_FRAMES,
    pdfPageBudgetMs: e.PDF_PAGE_BUDGET,
    ocrLanguages: e.OCR_LANGUAGES,
    ocrDpi: e.OCR_DPI,
    ocrMaxPages: e.OCR_MAX_PAGES,
    ocrPageBudgetMs: e.OCR_PAGE_BUDGET,
    ocrTimeoutMs: e.OCR_TIMEOUT,
    ocrConcurrency: e.OCR_CONCURRENCY ?? Math.max(1, cpus().length),
    resultTtlMs: e.RESULT_TTL,
    partMaxAgeMs: e.PART_MAX_AGE,
    albumQuietMs: e.ALBUM_QUIET,
    mergeQuietMs: e.MERGE_QUIET,
    janitorIntervalMs: e.JANITOR_INTERVAL,
    queuePositionsIntervalMs: e.QUEUE_POSITIONS_INTERVAL,
    allowedUserIds: Object.freeze(e.ALLOWED_USER_IDS),
    adminUserIds: Object.freeze(e.ADMIN_USER_IDS),
    userMaxJobsInFlight: e.USER_MAX_JOBS_IN_FLIGHT,
    userMaxBytesPerDay: e.USER_MAX_BYTES_PER_DAY,
    startupRetryMaxMs: e.STARTUP_RETRY_MAX,
    backupMaxAgeMs: e.BACKUP_MAX_AGE,
    httpPort: e.HTTP_PORT,
    logLevel: e.LOG_LEVEL,
    deleteWebhookOnStart: e.DELETE_WEBHOOK_ON_START,
    webhook: e.WEBHOOK_URL
      ? Object.freeze({ url: e.WEBHOOK_URL, secret: e.WEBHOOK_SECRET!, host: "127.0.0.1", port: e.WEBHOOK_PORT, path: e.WEBHOOK_PATH ?? new URL(e.WEBHOOK_URL).pathname })
      : null,
  });
}

/**
 * HOST_ID's default: the host name, cut to what HOST_ID accepts (characters outside `A-Za-z0-9._-`
 * become `-`, at most 64), so the owner ids `<host id>/<start id>` stay one path segment.
 */
export function defaultHostId(name: string = hostname()): string {
  const cleaned = name.replace(/[^A-Za-z0-9._-]/g, "-").replace(/^[^A-Za-z0-9]+/, "").slice(0, 64);
  return cleaned || "localhost";
}

/** The download limit of the configured mode, bytes (seed 000: checked at intake and after download). */
export function downloadLimit(config: Pick<Config, "mode" | "limits">): number {
  return config.mode === "cloud" ? config.limits.downloadCloud : config.limits.downloadLocal;
}

/** The result-upload limit of the configured mode, bytes (checked before `ready`). */
export function uploadLimit(config: Pick<Config, "mode" | "limits">): number {
  return config.mode === "cloud" ? config.limits.uploadCloud : config.limits.uploadLocal;
}

/**
 * Load the config for a command-line entry point; on a {@link ConfigError} print
 * it (naming each variable and its form) to stderr and return null — the caller
 * exits with code 2 (systemd: `RestartPreventExitStatus=2`, restarting cannot fix it).
 * @param program name shown before the message, e.g. `docket`, `docket janitor`
 */
export function loadConfigForCli(program: string, env: Record<string, string | undefined> = process.env): Config | null {
  try {
    return loadConfig(env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${program}: ${err.message}\nSee .env.example or docs/configuration.md for every variable and its form.\n`);
    return null;
  }
}
