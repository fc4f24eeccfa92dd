/**
 * docket's PostgreSQL advisory locks, as the two-key form `(class, object)` so they never collide
 * with another application's single-key locks on a shared server. Session locks
 * (`pg_advisory_lock`) live as long as the connection that took them: a process that dies loses them
 * when the server sees its connection close — that is what elects and re-elects the intake process.
 */

/** The first key of every docket lock: `dock` as a 32-bit integer. */
export const LOCK_CLASS = 0x646f636b;

/** The second keys (objects) docket locks. */
export const LOCKS = {
  /** Migrations at start: one host at a time (issue 14 item 1). */
  migrate: 1,
  /** The process that receives updates, across all hosts (issue 14 item 3). */
  intake: 2,
  /** The janitor's global expiry pass (issue 14 item 3). */
  expiry: 3,
} as const;

/** The lock classes of per-key transaction locks (the object key is a hash or an id). */
export const KEYED_LOCK_CLASS = {
  /** The download claims: the byte budget (one for all hosts) is decided by one claim at a time (object 0). */
  budget: 0x646f6301,
  /** One user's intake checks and INSERT (USER_MAX_JOBS_IN_FLIGHT; object = the user id folded to 32 bits). */
  user: 0x646f6302,
} as const;
