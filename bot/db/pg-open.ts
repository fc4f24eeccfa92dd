/**
 * Opens the PostgreSQL database of the PostgreSQL job store (issue 14 item 1): a bounded pool of the
 * `postgres` client (postgres.js, runs on Bun) with a statement timeout on every connection, and the
 * committed drizzle-kit migrations (`bot/db/pg-migrations/`) applied at start under a session
 * advisory lock, so two hosts starting together never migrate at once: the second waits for the
 * first and then finds nothing left to apply. A database migrated by a newer release is refused
 * before anything runs (./schema-version.ts).
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
import { checkSchemaVersion, readJournal } from "./schema-version.ts";

/** Folder of the committed PostgreSQL migrations. */
export const PG_MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), "pg-migrations");

/** The client type the store uses (int8 read as JS numbers). */
export type PgSql = postgres.Sql<{ int8: number }>;

/** How to reach and bound the database. */
export interface PgOptions {
  /** `postgres://user:password@host:port/database` (DATABASE_URL). */
  readonly url: string;
  /** Most connections of this process (DB_POOL_MAX). */
  readonly poolMax: number;
  /** Longest a statement may run before the server cancels it, ms (DB_STATEMENT_TIMEOUT). */
  readonly statementTimeoutMs: number;
  /** Longest a connection attempt may take, ms (default 10 000). */
  readonly connectTimeoutMs?: number;
  /** `application_name` the server shows in pg_stat_activity (default `docket`). */
  readonly applicationName?: string;
}

/** An open database: the pooled client. */
export interface OpenPg {
  readonly sql: PgSql;
  /** End every connection (waits for running queries up to `timeoutS`, default 5 s). */
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

/** The pooled client for `opts` (no connection is made until the first query). */
export function pgClient(opts: PgOptions): PgSql {
  return postgres(opts.url, {
    max: opts.poolMax,
    idle_timeout: 60,
    connect_timeout: Math.max(1, Math.ceil((opts.connectTimeoutMs ?? 10_000) / 1000)),
    // An idle pool connection is kept at most 30 min, so a server-side restart or failover is picked up.
    max_lifetime: 30 * 60,
    types: { int8: INT8_AS_NUMBER },
    connection: { application_name: opts.applicationName ?? "docket", statement_timeout: Math.max(0, Math.floor(opts.statementTimeoutMs)) },
    onnotice: () => {},
  }) as unknown as PgSql;
}

/**
 * Connect, migrate under the advisory lock, and return the pool.
 * @throws SchemaTooNewError when a newer release migrated the database; the client's error when the
 *   server cannot be reached or refuses the login (callers retry: bot/ops/pg-reach.ts)
 */
export async function openPg(opts: PgOptions): Promise<OpenPg> {
  await migratePg(opts);
  const sql = pgClient(opts);
  try {
    await sql`SELECT 1`;
  } catch (err) {
    await sql.end({ timeout: 1 });
    throw err;
  }
  return { sql, close: (timeoutS = 5) => sql.end({ timeout: timeoutS }) };
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
