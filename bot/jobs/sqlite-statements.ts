/**
 * The SQL of `SqliteJobStore`'s hot paths (accept, intake, both claims, the hand-over, transition, the release,
 * renew, retryLater, fail, get) as bun:sqlite statements prepared once per connection, so a call only binds values
 * (drizzle's query builder rebuilt and re-prepared the SQL on every call: ≈ 200 µs of a ≈ 250 µs
 * INSERT, docs/benchmarks.md "Queue"). Every conditional write keeps the WHERE of seed 000
 * ("UPDATE … WHERE id=? AND status=…", plus the lease owner where the engine holds a lease).
 * Rows come back with drizzle's property names (`"lease_until" AS "leaseUntil"`, derived from
 * bot/db/schema.ts), so they are the same `FileJob` objects drizzle returns.
 */
import type { Database, Statement } from "bun:sqlite";
import { getTableColumns } from "drizzle-orm";
import { fileJobs, type FileJob, type JobState } from "../db/schema.ts";
import { ACTIVE_STATES, ENDED_STATES, poolFor } from "./states.ts";
import type { FinalStatus, TransitionPatch } from "./store.ts";

const COLUMNS = getTableColumns(fileJobs);

/** Every `file_jobs` column as `"snake_name" AS "camelKey"`: a row shaped like drizzle's `FileJob`. */
export const ROW = Object.entries(COLUMNS)
  .map(([key, column]) => `"${column.name}" AS "${key}"`)
  .join(", ");

/** A SQL list of string literals, e.g. `('fetched', 'processing')` (constants of states.ts only). */
const literals = (values: readonly string[]) => `(${values.map((v) => `'${v.replaceAll("'", "''")}'`).join(", ")})`;

/** Claimable at `$now`: no live lease and no pending retry backoff (seed 000: leases; ISO strings compare in time order). */
const CLAIMABLE = "(lease_until IS NULL OR lease_until <= $now) AND (not_before IS NULL OR not_before <= $now)";

/** States the processing pool works on (bot/jobs/states.ts). */
const PROCESS_STATES = ACTIVE_STATES.filter((s) => poolFor(s) === "process");

/** The `file_jobs` columns a transition's `final` (a {@link TransitionPatch.final}) writes. */
type FinalField = "finalText" | "finalMarkup" | "finalOwner" | "finalUntil" | "finalTries" | "finalDoneAt";

/** Columns a transition's patch may write (every `TransitionPatch` key but the two flags and `final`, plus the final-status columns). */
type PatchField = Exclude<keyof TransitionPatch, "keepLease" | "resetAttempts" | "final"> | FinalField;

/**
 * Patch fields in a fixed order (the shape key of a cached statement). Listed as the keys of a
 * `Record<PatchField, …>`, so a field added to `TransitionPatch` fails to compile until it is here.
 */
const PATCH_FIELDS = Object.keys({
  localPath: 1,
  sha256: 1,
  realSize: 1,
  reservedBytes: 1,
  detectedType: 1,
  facts: 1,
  resultExpiresAt: 1,
  finalText: 1,
  finalMarkup: 1,
  finalOwner: 1,
  finalUntil: 1,
  finalTries: 1,
  finalDoneAt: 1,
} satisfies Record<PatchField, 1>) as PatchField[];

/**
 * The final-status columns' values for `final` (bot/jobs/store.ts `FinalStatus`): the text, its keyboard,
 * its holder and until when (ISO), no failed try, not shown yet; all null (and 0 tries) without one.
 */
export function finalColumns(final: FinalStatus | undefined): Record<FinalField, string | number | null> {
  return final
    ? { finalText: final.text, finalMarkup: final.markup, finalOwner: final.owner, finalUntil: new Date(final.until).toISOString(), finalTries: 0, finalDoneAt: null }
    : { finalText: null, finalMarkup: null, finalOwner: null, finalUntil: null, finalTries: 0, finalDoneAt: null };
}

/** `fail`'s SET of the final-status columns, bound from {@link finalColumns} (the same SQL in both stores). */
export const FINAL_SET = "final_text = $finalText, final_markup = $finalMarkup, final_owner = $finalOwner, final_until = $finalUntil, final_tries = $finalTries, final_done_at = $finalDoneAt";

/** Bound values of a statement: named parameters without their `$` prefix. */
export type Params = Record<string, string | number | null>;
/** A statement returning rows of `R` from named parameters. */
type Query<R> = Statement<R, [Params]>;

/** What a transition writes besides the state: which patch fields are present, and the lease/attempt/finish flags. */
export interface TransitionShape {
  /** Patch fields with a defined value (`null` included: it clears the column). */
  readonly fields: readonly PatchField[];
  readonly keepLease: boolean;
  readonly resetAttempts: boolean;
  /** The target state is final: set `finished_at`. */
  readonly final: boolean;
}

/**
 * Prepared statements over one bun:sqlite connection. Named parameters are bound as objects
 * without the `$` (bun:sqlite accepts both forms). Statements live as long as the connection.
 */
