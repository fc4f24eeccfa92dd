/**
 * Finished rows already in the table before a run ("history"): docket keeps every job row after
 * expiry (`expired`, row kept, seed 000), and plainjob keeps done jobs for 7 days by default.
 * Lets the benchmark show how claim and intake costs depend on table size, not only on the backlog.
 */
import type { Database } from "bun:sqlite";

/**
 * INSERT `rows` `expired` jobs (reserved_bytes 0) into docket's `file_jobs`, one transaction,
 * spread over 5 000 chats with their own ids so they never collide with benchmark jobs.
 */
export function seedDocketHistory(sqlite: Database, rows: number): void {
  if (rows <= 0) return;
  sqlite.run(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
     INSERT INTO file_jobs (update_id, chat_id, user_id, message_id, source, file_id, file_unique_id,
       declared_name, declared_mime, declared_size, language_code, status, sha256, real_size, reserved_bytes,
       created_at, updated_at, finished_at)
     SELECT i, 900000 + i % 5000, 900000 + i % 5000, i, 'document', 'BQACAgIAAxkBAAIhist' || i, 'AgADhist' || i,
       'old-' || i || '.pdf', 'application/pdf', 1048576, 'ru', 'expired', printf('%064d', i), 1048576, 0,
       '2026-10-01T00:00:00.000Z', '2026-10-02T00:00:00.000Z', '2026-10-01T00:05:00.000Z'
     FROM n`,
    [rows],
  );
  checkpoint(sqlite);
}

/** INSERT `rows` done jobs (status 2) into plainjob's `plainjob_jobs`, one transaction. */
export function seedPlainjobHistory(sqlite: Database, rows: number, type: string): void {
  if (rows <= 0) return;
  sqlite.run(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
     INSERT INTO plainjob_jobs (type, data, status, created_at, next_run_at)
     SELECT ?2, '{"old":' || i || '}', 2, 1759276800000, 1759276800000 FROM n`,
    [rows, type],
  );
  checkpoint(sqlite);
}

/** Move the seeded pages from the WAL into the main file now, so no timed call pays for it. */
function checkpoint(sqlite: Database): void {
  sqlite.run("PRAGMA wal_checkpoint(TRUNCATE)");
}
