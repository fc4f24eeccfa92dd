/**
 * What the release in this checkout's schema holds, for the backup suites' expected lines: the
 * tables a migrated database has (as `docket backup verify` counts them) and the migration tags.
 * Derived from the migrations, so a new table or migration does not need every suite edited.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { releaseMigrations } from "../../bot/backup/verify.ts";
import { openDb } from "../../bot/db/open.ts";
import { repoRoot } from "../bundle/helpers";

/** Table names of a freshly migrated database, sorted (SQLite's and drizzle's own left out, as verify does). */
export function schemaTables(): string[] {
  const dir = mkdtempSync(join(tmpdir(), "docket-schema-"));
  try {
    const db = openDb(join(dir, "docket.sqlite"));
    try {
      return db.sqlite
        .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '__drizzle_migrations' ORDER BY name")
        .all()
        .map((r) => r.name);
    } finally {
      db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * verify's "rows backup/live" list for every table: `counts` gives "backup/live" for the tables a
 * test filled; every other table must be empty on both sides ("0/0").
 */
export function rowsLine(counts: Record<string, string>): string {
  const tables = schemaTables();
  for (const t of Object.keys(counts)) if (!tables.includes(t)) throw new Error(`rowsLine: no table ${t} in the schema`);
  return tables.map((t) => `${t} ${counts[t] ?? "0/0"}`).join(", ");
}

/** The newest migration tag of this checkout's release, e.g. `0004_ops_alerts`. */
export const latestMigration = (): string => releaseMigrations(repoRoot).at(-1)!.tag;

/** A tag for one more migration after the newest (the next number, zero-padded), named `name`. */
export const nextMigration = (name: string): string => `${String(releaseMigrations(repoRoot).length).padStart(4, "0")}_${name}`;