export class JobStatements {
  /** INSERT a new `accepted` job unless its key exists (seed 000: idempotent intake); the row, or null on conflict. */
  readonly insertAccepted: Query<FileJob>;
  /**
   * INSERT a new job as `failed`/`too_big` unless its key exists: a declared size over the mode's limit is
   * refused in this one INSERT, so no download loop ever sees it `accepted` (issue 11 item 5).
   */
  readonly insertTooBig: Query<FileJob>;
  /** The job with key (chat_id, file_unique_id, variant). */
  readonly byKey: Query<FileJob>;
  /** Jobs of `$userId` in an active state (USER_MAX_JOBS_IN_FLIGHT). */
  readonly inFlight: Query<{ n: number }>;
  /**
   * Bytes of `$userId`'s jobs created at or after `$since` (real size, else declared; a negative size stored
   * before sizes were validated counts 0), too_big refusals excluded (USER_MAX_BYTES_PER_DAY).
   */
  readonly bytesSince: Query<{ n: number }>;
  /** The job with this id. */
  readonly byId: Query<FileJob>;
  /** Oldest claimable `accepted` job (head of line), id and declared size. */
  readonly downloadHead: Query<{ id: number; declaredSize: number | null }>;
  /** Bytes reserved by every job other than `$id`. */
  readonly reservedExcept: Query<{ n: number }>;
  /** Claim an `accepted` job: lease, owner, attempts + 1, reservation; the row, or null when it moved. */
  readonly claimDownload: Query<FileJob>;
  /** Oldest claimable job of the processing pool, id and state. */
  readonly processHead: Query<{ id: number; status: JobState }>;
  /** Claim a processing-pool job found in `$status`, moving it to `processing`; the row, or null when it moved. */
  readonly claimProcess: Query<FileJob>;
  /** JobStore.handOver: `accepted → processing` by the download's holder with the download's fields and the processing claim. */
  readonly handOver: Query<FileJob>;
  /** Extend the lease of an active job held by `$owner`. */
  readonly renew: Query<unknown>;
  /** Release the holder's lease and set a backoff; the state stays. */
  readonly retryLater: Query<unknown>;
  /** `$from → failed` by the lease holder. */
  readonly failHeld: Query<unknown>;
  /** `$from → failed` without a lease condition (e.g. /cancel, intake refusals). */
  readonly failAny: Query<unknown>;
  /** `reserved_bytes = 0` only while the job is finished (JobStore.releaseReservation: the engine's last write of a job). */
  readonly releaseReservation: Query<unknown>;
  private readonly transitions = new Map<string, Query<unknown>>();

