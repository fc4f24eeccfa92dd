/**
 * Pure pieces of an album part's intake shared by both stores (issue 13 item 5; `JobStore.intakeAlbumPart`):
 * the quiet interval a new part sets, and the record of a part left out by the daily quota.
 */
import type { FileJob } from "../db/schema.ts";
import { iso } from "./lease.ts";
import type { ReasonCode } from "./reasons.ts";
import type { IntakeOptions, PartRefusal } from "./store.ts";

/** A part recorded `failed` at intake: its reason code, chat params and operator detail. */
export interface PartLeftOut extends PartRefusal {
  readonly reason: ReasonCode;
}

/**
 * `not_before` of an `accepted` album job after a part joined it (ISO). Nobody holds it: at least
 * `now + quietMs` (the debounce; a later retry backoff is kept). A download holds it: unchanged — the
 * download picks the part up before the job is `fetched`.
 * @param now epoch ms; @param quietMs ALBUM_QUIET (or MERGE_QUIET), ms
 */
export function albumNotBefore(job: Pick<FileJob, "leaseOwner" | "notBefore">, now: number, quietMs: number): string | null {
  if (job.leaseOwner !== null) return job.notBefore;
  const quiet = now + quietMs;
  const backoff = job.notBefore === null ? Number.NEGATIVE_INFINITY : Date.parse(job.notBefore);
  return iso(Math.max(quiet, backoff));
}

/** The chat params and detail of a part left out by USER_MAX_BYTES_PER_DAY (`usedBytes` in the last 24 h). */
export function quotaRefusal(usedBytes: number, o: Pick<IntakeOptions, "partOverQuota" | "limits">): PartRefusal {
  return (
    o.partOverQuota?.(usedBytes) ?? {
      params: { used: usedBytes, limit: o.limits.maxBytesPerDay },
      detail: `the sender used ${usedBytes} B of USER_MAX_BYTES_PER_DAY ${o.limits.maxBytesPerDay} B in the last 24 h`,
    }
  );
}
