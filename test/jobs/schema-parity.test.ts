/**
 * The PostgreSQL schema mirrors the SQLite one (issue 14 item 1: "same schema and table names";
 * CONTRACTS.md §5): every table of bot/db/schema.ts exists in bot/db/pg-schema.ts with the same
 * columns (names, NOT NULL, defaults present), primary and foreign keys and index names (but for the
 * partial indexes PostgreSQL uses instead of some of SQLite's, listed in PG_INDEX_DIFFERENCES). A table or
 * column added to one schema only fails here, naming it. Both migration folders are committed and
 * generated from their schema (drizzle-kit reports nothing to generate).
 */
import { getTableName, is } from "drizzle-orm";
import { getTableConfig as pgConfig, PgTable } from "drizzle-orm/pg-core";
import { getTableConfig as liteConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, test } from "vitest";
import * as pg from "../../bot/db/pg-schema.ts";
import * as lite from "../../bot/db/schema.ts";

const root = resolve(import.meta.dirname, "../..");
const liteTables = (Object.values(lite) as unknown[]).filter((t): t is SQLiteTable => is(t, SQLiteTable));
const pgTables = new Map((Object.values(pg) as unknown[]).filter((t): t is PgTable => is(t, PgTable)).map((t) => [getTableName(t), t]));

/** A table's shape in dialect-free terms. */
function shape(cfg: { columns: { name: string; notNull: boolean; hasDefault: boolean; primary: boolean }[]; indexes: { config: { name: string; unique: boolean } }[]; primaryKeys: { columns: { name: string }[] }[]; foreignKeys: { reference(): { columns: { name: string }[]; foreignTable: unknown; foreignColumns: { name: string }[] } }[] }) {
  return {
    columns: Object.fromEntries(cfg.columns.map((c) => [c.name, { notNull: c.notNull, hasDefault: c.hasDefault || c.primary, primary: c.primary }])),
    indexes: Object.fromEntries(cfg.indexes.map((i) => [i.config.name, i.config.unique])),
    primaryKey: cfg.primaryKeys.map((k) => k.columns.map((c) => c.name)),
    foreignKeys: cfg.foreignKeys.map((f) => {
      const r = f.reference();
      return { columns: r.columns.map((c) => c.name), table: getTableName(r.foreignTable as never), foreign: r.foreignColumns.map((c) => c.name) };
    }),
  };
}

describe("the PostgreSQL schema mirrors the SQLite schema", () => {
  test("every SQLite table exists in PostgreSQL; PostgreSQL-only are only the shared outbox rate tables", () => {
    const only: readonly string[] = pg.PG_ONLY_TABLES;
    expect([...pgTables.keys()].filter((n) => !only.includes(n)).sort()).toEqual(liteTables.map((t) => getTableName(t)).sort());
    expect(only.filter((n) => !pgTables.has(n))).toEqual([]);
  });
  for (const t of liteTables) {
    test(`${getTableName(t)}: columns, keys and indexes`, () => {
      const p = pgTables.get(getTableName(t));
      expect(p, `table ${getTableName(t)} is missing from bot/db/pg-schema.ts`).toBeDefined();
      // PostgreSQL's partial indexes replace some of SQLite's (bot/db/pg-schema.ts PG_INDEX_DIFFERENCES): exactly those.
      const diff = pg.PG_INDEX_DIFFERENCES[getTableName(t)] ?? { sqliteOnly: [], pgOnly: [] };
      const lite = shape(liteConfig(t) as never);
      const expected = { ...lite, indexes: Object.fromEntries([...Object.entries(lite.indexes).filter(([n]) => !diff.sqliteOnly.includes(n)), ...diff.pgOnly.map((n) => [n, false] as const)]) };
      expect(shape(pgConfig(p!) as never)).toEqual(expected);
      for (const n of diff.sqliteOnly) expect(Object.keys(lite.indexes), `${n} is listed as SQLite-only but SQLite has no such index`).toContain(n);
    });
  }
  test("both migration folders are up to date with their schema (drizzle-kit generate finds nothing to write)", () => {
    for (const [dialect, schema, out] of [["sqlite", "bot/db/schema.ts", "bot/db/migrations"], ["postgresql", "bot/db/pg-schema.ts", "bot/db/pg-migrations"]] as const) {
      const dir = mkdtempSync(join(tmpdir(), "docket-gen-"));
      try {
        cpSync(join(root, out), join(dir, "out"), { recursive: true });
        const config = join(dir, "drizzle.config.ts");
        // drizzle-kit wants `out` relative to its working directory (and exits 0 on errors: stderr is checked).
        writeFileSync(config, `export default ${JSON.stringify({ dialect, schema: join(root, schema), out: "./out" })};\n`);
        const r = Bun.spawnSync([join(root, "node_modules", ".bin", "drizzle-kit"), "generate", "--config", config], { cwd: dir, stdout: "pipe", stderr: "pipe" });
        expect([r.exitCode, r.stderr.toString()], `${out}: drizzle-kit generate`).toEqual([0, ""]);
        const added = readdirSync(join(dir, "out")).filter((f) => f.endsWith(".sql")).length - readdirSync(join(root, out)).filter((f) => f.endsWith(".sql")).length;
        expect(added, `${schema} has changes without a migration in ${out}: run bun run db:generate${dialect === "sqlite" ? "" : ":pg"}`).toBe(0);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });
});
