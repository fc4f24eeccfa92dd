/**
 * Moving up (issue 14 item 7): copy every table of an existing SQLite database into an empty,
 * migrated PostgreSQL database — jobs, settings, results, replies and every other table of
 * bot/db/schema.ts (found from the schema, so a table added later is copied too) — in one PostgreSQL
 * transaction, then verify the row count of each table on both sides. Parents before children
 * (foreign keys); identity sequences set past the copied ids, so new rows continue the numbering.
 * The SQLite file is only read, inside one read transaction (a consistent snapshot).
 */
import type { Database } from "bun:sqlite";
import { getTableName, is } from "drizzle-orm";
import { getTableConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { PgSql } from "./pg-open.ts";
import * as lite from "./schema.ts";

/** One table's copy. */
export interface TableCopy {
  readonly table: string;
  /** Rows in the SQLite file. */
  readonly source: number;
  /** Rows in PostgreSQL after the copy. */
  readonly target: number;
}

/** Thrown when the target is not empty or a count differs after the copy (nothing is committed). */
export class CopyRefused extends Error {
  override name = "CopyRefused";
}

/** Rows per INSERT. */
const BATCH = 500;

/** The SQLite schema's tables, parents before children (a table after every table it references). */
export function tablesInOrder(): SQLiteTable[] {
  const tables = (Object.values(lite) as unknown[]).filter((t): t is SQLiteTable => is(t, SQLiteTable));
  const byName = new Map(tables.map((t) => [getTableName(t), t]));
  const done = new Set<string>();
  const out: SQLiteTable[] = [];
  const visit = (t: SQLiteTable, path: string[]) => {
    const name = getTableName(t);
    if (done.has(name)) return;
    if (path.includes(name)) throw new Error(`foreign keys form a cycle: ${[...path, name].join(" → ")}`);
    for (const fk of getTableConfig(t).foreignKeys) {
      const parent = getTableName(fk.reference().foreignTable as never);
      const p = byName.get(parent);
      if (p && parent !== name) visit(p, [...path, name]);
    }
    done.add(name);
    out.push(t);
  };
  for (const t of tables) visit(t, []);
  return out;
}

/**
 * Copy `sqlite` into `pg` (both migrated to this release's schema).
 * @returns each table's row counts on both sides (equal: verified before commit)
 * @throws CopyRefused when a PostgreSQL table already has rows, or a count differs; the client's error otherwise
 */
export async function copySqliteToPg(sqlite: Database, pg: PgSql): Promise<TableCopy[]> {
  const tables = tablesInOrder();
  const read = sqlite.transaction(() =>
    tables.map((t) => {
      const name = getTableName(t);
      const columns = getTableConfig(t).columns.map((c) => c.name);
      const rows = sqlite.query(`SELECT ${columns.map((c) => `"${c}"`).join(", ")} FROM "${name}"`).all() as Record<string, unknown>[];
      return { name, columns, rows };
    }),
  );
  // A read transaction: every table from the same snapshot.
  const snapshot = read.deferred();
  return (await pg.begin(async (tx) => {
    const identities = new Map(
      (await tx.unsafe<{ t: string; c: string }[]>(`SELECT table_name AS t, column_name AS c FROM information_schema.columns WHERE table_schema = current_schema() AND is_identity = 'YES'`)).map((r) => [r.t, r.c]),
    );
    for (const { name } of snapshot) {
      const [r] = await tx.unsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM "${name}"`);
      if ((r?.n ?? 0) > 0) throw new CopyRefused(`the PostgreSQL table ${name} already has ${r!.n} row(s): migrate into an empty database (a new one, or drop docket's tables first)`);
    }
    const out: TableCopy[] = [];
    for (const { name, columns, rows } of snapshot) {
      const identity = identities.get(name);
      for (let i = 0; i < rows.length; i += BATCH) {
        const batch = rows.slice(i, i + BATCH);
        const values: unknown[] = [];
        const tuples = batch.map((row) => `(${columns.map((c) => (values.push(row[c] ?? null), `$${values.length}`)).join(", ")})`);
        await tx.unsafe(`INSERT INTO "${name}" (${columns.map((c) => `"${c}"`).join(", ")}) OVERRIDING SYSTEM VALUE VALUES ${tuples.join(", ")}`, values as never[]);
      }
      if (identity) {
        // New rows continue after the copied ids (an identity column is a sequence of its own).
        await tx.unsafe(`SELECT setval(pg_get_serial_sequence('"${name}"', '${identity}'), coalesce((SELECT max("${identity}") FROM "${name}"), 0) + 1, false)`);
      }
      const [r] = await tx.unsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM "${name}"`);
      const target = r?.n ?? 0;
      if (target !== rows.length) throw new CopyRefused(`${name}: ${rows.length} row(s) in SQLite but ${target} in PostgreSQL after the copy; nothing was committed`);
      out.push({ table: name, source: rows.length, target });
    }
    return out;
  })) as TableCopy[];
}
