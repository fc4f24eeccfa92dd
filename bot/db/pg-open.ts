/**
 * Opens the PostgreSQL database of the PostgreSQL job store (issue 14 item 1): bounded pools with a
 * statement timeout on every connection, and the committed drizzle-kit migrations
 * (`bot/db/pg-migrations/`) applied at start under a session advisory lock, so two hosts starting
 * together never migrate at once: the second waits for the first and then finds nothing left to apply.
 * A database migrated by a newer release is refused before anything runs (./schema-version.ts).
 *
 * The pools of a process ({@link OpenPg}): the store's single statements on Bun's own SQL client
 * (./pg-statements-pool.ts, the hot path), transactions and drizzle's queries on the `postgres`
 * client (postgres.js) — the two share DB_POOL_MAX ({@link poolSplit}) — and the session locks on a
 * small postgres.js pool of their own; LISTEN has its own connection (./pg-wake.ts).
 *
 * `DATABASE_URL` holds the password: it is never logged, never put into an error message (errors
 * name host, port and database only: {@link describeUrl}) and never handed to child processes.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { LOCK_CLASS, LOCKS } from "./pg-locks.ts";
import { bunStatements, type PgStatements } from "./pg-statements-pool.ts";
import { checkSchemaVersion, readJournal } from "./schema-version.ts";

/** Folder of the committed PostgreSQL migrations. */
export const PG_MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), "pg-migrations");

/** The client type the store uses (int8 read as JS numbers). */
export type PgSql = postgres.Sql<{ int8: number }>;

/** How to reach and bound the database. */
export interface PgOptions {
  /** `postgres://user:password@host:port/database` (DATABASE_URL). */
  readonly url: string;
  /** Most connections of this process, both pools together (DB_POOL_MAX; shared by {@link poolSplit}). */
  readonly poolMax: number;
  /** Longest a statement may run before the server cancels it, ms (DB_STATEMENT_TIMEOUT). */
  readonly statementTimeoutMs: number;
  /** Longest a connection attempt may take, ms (default 10 000). */
  readonly connectTimeoutMs?: number;
  /** `application_name` the server shows in pg_stat_activity (default `docket`). */
  readonly applicationName?: string;
}

/** An open database: its pools. */
export interface OpenPg {
  /** postgres.js: transactions and drizzle's queries (and LISTEN, on a connection of its own). */
  readonly sql: PgSql;
  /** Bun's SQL client: single statements outside a transaction (the store's hot path). */
  readonly statements: PgStatements;
  /**
   * postgres.js, {@link LOCK_CONNECTIONS} connections for the session locks (./pg-session-lock.ts) only:
   * a lock holds its connection as long as it is held, so it must never take one the transactions
   * wait for (the leader's lock and the janitor's expiry lock, held while the janitor's own transactions run).
   */
  readonly locks: PgSql;
  /** End every connection of every pool (waits for running queries up to `timeoutS`, default 5 s). */
  close(timeoutS?: number): Promise<void>;
}

/**
 * int8 (OID 20) as a JS number: ids, Telegram chat ids and byte counts stay below 2^53 (the same
 * values SQLite's INTEGER holds); counts and sums are cast to bigint in the statements.
 */
const INT8_AS_NUMBER = { to: 20, from: [20], serialize: (v: number) => String(v), parse: (v: string) => Number(v) };

