/**
 * The SQL of a job's final status message (bot/status/finals.ts), the same text in both stores
 * (`$name` parameters; ./pg-store.ts compiles them to positions). The record is written with the job's
 * final state in one UPDATE (`transition`'s `final`, `fail`'s `FINAL_SET`, ./sqlite-statements.ts); these
 * statements take it, keep it, and close it. A pending one is held by one process at a time (`final_owner`
 * until `final_until`), like a job's lease (issue 14 item 5: status messages follow the job's lease): a
 * process that dies leaves it to this host's next start (`reclaimHost`) or, once `final_until` passed, to
 * any process. Times are ISO strings (they compare in time order).
 */
import { OWNER_SEPARATOR } from "./owner.ts";

/** A final status still to show. */
export const FINAL_PENDING = "final_text IS NOT NULL AND final_done_at IS NULL";

/** Nobody holds it, or its holder's time ran out (a retry's backoff is `final_until` with no holder). */
const FREE = "(final_until IS NULL OR final_until <= $now)";

/** The statements over `row`, the store's `"column" AS "key"` list of `file_jobs` (a `FileJob`). */
export function finalSql(row: string) {
  return {
    /** `$now`, `$limit`: pending and free, oldest first. */
    pending: `SELECT ${row} FROM file_jobs WHERE ${FINAL_PENDING} AND ${FREE} ORDER BY id ASC LIMIT $limit`,
    /** `$id`, `$owner`, `$now`, `$until`: take it while free or already `$owner`'s; the row. */
    claim: `UPDATE file_jobs SET final_owner = $owner, final_until = $until WHERE id = $id AND ${FINAL_PENDING} AND (final_owner = $owner OR ${FREE}) RETURNING ${row}`,
    /** `$owner`, `$until`: every pending one `$owner` holds. */
    renew: `UPDATE file_jobs SET final_until = $until WHERE final_owner = $owner AND ${FINAL_PENDING}`,
    /** `$id`, `$now`: shown (or given up). */
    finish: `UPDATE file_jobs SET final_done_at = $now, final_owner = NULL, final_until = NULL WHERE id = $id AND ${FINAL_PENDING}`,
    /** `$id`, `$owner`, `$notBefore`: a failed try, by its holder. */
    retryLater: `UPDATE file_jobs SET final_owner = NULL, final_until = $notBefore, final_tries = final_tries + 1 WHERE id = $id AND final_owner = $owner AND ${FINAL_PENDING}`,
    /** `$self`, `$prefix` (`<host>/`), `$prefixLength`: held by this host's earlier processes (substr: a host id may contain `_`). */
    reclaimHost: `UPDATE file_jobs SET final_owner = NULL, final_until = NULL WHERE ${FINAL_PENDING} AND final_owner != $self AND substr(final_owner, 1, $prefixLength) = $prefix`,
  };
}

/** The bound values of `reclaimHost` for `hostId` and `self`. */
export function hostPrefix(hostId: string, self: string): { self: string; prefix: string; prefixLength: number } {
  const prefix = `${hostId}${OWNER_SEPARATOR}`;
  return { self, prefix, prefixLength: prefix.length };
}
