/**
 * The SQL of `PgJobStore` (./pg-store.ts). Statements are written with named parameters (`$owner`)
 * and compiled once to PostgreSQL's positional form (`$1`); postgres.js prepares each distinct text
 * once per connection, so a call only binds values. Every conditional write keeps the WHERE of seed
 * 000 ("UPDATE … WHERE id=? AND status=…", plus the lease owner where the engine holds a lease), the
 * same conditions as ./sqlite-statements.ts. Rows come back with drizzle's property names, so they
 * are the same `FileJob` objects the SQLite store returns.
 */
import { getTableColumns } from "drizzle-orm";
import { chatReplies, fileJobs, jobAttempts } from "../db/pg-schema.ts";
import { ACTIVE_STATES, ENDED_STATES, poolFor } from "./states.ts";
import { FINAL_SET } from "./sqlite-statements.ts";
import { finalSql } from "./final-sql.ts";
import { NOTE_REPLY_MESSAGE } from "./sqlite-replies.ts";

/** Every `file_jobs` column as `"snake_name" AS "camelKey"` (a `FileJob` row). */
export const ROW = Object.entries(getTableColumns(fileJobs))
  .map(([key, column]) => `"${column.name}" AS "${key}"`)
  .join(", ");

/** Every `chat_replies` column as `"snake_name" AS "camelKey"` (a `ChatReply` row). */
export const REPLY_ROW = Object.entries(getTableColumns(chatReplies))
  .map(([key, column]) => `"${column.name}" AS "${key}"`)
  .join(", ");

/** `ROW` with every column qualified by `alias` (for UPDATE … FROM … RETURNING). */
export const rowOf = (alias: string): string =>
  Object.entries(getTableColumns(fileJobs))
    .map(([key, column]) => `${alias}."${column.name}" AS "${key}"`)
    .join(", ");

/** A SQL list of string literals, e.g. `('fetched', 'processing')` (constants of states.ts only). */
export const literals = (values: readonly string[]): string => `(${values.map((v) => `'${v.replaceAll("'", "''")}'`).join(", ")})`;

/** The active states as a SQL list. */
export const ACTIVE = literals(ACTIVE_STATES);

/** States the processing pool works on (bot/jobs/states.ts). */
export const PROCESS_STATES = literals(ACTIVE_STATES.filter((s) => poolFor(s) === "process"));

/** Claimable at `$now`: no live lease and no pending retry backoff (seed 000: leases; ISO text compares in time order). */
export const CLAIMABLE = "(lease_until IS NULL OR lease_until <= $now) AND (not_before IS NULL OR not_before <= $now)";

/**
 * `ids` as a PostgreSQL array literal (`{3,7}`) for a `$name::bigint[]` parameter (JobStore's `release`).
 * @throws RangeError when an id is not a safe positive integer
 */
export function idArray(ids: readonly number[]): string {
  for (const id of ids) if (!Number.isSafeInteger(id) || id <= 0) throw new RangeError(`not a job id: ${id}`);
  return `{${ids.join(",")}}`;
}

/** Bound values by name. */
export type Params = Record<string, string | number | null>;

/** A statement compiled from named to positional parameters. */
export interface Compiled {
  readonly text: string;
  /** Parameter names in `$1…$n` order. */
  readonly names: readonly string[];
}

/**
 * Compile `$name` parameters to `$1…$n` (each name one position, reused where it repeats).
 * Names are `[A-Za-z_][A-Za-z0-9_]*`; `$1`-style text is left alone.
 */
export function compile(text: string): Compiled {
  const names: string[] = [];
  const out = text.replace(/\$([A-Za-z_][A-Za-z0-9_]*)/g, (_, name: string) => {
    let i = names.indexOf(name);
    if (i < 0) i = names.push(name) - 1;
    return `$${i + 1}`;
  });
  return { text: out, names };
}

/**
 * The positional values of `c` from `values`.
 * @throws Error naming a parameter the statement needs and `values` lacks
 */
export function bind(c: Compiled, values: Params): (string | number | null)[] {
  return c.names.map((n) => {
    const v = values[n];
    if (v === undefined) throw new Error(`statement parameter $${n} is missing`);
    return v;
  });
}

