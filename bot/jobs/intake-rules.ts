/**
 * What intake does with a file (seed 000: "дежурный в приёмном покое"; "Один файл — две доставки"),
 * as pure functions of what the intake transaction read: the job with the same key (if any), the
 * declared size against the mode's limit, and — only for a new file that fits — the user's quota.
 * The store runs the decision and its writes, and records the reply, in one transaction
 * (`JobStore.intake`); the handler only renders the reply's text.
 *
 * Order of checks for a new file (issue 11 item 5): the size limit before the per-user quota, so a
 * too-big file is told it is too big even when the user is at a limit; a too-big file is inserted as
 * `failed`/`too_big` in its one INSERT (never `accepted`, so no download loop can claim it).
 */
import type { FileJob } from "../db/schema.ts";
import { isResultAlive } from "./states.ts";
import { isReasonCode, type ReasonCode } from "./reasons.ts";

/** Failure reasons a re-sent file may retry (the file, Telegram or the mode may have changed, not the content). */
export const RETRY_ON_RESEND: ReadonlySet<ReasonCode> = new Set<ReasonCode>([
  "size_mismatch",
  "file_unavailable",
  "file_not_readable",
  "download_failed",
  "processing_timeout",
  "processing_crashed",
  "too_much_memory",
  "delivery_failed",
  "cancelled",
  "attempts_exhausted",
  "too_big",
  "pdf_engine_unavailable",
]);

/** What intake decided for one file message. */
export type IntakeDecision =
  /** A new job in `accepted`. */
  | { readonly kind: "accept" }
  /** A new job inserted as `failed`/`too_big` (declared size over the mode's download limit). */
  | { readonly kind: "too_big" }
  /** No job: the user is at a per-user limit (checked only for a new file that fits the size limit). */
  | { readonly kind: "limit"; readonly limit: "in_flight"; readonly count: number }
  | { readonly kind: "limit"; readonly limit: "bytes_per_day"; readonly used: number }
  /** The same update again (the bot stopped before confirming it): answered the first time; nothing to do. */
  | { readonly kind: "redelivered" }
  /** An edited message that kept its file (a caption change): no answer. */
  | { readonly kind: "edit_kept_file" }
  /** A re-sent file runs again: `failed` (for a reason a new try can fix) or `expired` back to `accepted`. */
  | { readonly kind: "rearm"; readonly from: "failed" | "expired"; readonly expireFirst: boolean }
  /** A re-sent file of an ended job that is still over the limit: told why again; the job stays. */
  | { readonly kind: "too_big_again"; readonly expireFirst: boolean }
  /** A re-sent file whose result is alive: answered from the stored result (re-delivery). */
  | { readonly kind: "resend" }
  /** The file is already a job (running, or ended for a reason a re-send cannot fix): its number and state. */
  | { readonly kind: "duplicate" };

/** The message being taken in, as the decision needs it. */
export interface IntakeInput {
  readonly updateId: number;
  /** Declared size over the mode's download limit. */
  readonly tooBig: boolean;
  /** The update is an `edited_message`. */
  readonly edited: boolean;
}

/**
 * Decide for a file whose key (chat, file_unique_id, variant) already has a job.
 * @param now epoch ms (a `ready` result past `result_expires_at` counts as expired)
 */
export function decideExisting(job: FileJob, input: IntakeInput, now: number): IntakeDecision {
  if (job.updateId === input.updateId) return { kind: "redelivered" };
  if (input.edited) return { kind: "edit_kept_file" };
  if (isResultAlive(job, now)) return { kind: "resend" };
  // A result past its TTL that the janitor has not swept yet is gone for the user: expired first.
  const expireFirst = job.status === "ready";
  const from = expireFirst ? "expired" : job.status;
  const rearmable = from === "expired" || (from === "failed" && job.reason !== null && isReasonCode(job.reason) && RETRY_ON_RESEND.has(job.reason));
  if (!rearmable) return { kind: "duplicate" };
  if (input.tooBig) return { kind: "too_big_again", expireFirst };
  return { kind: "rearm", from: from as "failed" | "expired", expireFirst };
}

/** A user's usage as the quota check reads it. */
export interface QuotaUse {
  /** The user's jobs in an active state. */
  readonly inFlight: number;
  /** Bytes of the user's jobs created in the last 24 h. */
  readonly bytesToday: number;
}

/** Per-user limits (USER_MAX_JOBS_IN_FLIGHT, USER_MAX_BYTES_PER_DAY); Infinity for admins. */
export interface QuotaLimits {
  readonly maxInFlight: number;
  readonly maxBytesPerDay: number;
}

/**
 * Decide for a file with no job yet: too big first (no quota read at all), then the quota.
 * @param use read lazily: a too-big file never needs it
 */
export function decideNew(input: Pick<IntakeInput, "tooBig">, use: () => QuotaUse, limits: QuotaLimits): IntakeDecision {
  if (input.tooBig) return { kind: "too_big" };
  const u = use();
  if (u.inFlight >= limits.maxInFlight) return { kind: "limit", limit: "in_flight", count: u.inFlight };
  if (u.bytesToday >= limits.maxBytesPerDay) return { kind: "limit", limit: "bytes_per_day", used: u.bytesToday };
  return { kind: "accept" };
}

/**
 * Decide for one more part of an album whose job was taken in already (issue 13 item 5; seed 000's intake:
 * the quota is checked per file as it arrives): the part is left out when the sender's bytes of the last
 * 24 h — the album's earlier parts included — have reached USER_MAX_BYTES_PER_DAY, the same test
 * {@link decideNew} makes for a file. USER_MAX_JOBS_IN_FLIGHT is not asked: the album is one job, counted
 * once at its first part.
 * @param bytesToday {@link QuotaUse.bytesToday}, read in the part's intake transaction
 */
export function decidePart(bytesToday: number, limits: QuotaLimits): { readonly kind: "take" } | { readonly kind: "limit"; readonly used: number } {
  return bytesToday >= limits.maxBytesPerDay ? { kind: "limit", used: bytesToday } : { kind: "take" };
}

/**
 * A declared size as intake may use it (issue 11 item 6): a non-negative safe integer, else null
 * (unknown — reserved by the mode's limit, checked after download). A forged negative or fractional
 * `file_size` must not lower a user's bytes of the day nor shrink a reservation.
 */
export function validDeclaredSize(size: unknown): number | null {
  return typeof size === "number" && Number.isSafeInteger(size) && size >= 0 ? size : null;
}

/** The reply kind of a decision, or null when the decision sends nothing. */
export function replyKindOf(d: IntakeDecision): ReplyKind | null {
  switch (d.kind) {
    case "accept":
    case "rearm":
      return "accepted";
    case "too_big":
      return "too_big";
    case "too_big_again":
      return "too_big_again";
    case "limit":
      return "limit";
    case "resend":
      return "resend";
    case "duplicate":
      return "duplicate";
    case "redelivered":
    case "edit_kept_file":
      return null;
  }
}

/**
 * Kinds of intake replies (`chat_replies.kind`). `accepted` and `too_big` (a new job refused by its
 * size) become the job's first status message, edited as the job moves; `resend` is followed by the
 * stored results; `refused` answers a user outside ALLOWED_USER_IDS (at most once a day).
 */
export type ReplyKind = "accepted" | "too_big" | "too_big_again" | "duplicate" | "resend" | "limit" | "refused";

/** Reply kinds that are their job's first status message (the id is stored as `status_message_id`). */
export const STATUS_REPLY_KINDS: ReadonlySet<string> = new Set<ReplyKind>(["accepted", "too_big"]);
