/**
 * PostgreSQL job stores for the suites, on a server from ./pg-server.ts. A factory migrates one
 * database per test file with the product's own `openPg` (the committed migrations under its
 * advisory lock) and empties it before each test (`TRUNCATE … RESTART IDENTITY` of every table of
 * bot/db/pg-schema.ts), so a test starts from an empty, migrated schema with ids from 1 in
 * milliseconds; a new database per test would cost a second or more (CREATE DATABASE copies and
 * logs the whole template).
 */
import { getTableName, is } from "drizzle-orm";
import { PgTable } from "drizzle-orm/pg-core";
import { openPg, type OpenPg } from "../../bot/db/pg-open.ts";
import * as pgSchema from "../../bot/db/pg-schema.ts";
import { PgJobStore } from "../../bot/jobs/pg-store.ts";
import type { StoreFactory } from "../jobs/conformance/store-factory.ts";
import type { PgServer } from "./pg-server.ts";

/** Pool and timeout of the stores the suites make. */
export const TEST_PG_OPTIONS = { poolMax: 8, statementTimeoutMs: 10_000 } as const;

/** Every table of the PostgreSQL schema, quoted, for TRUNCATE. */
export const PG_TABLES: readonly string[] = (Object.values(pgSchema) as unknown[])
  .filter((t): t is PgTable => is(t, PgTable))
  .map((t) => `"${getTableName(t)}"`);

/** A new database on `server`, migrated by `openPg`; its URL. */
export async function freshPgDatabase(server: PgServer, prefix = "t"): Promise<string> {
  const url = server.url(await server.createDatabase(prefix));
  const db = await openPg({ url, ...TEST_PG_OPTIONS });
  await db.close(1);
  return url;
}

/** Empty every docket table of the database behind `db` (ids restart at 1). */
export async function truncateAll(db: OpenPg): Promise<void> {
  await db.sql.unsafe(`TRUNCATE ${PG_TABLES.join(", ")} RESTART IDENTITY CASCADE`);
}

/**
 * A {@link StoreFactory} of PostgreSQL stores on the server `server()` returns (read at the first
 * test): one migrated database and two pools for the file, emptied before every test.
 */
export function pgStoreFactory(server: () => PgServer): StoreFactory & { url(): string } {
  let shared: Promise<{ url: string; db: OpenPg; other: OpenPg }> | null = null;
  let url = "";
  const factory = async () => {
    shared ??= (async () => {
      url = await freshPgDatabase(server());
      return { url, db: await openPg({ url, ...TEST_PG_OPTIONS }), other: await openPg({ url, ...TEST_PG_OPTIONS }) };
    })();
    const { db, other } = await shared;
    await truncateAll(db);
    return { store: new PgJobStore(db), twin: async () => new PgJobStore(other), close: () => {} };
  };
  return Object.assign(factory, { url: () => url });
}