/** The hand-over UPDATE (JobStore.handOver), alone or after the releases it carries. */
const HAND_OVER = `UPDATE file_jobs SET local_path = $localPath, sha256 = $sha256, real_size = $realSize, reserved_bytes = $reservedBytes, status = 'processing',
       attempts = 1, lease_until = $leaseUntil, not_before = NULL, updated_at = $now
     WHERE id = $id AND status = 'accepted' AND lease_owner = $owner RETURNING ${ROW}`;

/** The statements of the store, compiled once per process. */
export const Q = {
  insertAccepted: compile(
    `INSERT INTO file_jobs (update_id, chat_id, user_id, message_id, source, file_id, file_unique_id, declared_name, declared_mime, declared_size, language_code, variant, status, created_at, updated_at)
     VALUES ($updateId, $chatId, $userId, $messageId, $source, $fileId, $fileUniqueId, $declaredName, $declaredMime, $declaredSize, $languageCode, $variant, 'accepted', $now, $now)
     ON CONFLICT DO NOTHING RETURNING ${ROW}`,
  ),
  insertTooBig: compile(
    `INSERT INTO file_jobs (update_id, chat_id, user_id, message_id, source, file_id, file_unique_id, declared_name, declared_mime, declared_size, language_code, variant, status, reason, reason_params, last_error, created_at, updated_at, finished_at)
     VALUES ($updateId, $chatId, $userId, $messageId, $source, $fileId, $fileUniqueId, $declaredName, $declaredMime, $declaredSize, $languageCode, $variant, 'failed', 'too_big', $params, $detail, $now, $now, $now)
     ON CONFLICT DO NOTHING RETURNING ${ROW}`,
  ),
  byKey: compile(`SELECT ${ROW} FROM file_jobs WHERE chat_id = $chatId AND file_unique_id = $fileUniqueId AND variant = $variant`),
  byId: compile(`SELECT ${ROW} FROM file_jobs WHERE id = $id`),
  /** The row, locked until the transaction ends (a re-arm reads, records and resets it). */
  byIdForUpdate: compile(`SELECT ${ROW} FROM file_jobs WHERE id = $id FOR UPDATE`),
  /**
   * In-flight jobs and bytes of the last day of one user (USER_MAX_JOBS_IN_FLIGHT, USER_MAX_BYTES_PER_DAY):
   * real size, else declared, a negative stored size counted 0; too_big refusals were never downloaded.
   */
  userUsage: compile(
    `SELECT (SELECT count(*) FROM file_jobs WHERE user_id = $userId AND status IN ${ACTIVE})::bigint AS "inFlight",
            (SELECT coalesce(sum(greatest(coalesce(real_size, declared_size, 0), 0)), 0) FROM file_jobs WHERE user_id = $userId AND created_at >= $since AND (reason IS NULL OR reason <> 'too_big'))::bigint AS "bytesToday"`,
  ),
  /** A transaction lock of one key (held until COMMIT): `$cls` a KEYED_LOCK_CLASS, `$key` an int4. */
  xactLock: compile("SELECT pg_advisory_xact_lock($cls::int, $key::int)"),
  /**
   * The download claim in one round trip: `docket_claim_download` (pg migrations 0004, 0006, 0009, 0010) takes the budget
   * lock, then claims as its own statement (its snapshot sees every claim committed before the lock was
   * granted): the oldest claimable `accepted` job not locked by another claim (FOR UPDATE SKIP LOCKED),
   * its reservation by bot/jobs/budget.ts `reservationFor` (sized: the same float8 arithmetic in SQL;
   * unsized: `$unsized`, computed by reservationFor itself), claimed only if it
   * `fits` next to what every other job reserves (seed 000: budget in bytes; head of line waits). No
   * row: nothing claimable, or the head does not fit. The lock is held only while the server runs it.
   */
  claimDownload: compile(
    `SELECT ${ROW} FROM docket_claim_download($cls::int, $owner, $leaseUntil, $now, $total::float8, $multiplier::float8, $unsized::float8, $floor::float8, $release::bigint[])`,
  ),
  /**
   * The processing pool's claim in one statement: the oldest claimable fetched/processing job (partial
   * index file_jobs_processable), skipping rows another claim holds, moved to `processing` by the claim;
   * `found` is the state the head was read in.
   */
  claimProcess: compile(
    `UPDATE file_jobs f SET status = 'processing', lease_owner = $owner, lease_until = $leaseUntil, attempts = f.attempts + 1, not_before = NULL, updated_at = $now
     FROM (SELECT id, status FROM file_jobs WHERE status IN ${PROCESS_STATES} AND ${CLAIMABLE} ORDER BY id ASC LIMIT 1 FOR UPDATE SKIP LOCKED) head
     WHERE f.id = head.id RETURNING ${rowOf("f")}, head.status AS "found"`,
  ),
  /** JobStore.handOver: `accepted → processing` by the download's holder, the download's fields and the processing claim in one write. */
  handOver: compile(HAND_OVER),
  /**
   * JobStore.handOver carrying releases: the same write after a CTE that releases `$release`'s
   * reservations as releaseReservation does (other rows: finished jobs, never the one handed over).
   */
  handOverReleasing: compile(
    `WITH released AS (UPDATE file_jobs SET reserved_bytes = 0 WHERE id = ANY($release::bigint[]) AND reserved_bytes > 0 AND status IN ${literals(ENDED_STATES)} RETURNING id)
     ${HAND_OVER}`,
  ),
  renew: compile(`UPDATE file_jobs SET lease_until = $leaseUntil WHERE id = $id AND lease_owner = $owner AND status IN ${ACTIVE}`),
  /** A source fetched again in place (JobStore.replaceSource): path, size, SHA-256; state and lease kept. */
  replaceSource: compile(
    "UPDATE file_jobs SET local_path = $localPath, sha256 = $sha256, real_size = $realSize, updated_at = $now WHERE id = $id AND status = $state AND lease_owner = $owner",
  ),
  retryLater: compile(
    "UPDATE file_jobs SET lease_owner = NULL, lease_until = NULL, not_before = $notBefore, last_error = $detail, updated_at = $now WHERE id = $id AND status = $state AND lease_owner = $owner",
  ),
  failHeld: compile(
    `UPDATE file_jobs SET status = 'failed', reason = $reason, reason_params = $params, last_error = $detail, lease_owner = NULL, lease_until = NULL, updated_at = $now, finished_at = $now, ${FINAL_SET} WHERE id = $id AND status = $from AND lease_owner = $owner`,
  ),
  failAny: compile(
    `UPDATE file_jobs SET status = 'failed', reason = $reason, reason_params = $params, last_error = $detail, lease_owner = NULL, lease_until = NULL, updated_at = $now, finished_at = $now, ${FINAL_SET} WHERE id = $id AND status = $from`,
  ),
  expire: compile("UPDATE file_jobs SET status = 'expired', updated_at = $now, reserved_bytes = 0 WHERE id = $id AND status = $from"),
  rearm: compile(
    `UPDATE file_jobs SET file_id = $fileId, update_id = $updateId, message_id = $messageId, language_code = $languageCode, status = 'accepted', attempts = 0,
       lease_owner = NULL, lease_until = NULL, not_before = NULL, reason = NULL, reason_params = NULL, last_error = NULL, local_path = NULL, sha256 = NULL,
       real_size = NULL, facts = NULL, detected_type = NULL, result_expires_at = NULL, finished_at = NULL, status_message_id = NULL, reserved_bytes = 0, updated_at = $now,
       final_text = NULL, final_markup = NULL, final_owner = NULL, final_until = NULL, final_tries = 0, final_done_at = NULL
     WHERE id = $id AND status = $from`,
  ),
  deleteResults: compile("DELETE FROM job_results WHERE job_id = $id"),
  /** JobStore.releaseReservation: only while the job is finished (a re-armed, claimed job keeps its new reservation). */
  releaseReservation: compile(`UPDATE file_jobs SET reserved_bytes = 0 WHERE id = $id AND reserved_bytes > 0 AND status IN ${literals(ENDED_STATES)}`),
  /** An album grew by a part: its reservation size and its quiet interval (intakeAlbumPart). */
  albumGrew: compile(`UPDATE file_jobs SET declared_size = $declaredSize, not_before = $notBefore, updated_at = $now WHERE id = $id RETURNING ${ROW}`),
  /** A new album waits a quiet interval for its other parts (intakeAlbumPart). */
  /** How many parts of job `$id` are still `accepted` (to download). */
  partsAccepted: compile("SELECT count(*)::int AS n FROM job_parts WHERE job_id = $id AND status = 'accepted'"),
  /** Bytes reserved by every job other than `$id`. */
  reservedExcept: compile("SELECT coalesce(sum(reserved_bytes), 0)::float8 AS n FROM file_jobs WHERE reserved_bytes > 0 AND id <> $id"),
  /** Set job `$id`'s reservation (the caller holds the budget lock and checked the fit). */
  setReserved: compile("UPDATE file_jobs SET reserved_bytes = $bytes WHERE id = $id"),
  /** A download gives its job back to wait for the budget: lease released, the claim's attempt returned, `$held` kept reserved. */
  yieldDownload: compile("UPDATE file_jobs SET lease_owner = NULL, lease_until = NULL, attempts = greatest(attempts - 1, 0), reserved_bytes = $held WHERE id = $id"),
  albumQuiet: compile(`UPDATE file_jobs SET not_before = $notBefore WHERE id = $id RETURNING ${ROW}`),
} as const;