  /** @param sqlite the connection the store writes through (the `$client` of its drizzle handle) */
  constructor(private readonly sqlite: Database) {
    this.insertAccepted = sqlite.prepare(
      `INSERT INTO file_jobs (update_id, chat_id, user_id, message_id, source, file_id, file_unique_id, declared_name, declared_mime, declared_size, language_code, variant, status, created_at, updated_at)
       VALUES ($updateId, $chatId, $userId, $messageId, $source, $fileId, $fileUniqueId, $declaredName, $declaredMime, $declaredSize, $languageCode, $variant, 'accepted', $now, $now)
       ON CONFLICT DO NOTHING RETURNING ${ROW}`,
    );
    this.insertTooBig = sqlite.prepare(
      `INSERT INTO file_jobs (update_id, chat_id, user_id, message_id, source, file_id, file_unique_id, declared_name, declared_mime, declared_size, language_code, variant, status, reason, reason_params, last_error, created_at, updated_at, finished_at)
       VALUES ($updateId, $chatId, $userId, $messageId, $source, $fileId, $fileUniqueId, $declaredName, $declaredMime, $declaredSize, $languageCode, $variant, 'failed', 'too_big', $params, $detail, $now, $now, $now)
       ON CONFLICT DO NOTHING RETURNING ${ROW}`,
    );
    this.byKey = sqlite.prepare(`SELECT ${ROW} FROM file_jobs WHERE chat_id = $chatId AND file_unique_id = $fileUniqueId AND variant = $variant`);
    this.inFlight = sqlite.prepare(`SELECT count(*) AS n FROM file_jobs WHERE user_id = $userId AND status IN ${literals(ACTIVE_STATES)}`);
    // Files refused as too big were never downloaded: they do not count toward bytes per day.
    this.bytesSince = sqlite.prepare(
      "SELECT coalesce(sum(max(coalesce(real_size, declared_size, 0), 0)), 0) AS n FROM file_jobs WHERE user_id = $userId AND created_at >= $since AND (reason IS NULL OR reason != 'too_big')",
    );
    this.byId = sqlite.prepare(`SELECT ${ROW} FROM file_jobs WHERE id = $id`);
    this.downloadHead = sqlite.prepare(`SELECT id, declared_size AS declaredSize FROM file_jobs WHERE status = 'accepted' AND ${CLAIMABLE} ORDER BY id ASC LIMIT 1`);
    this.reservedExcept = sqlite.prepare("SELECT coalesce(sum(reserved_bytes), 0) AS n FROM file_jobs WHERE reserved_bytes > 0 AND id != $id");
    this.claimDownload = sqlite.prepare(
      `UPDATE file_jobs SET lease_owner = $owner, lease_until = $leaseUntil, attempts = attempts + 1, reserved_bytes = $reservedBytes, not_before = NULL, updated_at = $now
       WHERE id = $id AND status = 'accepted' RETURNING ${ROW}`,
    );
    this.processHead = sqlite.prepare(`SELECT id, status FROM file_jobs WHERE status IN ${literals(PROCESS_STATES)} AND ${CLAIMABLE} ORDER BY id ASC LIMIT 1`);
    this.claimProcess = sqlite.prepare(
      `UPDATE file_jobs SET status = 'processing', lease_owner = $owner, lease_until = $leaseUntil, attempts = attempts + 1, not_before = NULL, updated_at = $now
       WHERE id = $id AND status = $status RETURNING ${ROW}`,
    );
    this.handOver = sqlite.prepare(
      `UPDATE file_jobs SET local_path = $localPath, sha256 = $sha256, real_size = $realSize, reserved_bytes = $reservedBytes, status = 'processing',
         attempts = 1, lease_until = $leaseUntil, not_before = NULL, updated_at = $now
       WHERE id = $id AND status = 'accepted' AND lease_owner = $owner RETURNING ${ROW}`,
    );
    this.renew = sqlite.prepare(`UPDATE file_jobs SET lease_until = $leaseUntil WHERE id = $id AND lease_owner = $owner AND status IN ${literals(ACTIVE_STATES)}`);
    this.retryLater = sqlite.prepare(
      "UPDATE file_jobs SET lease_owner = NULL, lease_until = NULL, not_before = $notBefore, last_error = $detail, updated_at = $now WHERE id = $id AND status = $state AND lease_owner = $owner",
    );
    const failSet = `status = 'failed', reason = $reason, reason_params = $params, last_error = $detail, lease_owner = NULL, lease_until = NULL, updated_at = $now, finished_at = $now, ${FINAL_SET}`;
    this.failHeld = sqlite.prepare(`UPDATE file_jobs SET ${failSet} WHERE id = $id AND status = $from AND lease_owner = $owner`);
    this.failAny = sqlite.prepare(`UPDATE file_jobs SET ${failSet} WHERE id = $id AND status = $from`);
    this.releaseReservation = sqlite.prepare(`UPDATE file_jobs SET reserved_bytes = 0 WHERE id = $id AND reserved_bytes > 0 AND status IN ${literals(ENDED_STATES)}`);
  }

  /**
   * The conditional `$from → $to` UPDATE by the lease holder for one patch shape, prepared on first
   * use and cached (at most 2^7 × 2 × 2 × 2 shapes; the engine uses a handful). Parameters: `$id`,
   * `$from`, `$to`, `$owner`, `$now` and one per patch field, named like the field.
   */
  transition(shape: TransitionShape): Query<unknown> {
    const { key, text } = transitionSql(shape);
    let stmt = this.transitions.get(key);
    if (!stmt) {
      stmt = this.sqlite.prepare(text);
      this.transitions.set(key, stmt);
    }
    return stmt;
  }
}

/**
 * The conditional `$from → $to` UPDATE by the lease holder for one patch shape, with `$name`
 * parameters (`$id`, `$from`, `$to`, `$owner`, `$now`, one per patch field), and its cache key; the
 * same SQL in both stores (bot/jobs/pg-store.ts compiles the names to positions).
 */
export function transitionSql(shape: TransitionShape): { key: string; text: string } {
  const set = [
    ...shape.fields.map((f) => `"${COLUMNS[f].name}" = $${f}`),
    "status = $to",
    "updated_at = $now",
    ...(shape.keepLease ? [] : ["lease_owner = NULL", "lease_until = NULL"]),
    ...(shape.resetAttempts ? ["attempts = 0"] : []),
    ...(shape.final ? ["finished_at = $now"] : []),
  ];
  return {
    key: `${shape.fields.join(",")}|${+shape.keepLease}${+shape.resetAttempts}${+shape.final}`,
    text: `UPDATE file_jobs SET ${set.join(", ")} WHERE id = $id AND status = $from AND lease_owner = $owner`,
  };
}

/**
 * The shape and bound values of a transition's patch: fields whose value is `undefined` are left
 * out (the column keeps its value), `null` clears the column — as drizzle's `.set()` did.
 */
export function transitionPatch(patch: TransitionPatch, final: boolean): { shape: TransitionShape; values: Params } {
  const fields: PatchField[] = [];
  const values: Params = {};
  const columns: Partial<Record<PatchField, string | number | null>> = { ...patch, ...(patch.final ? finalColumns(patch.final) : {}) };
  for (const f of PATCH_FIELDS) {
    const v = columns[f];
    if (v === undefined) continue;
    fields.push(f);
    values[f] = v;
  }
  return { shape: { fields, keepLease: Boolean(patch.keepLease), resetAttempts: Boolean(patch.resetAttempts), final }, values };
}
