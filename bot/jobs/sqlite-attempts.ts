/**
 * The SQL of a job's history of tries (`job_attempts`, bot/jobs/attempts.ts) for `SqliteJobStore`:
 * statements prepared once per connection. A row is INSERTed inside the transaction of the state
 * change it explains (a retry, a failure, a reclaim, a re-arm), with the job's `attempts` at that time.
 */
import type { Database, Statement } from "bun:sqlite";
import { getTableColumns } from "drizzle-orm";
import { jobAttempts, type JobAttempt } from "../db/schema.ts";
import type { AttemptNote } from "./attempts.ts";
import { iso } from "./lease.ts";

const ROW = Object.entries(getTableColumns(jobAttempts))
  .map(([key, column]) => `"${column.name}" AS "${key}"`)
  .join(", ");

type Params = Record<string, string | number | null>;

/** Prepared statements of `job_attempts` over one bun:sqlite connection. */
export class AttemptStatements {
  private readonly insertStmt: Statement<unknown, [Params]>;
  private readonly byJob: Statement<JobAttempt, [Params]>;

  /** @param sqlite the store's connection */
  constructor(sqlite: Database) {
    this.insertStmt = sqlite.prepare(
      `INSERT INTO job_attempts (job_id, at, step, attempt, outcome, reason, params, detail)
       SELECT id, $at, $step, attempts, $outcome, $reason, $params, $detail FROM file_jobs WHERE id = $id`,
    );
    this.byJob = sqlite.prepare(`SELECT ${ROW} FROM job_attempts WHERE job_id = $id ORDER BY id ASC`);
  }

  /** Record `note` for job `id` (its try number is the job's `attempts` now). Call inside the state change's transaction. */
  record(id: number, note: AttemptNote, now: number): void {
    this.insertStmt.run({
      id,
      at: iso(now),
      step: note.step,
      outcome: note.outcome,
      reason: note.reason,
      params: note.params && Object.keys(note.params).length > 0 ? JSON.stringify(note.params) : null,
      detail: note.detail,
    });
  }

  /** The job's history, oldest first. */
  list(id: number): JobAttempt[] {
    return this.byJob.all({ id });
  }
}
