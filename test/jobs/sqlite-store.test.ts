/**
 * What only the SQLite JobStore has, on a real file: the database settings (WAL, busy timeout), the
 * seed's columns and unique key at the SQL level, and `get` returning exactly the row drizzle reads
 * (the reference shape: the conformance suites, test/jobs/conformance/, compare every row a hot path
 * returns with `store.get`). Every store behaviour the engine relies on is in those suites, run for
 * both stores (test/jobs/sqlite-conformance.test.ts, pg-conformance.test.ts).
 */
import { eq } from "drizzle-orm";
import { describe, expect, test } from "vitest";
import type { OpenDb } from "../../bot/db/open.ts";
import { fileJobs, type FileJob } from "../../bot/db/schema.ts";
import type { SqliteJobStore } from "../../bot/jobs/sqlite-store.ts";
import { BUDGET as budget, newJob as job, T0, useStore } from "./store-fixtures.ts";

let db: OpenDb;
let store: SqliteJobStore;
useStore("docket-store-", (f) => ({ db, store } = f));

/** The row as drizzle reads it (the reference shape every store method must return). */
const row = (id: number): FileJob | undefined => db.db.select().from(fileJobs).where(eq(fileJobs.id, id)).get();

describe("database", () => {
  test("WAL, busy timeout and the seed's columns", () => {
    expect(db.sqlite.query("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" });
    expect(db.sqlite.query("PRAGMA busy_timeout").get()).toEqual({ timeout: 5000 });
    const cols = (db.sqlite.query("PRAGMA table_info(file_jobs)").all() as { name: string }[]).map((c) => c.name);
    for (const c of ["id", "update_id", "chat_id", "file_id", "file_unique_id", "declared_name", "declared_mime", "declared_size", "status", "local_path", "sha256", "lease_until", "attempts", "result_expires_at"]) {
      expect(cols).toContain(c);
    }
  });
  test("UNIQUE(chat_id, file_unique_id) holds at the SQL level", () => {
    db.sqlite.run("INSERT INTO file_jobs (update_id, chat_id, user_id, message_id, source, file_id, file_unique_id, status) VALUES (1, 1, 1, 1, 'document', 'a', 'u', 'accepted')");
    expect(() => db.sqlite.run("INSERT INTO file_jobs (update_id, chat_id, user_id, message_id, source, file_id, file_unique_id, status) VALUES (2, 1, 1, 2, 'document', 'b', 'u', 'accepted')")).toThrow(/UNIQUE/);
  });
});

describe("get", () => {
  test("the row drizzle reads (every column, its type), undefined for an unknown id", async () => {
    const { job: j } = await store.accept(job(1), T0);
    await store.claimDownload("w", T0, 60_000, budget);
    expect(await store.transition(j.id, "accepted", "fetched", "w", T0, { localPath: `downloads/${j.id}-x`, keepLease: true })).toBe(true);
    expect(await store.get(j.id)).toStrictEqual(row(j.id));
    expect(await store.get(j.id + 100)).toBeUndefined();
  });
});