/** Every `job_attempts` column as `"snake_name" AS "camelKey"` (a `JobAttempt` row). */
export const ATTEMPT_ROW = Object.entries(getTableColumns(jobAttempts))
  .map(([key, column]) => `"${column.name}" AS "${key}"`)
  .join(", ");

/**
 * A job's history (`job_attempts`; CONTRACTS.md §9), as ./sqlite-attempts.ts: `attempt` is the job's
 * `attempts` when the row is written; every row goes into the transaction of the change it explains.
 */
export const H = {
  insert: compile(
    `INSERT INTO job_attempts (job_id, at, step, attempt, outcome, reason, params, detail)
     SELECT id, $at, $step, attempts, $outcome, $reason, $params, $detail FROM file_jobs WHERE id = $id`,
  ),
  byJob: compile(`SELECT ${ATTEMPT_ROW} FROM job_attempts WHERE job_id = $id ORDER BY id ASC`),
} as const;

/** The statements of intake's transactional outbox (`chat_replies`; issue 11 item 3), as ./sqlite-replies.ts. */
export const R = {
  noteMessage: compile(NOTE_REPLY_MESSAGE),
  insert: compile(
    `INSERT INTO chat_replies (update_id, chat_id, user_id, reply_to, job_id, kind, text, created_at)
     VALUES ($updateId, $chatId, $userId, $replyTo, $jobId, $kind, $text, $now)
     ON CONFLICT (update_id) DO NOTHING RETURNING ${REPLY_ROW}`,
  ),
  refusedSince: compile("SELECT count(*)::bigint AS n FROM chat_replies WHERE user_id = $userId AND kind = 'refused' AND created_at >= $since"),
  pending: compile(
    `SELECT ${REPLY_ROW} FROM chat_replies WHERE sent_at IS NULL AND gave_up_at IS NULL AND id > $afterId AND (not_before IS NULL OR not_before <= $now) ORDER BY id ASC LIMIT $limit`,
  ),
  markSent: compile('UPDATE chat_replies SET sent_at = $now, message_id = $messageId WHERE id = $id AND sent_at IS NULL RETURNING job_id AS "jobId", kind'),
  /** Only while the job has no status message yet: a re-armed job's new reply is the one that counts. */
  statusMessage: compile(`UPDATE file_jobs SET status_message_id = $messageId WHERE id = $jobId AND status_message_id IS NULL`),
  retryLater: compile("UPDATE chat_replies SET tries = tries + 1, not_before = $notBefore, last_error = $detail WHERE id = $id AND sent_at IS NULL"),
  giveUp: compile("UPDATE chat_replies SET tries = tries + 1, gave_up_at = $now, last_error = $detail WHERE id = $id AND sent_at IS NULL"),
  prune: compile("DELETE FROM chat_replies WHERE created_at < $before AND (sent_at IS NOT NULL OR gave_up_at IS NOT NULL)"),
} as const;

/** The final-status statements (./final-sql.ts), compiled. */
export const F = (() => {
  const q = finalSql(ROW);
  return {
    pending: compile(q.pending),
    claim: compile(q.claim),
    renew: compile(q.renew),
    finish: compile(q.finish),
    retryLater: compile(q.retryLater),
    reclaimHost: compile(q.reclaimHost),
  };
})();
