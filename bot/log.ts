/**
 * The operator log: one JSON line per event on stdout, for the journal.
 *
 * Secrets are redacted here, at the logger, so no caller can leak them: the bot
 * token and any Bot API URL that carries it (`…/bot<token>/…`, `…/file/bot<token>/…`)
 * become `bot<redacted>` in every string of every record, messages and errors
 * included (seed 000: "не пишите её целиком ни в журнал").
 * Under systemd (JOURNAL_STREAM set) each line starts with a `<N>` syslog
 * priority prefix so journald maps pino levels to priorities.
 */
import pino, { type Logger } from "pino";

export type { Logger } from "pino";

/** Matches a Telegram bot token: digits, colon, 30+ token characters. */
const TOKEN_RE = /\d{3,}:[A-Za-z0-9_-]{20,}/g;

/**
 * Replace every bot token in `text` (the configured one and anything token-shaped)
 * with `<redacted>`.
 * @param text any string (URL, error message, stack)
 * @param token the configured token, removed even if it does not look token-shaped
 */
export function redactSecrets(text: string, token?: string): string {
  let out = text;
  if (token) out = out.split(token).join("<redacted>");
  return out.replace(TOKEN_RE, "<redacted>");
}

function redactDeep(value: unknown, token: string | undefined, depth = 0): unknown {
  if (typeof value === "string") return redactSecrets(value, token);
  if (depth > 6 || value === null || typeof value !== "object") return value;
  if (value instanceof Error) {
    const e = value as Error & { error_code?: number; description?: string };
    return {
      type: e.name,
      message: redactSecrets(e.message, token),
      ...(e.error_code !== undefined ? { error_code: e.error_code } : {}),
      stack: e.stack ? redactSecrets(e.stack, token) : undefined,
    };
  }
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, token, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = redactDeep(v, token, depth + 1);
  return out;
}

/** pino level → syslog priority (journald). */
const PRIORITY: Record<number, number> = { 10: 7, 20: 7, 30: 6, 40: 4, 50: 3, 60: 2 };

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** Minimum level; default `info`. */
  readonly level?: string;
  /** The bot token to scrub in addition to token-shaped strings. */
  readonly token?: string;
  /** Where lines go (default stdout); tests pass a collector. */
  readonly write?: (line: string) => void;
  /** Prefix lines with `<N>` journald priorities (default: when JOURNAL_STREAM is set). */
  readonly journald?: boolean;
  /** Sees every line written (redacted, without the journald prefix): bot/ops/recent-log.ts. */
  readonly onLine?: (line: string) => void;
}

/**
 * Create the process logger. Records carry `job` (job id) and `file_unique_id`
 * as fields when a caller binds them (`log.child({ job: 12 })`).
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const token = options.token;
  const journald = options.journald ?? Boolean(process.env.JOURNAL_STREAM);
  const write = options.write ?? ((line: string) => void process.stdout.write(line));
  return pino(
    {
      level: options.level ?? "info",
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      messageKey: "msg",
      // Errors are turned into { type, message, stack } (redacted) by the formatter below; keep that shape.
      serializers: { err: (v: unknown) => (v instanceof Error ? pino.stdSerializers.err(v) : v) },
      formatters: {
        log: (obj) => redactDeep(obj, token) as Record<string, unknown>,
      },
      hooks: {
        logMethod(args, method) {
          const cleaned = args.map((a) => (typeof a === "string" ? redactSecrets(a, token) : a));
          method.apply(this, cleaned as Parameters<typeof method>);
        },
      },
    },
    {
      write(line: string) {
        options.onLine?.(line);
        if (!journald) return write(line);
        const level = Number(/"level":(\d+)/.exec(line)?.[1] ?? 30);
        write(`<${PRIORITY[level] ?? 6}>${line}`);
      },
    },
  );
}
