/**
 * The job store the configuration selects (issue 14 item 1): `DATABASE_URL=postgres://…` opens the
 * PostgreSQL store (bot/jobs/pg-store.ts, migrated at start under an advisory lock); without it, the
 * SQLite file under DATA_DIR as before (bot/jobs/sqlite-store.ts).
 */
import type { Config } from "./config.ts";
import { openDb, type OpenDb } from "./db/open.ts";
import { describeUrl, openPg, type OpenPg } from "./db/pg-open.ts";
import { LOCKS } from "./db/pg-locks.ts";
import { onceAcrossHosts, SessionLock, type SessionLockTimings } from "./db/pg-session-lock.ts";
import { pgWakeChannel, type WakeChannel } from "./db/pg-wake.ts";
import { PgJobStore } from "./jobs/pg-store.ts";
import { SqliteJobStore } from "./jobs/sqlite-store.ts";
import type { JobStore } from "./jobs/store.ts";

/** An open job store and the database behind it. */
export interface OpenedStore {
  readonly kind: "sqlite" | "postgres";
  readonly store: JobStore;
  /** The SQLite database (null with PostgreSQL). */
  readonly sqlite: OpenDb | null;
  /** The PostgreSQL pool (null with SQLite). */
  readonly pg: OpenPg | null;
  /** Where the data lives, without secrets: the SQLite file, or `host:port/database`. */
  readonly where: string;
  /** Wake-ups across processes and hosts (PostgreSQL: LISTEN/NOTIFY); null with SQLite (one process). */
  readonly wakeups: WakeChannel | null;
  /**
   * The session lock that elects the one process receiving updates across all hosts (issue 14 item 3);
   * null with SQLite (one process: it always receives them).
   */
  intakeLock(timings?: SessionLockTimings): SessionLock | null;
  /**
   * Run `fn` unless another process runs it now (PostgreSQL: a session advisory lock on `object`,
   * bot/db/pg-locks.ts LOCKS; SQLite: always runs).
   */
  once<T>(object: number, fn: () => Promise<T>): Promise<{ ran: true; value: T } | { ran: false }>;
  /** A trivial query (readiness: `database`); rejects when the database does not answer. */
  ping(): Promise<void>;
  /** Close the database (SQLite: checkpoint the WAL; PostgreSQL: end the pool). */
  close(): Promise<void>;
}

/**
 * Open the configured store.
 * @param dbFile the SQLite file (used when DATABASE_URL is empty)
 * @param applicationName PostgreSQL `application_name` of this process (default `docket`)
 * @param onError called with a failed wake-up NOTIFY (PostgreSQL; logged by the caller)
 * @throws SchemaTooNewError (bot/db/schema-version.ts) when a newer release migrated the database;
 *   the driver's error when it cannot be opened or reached
 */
export async function openStore(config: Pick<Config, "database">, dbFile: string, applicationName = "docket", onError: (err: unknown) => void = () => {}): Promise<OpenedStore> {
  const { url } = config.database;
  if (url === null) {
    const sqlite = openDb(dbFile);
    return {
      kind: "sqlite",
      store: new SqliteJobStore(sqlite.db),
      sqlite,
      pg: null,
      where: dbFile,
      wakeups: null,
      intakeLock: () => null,
      once: async (_object, fn) => ({ ran: true, value: await fn() }),
      async ping() {
        sqlite.sqlite.query("SELECT 1").get();
      },
      async close() {
        sqlite.close();
      },
    };
  }
  const pg = await openPg({ url, poolMax: config.database.poolMax, statementTimeoutMs: config.database.statementTimeoutMs, applicationName });
  return {
    kind: "postgres",
    store: new PgJobStore(pg),
    sqlite: null,
    pg,
    where: describeUrl(url),
    wakeups: pgWakeChannel(pg.sql, onError),
    intakeLock: (timings) => new SessionLock(pg.locks, LOCKS.intake, timings),
    once: (object, fn) => onceAcrossHosts(pg.locks, object, fn),
    async ping() {
      await pg.sql`SELECT 1`;
    },
    close: () => pg.close(),
  };
}
