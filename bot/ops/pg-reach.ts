/**
 * A PostgreSQL server that does not answer at start-up is waited out like a Bot API outage (issue 14,
 * faults; bot/ops/reach.ts): capped exponential backoff with jitter, one journal line per kind of
 * failure (the server refuses connections, the name does not resolve, the login is refused, …) naming
 * the cause and what to check, a reminder every 10 minutes, and one line when it answers. A schema
 * newer than the release is no outage: it ends the wait at once (bot/db/schema-version.ts).
 * Nothing is written before the database answers, so nothing can be lost or doubled.
 */
import type { Logger } from "../log.ts";
import { backoffMs } from "./outage.ts";
import { SchemaTooNewError } from "../db/schema-version.ts";

/** What to check for each kind of failure. */
const HINT: Record<string, string> = {
  refused: "nothing listens there: is the PostgreSQL server up, and are host and port of DATABASE_URL right?",
  dns: "the host name of DATABASE_URL does not resolve: is the network (DNS) up?",
  timeout: "no answer in time: is the network up and the server not overloaded?",
  auth: "the server refused the login: check the user and password in DATABASE_URL and pg_hba.conf",
  database: "the server answers but has no such database: create it (docs/scaling.md) or fix DATABASE_URL",
  starting: "the server is starting up or shutting down",
  other: "see the error",
};

/**
 * The kind of a connection failure. postgres.js errors carry the server's SQLSTATE or the socket's
 * code in `code`; Bun's SQL client (bot/db/pg-statements-pool.ts) puts the SQLSTATE in `errno` under
 * `code` ERR_POSTGRES_SERVER_ERROR, and names a failed connection in `code` itself.
 */
export function failureKind(err: unknown): keyof typeof HINT {
  const e = err as { code?: string; errno?: string | number; message?: string };
  const code = e?.code === "ERR_POSTGRES_SERVER_ERROR" ? String(e.errno ?? "") : String(e?.code ?? e?.errno ?? "");
  if (code === "ERR_POSTGRES_CONNECTION_REFUSED" || code === "ERR_POSTGRES_CONNECTION_CLOSED") return "refused";
  if (code === "ERR_POSTGRES_CONNECTION_TIMEOUT") return "timeout";
  if (code === "ECONNREFUSED" || code === "ECONNRESET" || code === "EHOSTUNREACH" || code === "ENETUNREACH") return "refused";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return "dns";
  if (code === "CONNECT_TIMEOUT" || code === "ETIMEDOUT") return "timeout";
  if (code === "28P01" || code === "28000") return "auth";
  if (code === "3D000") return "database";
  if (code === "57P03" || code === "57P01") return "starting";
  return "other";
}

/** Options of {@link untilDatabase}. */
export interface DatabaseReachOptions {
  readonly log: Logger;
  /** `host:port/database` (never the URL: it holds the password). */
  readonly where: string;
  /** The URL's password, scrubbed from every error text that reaches the journal. */
  readonly secret?: string | null;
  /** Longest wait between attempts, ms (STARTUP_RETRY_MAX). */
  readonly capMs: number;
  /** Aborting (SIGTERM during start-up) ends the wait: resolves null. */
  readonly signal: AbortSignal;
  /** Clock, epoch ms. */
  readonly now?: () => number;
  /** Uniform number in [0, 1) for the jitter. */
  readonly random?: () => number;
}

/**
 * Call `open` until it succeeds; null when `signal` aborted first.
 * @throws SchemaTooNewError at once (a newer release migrated the database: waiting cannot help), and
 *   any error that is not a connection failure ({@link failureKind} `other`)
 */
export async function untilDatabase<T>(open: () => Promise<T>, opts: DatabaseReachOptions): Promise<T | null> {
  const now = opts.now ?? Date.now;
  const random = opts.random ?? Math.random;
  let attempt = 0;
  let lastKind: string | null = null;
  let lastLineAt = 0;
  const since = now();
  while (!opts.signal.aborted) {
    try {
      const value = await open();
      if (attempt > 0) opts.log.info({ database: opts.where, attempts: attempt, waited_ms: now() - since }, "PostgreSQL answers: starting");
      return value;
    } catch (err) {
      if (err instanceof SchemaTooNewError) throw err;
      const kind = failureKind(err);
      // Only a database that does not answer is waited out; anything else is a fault of its own.
      if (kind === "other") throw err;
      attempt++;
      const wait = backoffMs(attempt, { capMs: opts.capMs }, random());
      const raw = String((err as Error)?.message ?? err);
      const message = opts.secret ? raw.replaceAll(opts.secret, "***") : raw;
      if (kind !== lastKind || now() - lastLineAt >= 600_000) {
        opts.log.error(
          { database: opts.where, kind, attempt, code: (err as { code?: string }).code, retry_in_ms: wait },
          `PostgreSQL at ${opts.where} does not answer (${message}): ${HINT[kind]} — start-up waits and tries again (backoff up to ${Math.round(opts.capMs / 1000)} s)`,
        );
        lastKind = kind;
        lastLineAt = now();
      }
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          opts.signal.removeEventListener("abort", done);
          resolve();
        };
        const timer = setTimeout(done, wait);
        opts.signal.addEventListener("abort", done, { once: true });
      });
    }
  }
  return null;
}

/**
 * Resolve once `ping` succeeds (the store answers), trying with capped backoff (0.5 s doubling up to
 * `capMs`); resolves early when `signal` aborts. Mid-run callers (intake's redo of failed updates) use it.
 */
export async function untilAnswers(ping: () => Promise<void>, signal: AbortSignal, capMs = 30_000): Promise<void> {
  for (let attempt = 1; !signal.aborted; attempt++) {
    try {
      await ping();
      return;
    } catch {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener("abort", done);
          resolve();
        };
        const timer = setTimeout(done, Math.min(capMs, 500 * 2 ** Math.min(16, attempt - 1)));
        signal.addEventListener("abort", done, { once: true });
      });
    }
  }
}
