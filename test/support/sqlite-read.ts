/** Read-only queries on a bot's SQLite database file, as an operator would read it (kill tests). */
import { Database } from "bun:sqlite";

/** Rows of `sql` with `args` on `dbFile`, opened read-only for this one query. */
export function query<T>(dbFile: string, sql: string, ...args: Array<string | number>): T[] {
  const db = new Database(dbFile, { readonly: true });
  try {
    return db.query(sql).all(...args) as T[];
  } finally {
    db.close();
  }
}
