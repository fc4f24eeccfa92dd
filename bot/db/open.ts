/**
 * Opens the SQLite database: WAL, busy timeout, foreign keys, and the committed
 * drizzle-kit migrations applied at start (DESIGN.md: "migrations … applied at start").
 */
import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { migrate } from "drizzle-orm/bun-sqlite/migrator";
import * as schema from "./schema.ts";
import { checkSchemaVersion, readJournal } from "./schema-version.ts";

/** The drizzle handle with docket's schema. */
export type DocketDb = BunSQLiteDatabase<typeof schema>;

/** An open database: the raw bun:sqlite handle (for hot paths) and drizzle. */
export interface OpenDb {
  readonly sqlite: Database;
  readonly db: DocketDb;
  /** Close the handle (checkpoints the WAL). */
  close(): void;
}

/** Folder of the committed migrations. */
export const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), "migrations");

/**
 * Open an existing database read-only, without migrating (`docket status`: it only reads, and must
 * never change the schema of a bot from another release). Its `close` closes the handle.
 * @throws when the file does not exist or cannot be read
 */
export function openDbReadOnly(file: string, busyTimeoutMs = 5000): OpenDb {
  const sqlite = new Database(file, { readonly: true, strict: true });
  sqlite.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
  return { sqlite, db: drizzle(sqlite, { schema }), close: () => sqlite.close() };
}

/**
 * Open (creating if needed) the database file and migrate it.
 * @param file path of the SQLite file, e.g. `<DATA_DIR>/db/docket.sqlite`
 * @param busyTimeoutMs how long a writer waits for a lock, ms (default 5000)
 * @throws SchemaTooNewError when a newer release migrated the file (./schema-version.ts); whatever
 *   bun:sqlite throws when the file cannot be opened or migrated
 */
export function openDb(file: string, busyTimeoutMs = 5000): OpenDb {
  mkdirSync(dirname(file), { recursive: true });
  const sqlite = new Database(file, { create: true, strict: true });
  sqlite.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
  sqlite.exec("PRAGMA journal_mode = WAL");
  sqlite.exec("PRAGMA synchronous = NORMAL");
  sqlite.exec("PRAGMA foreign_keys = ON");
  const db = drizzle(sqlite, { schema });
  try {
    checkSchemaVersion(appliedMigrations(sqlite), readJournal(MIGRATIONS_DIR), `SQLite database ${file}`);
    migrate(db, { migrationsFolder: MIGRATIONS_DIR });
  } catch (err) {
    sqlite.close();
    throw err;
  }
  return { sqlite, db, close: () => sqlite.close() };
}

/** `created_at` of every migration drizzle recorded in the file (none before the first start). */
function appliedMigrations(sqlite: Database): number[] {
  const table = sqlite.query("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'").get();
  if (!table) return [];
  return (sqlite.query("SELECT created_at AS at FROM __drizzle_migrations").all() as { at: number | string | null }[]).map((r) => Number(r.at)).filter(Number.isFinite);
}
