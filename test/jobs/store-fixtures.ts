/** Shared inputs of the SQLite JobStore suites: a fixed clock, intake's record of a test document, a fresh store per test. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { openDb, type OpenDb } from "../../bot/db/open.ts";
import { SqliteJobStore } from "../../bot/jobs/sqlite-store.ts";
import type { NewJob } from "../../bot/jobs/store.ts";

/** The suites' "now": 2026-11-30T10:00:00.000Z, epoch ms. */
export const T0 = Date.parse("2026-11-30T10:00:00.000Z");
/** One MiB, bytes. */
export const MB = 1 << 20;
/** The claim byte budget of the suites (bytes): 10 MiB in flight, ×2 per job, 20 MiB mode limit (cloud getFile). */
export const BUDGET = { total: 10 * MB, multiplier: 2, modeLimit: 20 * MB };

/**
 * The `n`-th document of a suite as intake records it (seed 000: "Что записать при приёме"):
 * chat and user 42, `file_unique_id` `U<n>`, declared 1 MiB PDF; `over` replaces fields.
 */
export const newJob = (n: number, over: Partial<NewJob> = {}): NewJob => ({
  updateId: 100 + n,
  chatId: 42,
  userId: 42,
  messageId: n,
  source: "document",
  fileId: `F${n}`,
  fileUniqueId: `U${n}`,
  declaredName: `f${n}.pdf`,
  declaredMime: "application/pdf",
  declaredSize: MB,
  languageCode: "en",
  ...over,
});

/** What {@link useStore} hands each test: its temp folder, the open database at `<dir>/db/docket.sqlite`, and the store on it. */
export interface StoreFixture {
  readonly dir: string;
  readonly db: OpenDb;
  readonly store: SqliteJobStore;
}

/**
 * A fresh SQLite JobStore on a real file for every test: `beforeEach` makes a temp folder (`prefix` + random),
 * opens the database and hands the fixture to `set`; `afterEach` closes it and deletes the folder.
 */
export function useStore(prefix: string, set: (f: StoreFixture) => void): void {
  let f: StoreFixture | undefined;
  beforeEach(() => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    const db = openDb(join(dir, "db", "docket.sqlite"));
    f = { dir, db, store: new SqliteJobStore(db.db) };
    set(f);
  });
  afterEach(() => {
    f?.db.close();
    if (f) rmSync(f.dir, { recursive: true, force: true });
  });
}
