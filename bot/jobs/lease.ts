/**
 * Lease rules as pure functions of the job's lease fields and `now`
 * (seed 000: "Механизм называется арендой"). Times are epoch ms in, UTC ISO out.
 */

/** The lease-related fields of a job row. */
export interface LeaseFields {
  readonly leaseUntil: string | null;
  readonly leaseOwner: string | null;
  /** Retry backoff: not claimable before this time. */
  readonly notBefore: string | null;
}

/** ISO timestamp for epoch ms. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** Epoch ms of an ISO timestamp, or -Infinity for null. */
export function ms(isoTime: string | null): number {
  return isoTime === null ? Number.NEGATIVE_INFINITY : Date.parse(isoTime);
}

/** A job is claimable when no lease was given or it expired, and its backoff has passed. */
export function isClaimable(job: LeaseFields, now: number): boolean {
  return ms(job.leaseUntil) <= now && ms(job.notBefore) <= now;
}

/** The lease deadline a claim or renewal writes: `now + ttl`. */
export function leaseDeadline(now: number, ttlMs: number): string {
  return iso(now + ttlMs);
}

/**
 * When the holder should renew: once a third of the TTL has passed (two thirds still left),
 * so a renewal can be late or lost once and the lease still holds.
 */
export function renewAt(leaseUntil: string, ttlMs: number): number {
  return ms(leaseUntil) - ttlMs + Math.max(50, Math.floor(ttlMs / 3));
}

/** Whether anyone holds a live lease on the job at `now`. */
export function isLeased(job: Pick<LeaseFields, "leaseUntil">, now: number): boolean {
  return ms(job.leaseUntil) > now;
}

/**
 * Whether a lease is "long dead": expired by more than `graceMs` — the janitor
 * reports such jobs (seed 000: "задачи с давно истёкшей арендой").
 */
export function isLongDead(job: LeaseFields, now: number, graceMs: number): boolean {
  return job.leaseUntil !== null && ms(job.leaseUntil) + graceMs < now;
}
