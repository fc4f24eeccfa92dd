/**
 * The pool that runs the PostgreSQL store's single statements — every claim, hand-over, transition
 * and read that is not part of a transaction — on Bun's own SQL client (`Bun.SQL`, issue 14 items 1
 * and 8). Bun's client parses and binds in native code: a job's three such calls cost a quarter to a
 * third less client CPU than on postgres.js (bench/queue/pg.ts, docs/benchmarks.md: 0.43–0.51 against
 * 0.55–0.73 ms of worker CPU per job). Transactions, drizzle's queries, LISTEN and the session locks
 * stay on postgres.js (./pg-open.ts), which has all four.
 *
 * Rows come back as postgres.js returns them to the store: int8 as JS numbers (ids, Telegram chat
 * ids and byte counts stay below 2^53, as in SQLite's INTEGER). Bun returns every int8 as a BigInt
 * (`bigint: true`), converted here, so no column can arrive as a string.
 */
import { SQL } from "bun";

/** A bound value of a statement (the store binds no other kinds). */
export type PgParam = string | number | null;

/** Single statements outside a transaction, on their own bounded pool. */
export interface PgStatements {
  /**
   * Run `text` (positional `$1…$n`) with `params`, prepared once per connection; its rows, int8 as numbers.
   * @throws Bun's `PostgresError` (`errno` the SQLSTATE; `code` ERR_POSTGRES_CONNECTION_REFUSED when
   *   nothing answers), never with the URL or its password in the message
   */
  rows<R>(text: string, params: readonly PgParam[]): Promise<R[]>;
  /** Run a write; how many rows it changed. @throws as {@link rows} */
  count(text: string, params: readonly PgParam[]): Promise<number>;
  /** End every connection (waits for running queries up to `timeoutS`). */
  end(timeoutS: number): Promise<void>;
}

/** How to reach and bound the statement pool. */
export interface PgStatementsOptions {
  /** `postgres://user:password@host:port/database` (DATABASE_URL). */
  readonly url: string;
  /** Most connections of the pool. */
  readonly max: number;
  /** `statement_timeout` of every connection, ms (0: none). */
  readonly statementTimeoutMs: number;
  /** Longest a connection attempt may take, ms. */
  readonly connectTimeoutMs: number;
  /** `application_name` the server shows in pg_stat_activity. */
  readonly applicationName: string;
}

/** The rows of a result as a plain array (Bun's carries `count` and `command`), int8 (a BigInt from Bun) as JS numbers. */
function plainRows<R>(result: R[]): R[] {
  const rows = [...result];
  for (const row of rows as Record<string, unknown>[]) {
    for (const key in row) {
      const v = row[key];
      if (typeof v === "bigint") row[key] = Number(v);
    }
  }
  return rows;
}

/** A statement pool on Bun's SQL client (no connection is made until the first statement). */
export function bunStatements(opts: PgStatementsOptions): PgStatements {
  const sql = new SQL({
    url: opts.url,
    max: Math.max(1, opts.max),
    idleTimeout: 60,
    // As the postgres.js pool: a connection is kept at most 30 min, so a server restart or failover is picked up.
    maxLifetime: 30 * 60,
    connectionTimeout: Math.max(1, Math.ceil(opts.connectTimeoutMs / 1000)),
    bigint: true,
    prepare: true,
    connection: { application_name: opts.applicationName, statement_timeout: Math.max(0, Math.floor(opts.statementTimeoutMs)) },
  });
  return {
    async rows<R>(text: string, params: readonly PgParam[]) {
      return plainRows((await sql.unsafe(text, params as PgParam[])) as R[]);
    },
    async count(text, params) {
      return ((await sql.unsafe(text, params as PgParam[])) as { count: number }).count;
    },
    end: (timeoutS) => sql.close({ timeout: timeoutS }),
  };
}