/** `host:port/database` of a URL, without user or password (for log lines and errors). */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || "5432"}${u.pathname}`;
  } catch {
    return "(unparsable DATABASE_URL)";
  }
}

/** The password of a URL (to scrub from error text), or null when it has none. */
export function passwordOf(url: string): string | null {
  try {
    const p = decodeURIComponent(new URL(url).password);
    return p === "" ? null : p;
  } catch {
    return null;
  }
}

/** Session locks one process can hold at once: the intake leader's and the janitor's expiry pass (./pg-locks.ts LOCKS). */
export const LOCK_CONNECTIONS = 2;

/**
 * How a process's DB_POOL_MAX connections are shared: half (rounded down, at least 1) for single
 * statements, the rest (at least 1) for transactions. The session locks ({@link LOCK_CONNECTIONS})
 * and LISTEN (postgres.js `listen`) have connections of their own besides.
 */
export function poolSplit(poolMax: number): { statements: number; transactions: number } {
  const statements = Math.max(1, Math.floor(poolMax / 2));
  return { statements, transactions: Math.max(1, poolMax - statements) };
}

/** postgres.js's pool of `max` connections for `opts` (no connection is made until the first query). */
function pgClient(opts: PgOptions, max: number): PgSql {
  return postgres(opts.url, {
    max,
    idle_timeout: 60,
    connect_timeout: Math.max(1, Math.ceil((opts.connectTimeoutMs ?? 10_000) / 1000)),
    // An idle pool connection is kept at most 30 min, so a server-side restart or failover is picked up.
    max_lifetime: 30 * 60,
    types: { int8: INT8_AS_NUMBER },
    connection: { application_name: opts.applicationName ?? "docket", statement_timeout: Math.max(0, Math.floor(opts.statementTimeoutMs)) },
    onnotice: () => {},
  }) as unknown as PgSql;
}

/** Both pools for `opts`, without migrating (no connection is made until the first query). */
export function pgPools(opts: PgOptions): OpenPg {
  const split = poolSplit(opts.poolMax);
  const sql = pgClient(opts, split.transactions);
  const statements = bunStatements({
    url: opts.url,
    max: split.statements,
    statementTimeoutMs: opts.statementTimeoutMs,
    connectTimeoutMs: opts.connectTimeoutMs ?? 10_000,
    applicationName: opts.applicationName ?? "docket",
  });
  const locks = pgClient({ ...opts, applicationName: `${opts.applicationName ?? "docket"} locks` }, LOCK_CONNECTIONS);
  return {
    sql,
    statements,
    locks,
    async close(timeoutS = 5) {
      await Promise.all([sql.end({ timeout: timeoutS }), statements.end(timeoutS), locks.end({ timeout: timeoutS })]);
    },
  };
}

/**
 * Connect, migrate under the advisory lock, and return both pools (each answered a first query).
 * @throws SchemaTooNewError when a newer release migrated the database; the client's error when the
 *   server cannot be reached or refuses the login (callers retry: bot/ops/pg-reach.ts)
 */
export async function openPg(opts: PgOptions): Promise<OpenPg> {
  await migratePg(opts);
  const pools = pgPools(opts);
  try {
    await pools.sql`SELECT 1`;
    await pools.statements.rows("SELECT 1", []);
  } catch (err) {
    await pools.close(1);
    throw err;
  }
  return pools;
}

/**
 * Apply this release's migrations under `pg_advisory_lock` (one connection, so the session lock
 * covers every statement of the migration): the schema check first, then drizzle's migrator.
 * The lock is waited for without a statement timeout (another host may be migrating).
 * @throws SchemaTooNewError, or the client's error
 */
export async function migratePg(opts: PgOptions): Promise<void> {
  const sql = postgres(opts.url, {
    max: 1,
    connect_timeout: Math.max(1, Math.ceil((opts.connectTimeoutMs ?? 10_000) / 1000)),
    connection: { application_name: `${opts.applicationName ?? "docket"} migrate`, statement_timeout: 0 },
    onnotice: () => {},
  });
  try {
    await sql`SELECT pg_advisory_lock(${LOCK_CLASS}, ${LOCKS.migrate})`;
    const applied = await appliedPgMigrations(sql);
    checkSchemaVersion(applied, readJournal(PG_MIGRATIONS_DIR), `PostgreSQL database ${describeUrl(opts.url)}`);
    await migrate(drizzle(sql), { migrationsFolder: PG_MIGRATIONS_DIR });
    await sql`SELECT pg_advisory_unlock(${LOCK_CLASS}, ${LOCKS.migrate})`;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** `created_at` of every migration recorded in `drizzle.__drizzle_migrations` (none on a new database). */
export async function appliedPgMigrations(sql: postgres.Sql): Promise<number[]> {
  const [t] = await sql<{ t: string | null }[]>`SELECT to_regclass('drizzle.__drizzle_migrations')::text AS t`;
  if (!t?.t) return [];
  const rows = await sql<{ at: string | null }[]>`SELECT created_at::text AS at FROM drizzle.__drizzle_migrations`;
  return rows.map((r) => Number(r.at)).filter(Number.isFinite);
}
