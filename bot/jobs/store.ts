/**
 * `JobStore`: every read and conditional write the engine makes, behind one
 * interface (DESIGN.md "Seams for growth": SQLite now; a PostgreSQL store with
 * `SELECT … FOR UPDATE SKIP LOCKED` later). Methods are async for that reason.
 * Every state change is conditional on the previous state (and the lease holder):
 * `false` means someone else moved the job (seed 000: conditional UPDATE).
 * Times are epoch ms in, UTC ISO strings in rows.
 */
import type { FileJob, JobResult, JobState } from "../db/schema.ts";
import type { ReasonCode } from "./reasons.ts";

/** What intake records for a new job (seed 000: "Что записать при приёме"). */
export interface NewJob {
  readonly updateId: number;
  readonly chatId: number;
  readonly userId: number;
  readonly messageId: number;
  readonly source: "document" | "photo";
  readonly fileId: string;
  readonly fileUniqueId: string;
  readonly declaredName: string | null;
  readonly declaredMime: string | null;
  readonly declaredSize: number | null;
  readonly languageCode: string | null;
  /** Processing variant from the chat's settings (`default` when omitted); part of the idempotency key. */
  readonly variant?: string;
}

/** Per-user fairness limits (USER_MAX_JOBS_IN_FLIGHT, USER_MAX_BYTES_PER_DAY). */
export interface UserLimits {
  readonly maxInFlight: number;
  /** Bytes per 24 h (declared or real sizes). */
  readonly maxBytesPerDay: number;
}

/** Budget parameters for a download claim (bytes). */
export interface BudgetParams {
  /** Total budget (DOWNLOAD_BUDGET). */
  readonly total: number;
  /** Reservation multiplier (BUDGET_MULTIPLIER). */
  readonly multiplier: number;
  /** The current mode's download limit, reserved when the size is unknown. */
  readonly modeLimit: number;
  /** Smallest reservation of a job, bytes (BUDGET_MIN_RESERVATION). */
  readonly floor?: number;
}

/** Fields a transition may set along with the new state. */
export interface TransitionPatch {
  readonly localPath?: string | null;
  readonly sha256?: string | null;
  readonly realSize?: number | null;
  readonly reservedBytes?: number;
  readonly detectedType?: string | null;
  readonly facts?: string | null;
  readonly resultExpiresAt?: string | null;
  /** Keep the lease (true) or release it (default false). */
  readonly keepLease?: boolean;
  /** Reset `attempts` to 0 (a forward step starts a fresh try budget). */
  readonly resetAttempts?: boolean;
}

/** A result file to record before it is sent. */
export interface NewResult {
  readonly idx: number;
  readonly path: string;
  readonly fileName: string;
  readonly mime: string;
  readonly size: number;
}

/** The engine's persistence. See the module doc for the conditional-write contract. */
export interface JobStore {
  /** INSERT the job in `accepted` unless (chat_id, file_unique_id) exists; returns the row and whether it was created. */
  accept(job: NewJob, now: number): Promise<{ job: FileJob; created: boolean }>;
  /**
   * Like {@link accept}, but refuses a NEW job when the user is at a per-user limit — count and
   * INSERT in one transaction, so concurrent handlers (other chats of the same user) cannot
   * both pass the check. An existing job is returned as in `accept`, limits not applied.
   */
  acceptWithinLimits(
    job: NewJob,
    now: number,
    limits: UserLimits,
  ): Promise<{ job: FileJob; created: boolean; refused?: undefined } | { refused: { limit: "in_flight"; count: number } | { limit: "bytes_per_day"; used: number } }>;
  /** A re-sent file re-arms a `failed`/`expired` job: back to `accepted` with the fresh file_id, attempts 0. */
  rearm(id: number, from: "failed" | "expired", fresh: Pick<NewJob, "fileId" | "updateId" | "messageId" | "languageCode">, now: number): Promise<boolean>;
  /** Remember the chat message that shows this job's status. */
  setStatusMessage(id: number, messageId: number): Promise<void>;
  get(id: number): Promise<FileJob | undefined>;
  /** The chat's /settings (defaults when never set). */
  getSettings(chatId: number): Promise<{ pdfAction: string }>;
  /** Store the chat's /settings. */
  setSettings(chatId: number, settings: { pdfAction: string }, now: number): Promise<void>;
  /** The chat's jobs, newest first. */
  listByChat(chatId: number, limit: number): Promise<FileJob[]>;
  /** Live `ready` job of this chat whose source had this SHA-256 and the same variant (re-use without processing). */
  findReadyBySha(chatId: number, sha256: string, variant: string, now: number, excludeId: number): Promise<FileJob | undefined>;
  /**
   * Claim the oldest claimable `accepted` job if its reservation fits the budget
   * (head of line waits, so big files are not starved): sets lease, owner,
   * attempts + 1 and `reserved_bytes`. Returns null when nothing is claimable.
   */
  claimDownload(owner: string, now: number, leaseTtlMs: number, budget: BudgetParams): Promise<FileJob | null>;
  /** Claim the oldest claimable `fetched` or `processing` job: lease, owner, attempts + 1. */
  claimProcess(owner: string, now: number, leaseTtlMs: number): Promise<FileJob | null>;
  /**
   * Take back at once the leases of this host's earlier processes (CONTRACTS.md §6; issue 11 item 4):
   * every active job whose `lease_owner` is `<hostId>/…` other than `self`, or an owner id without a
   * host part (written before owner ids had one), gets `lease_owner`/`lease_until` cleared — state,
   * attempts, reservation and retry backoff stay — so the pools claim it now and resume it by state.
   * Leases of other hosts are untouched (they expire after LEASE_TTL). Returns the jobs released, with
   * the owner each was taken from.
   */
  reclaimHostLeases(hostId: string, self: string, now: number): Promise<Array<{ id: number; status: JobState; from: string }>>;
  /** Extend the lease; false when the holder lost it. */
  renew(id: number, owner: string, now: number, leaseTtlMs: number): Promise<boolean>;
  /** Conditional `from → to` by the lease holder; false when zero rows changed. */
  transition(id: number, from: JobState, to: JobState, owner: string, now: number, patch?: TransitionPatch): Promise<boolean>;
  /** Release the lease and set a backoff; the job stays in `state`. */
  retryLater(id: number, state: JobState, owner: string, notBefore: number, detail: string, now: number): Promise<boolean>;
  /** `from → failed` with a reason (owner null: not lease-bound, e.g. /cancel). */
  fail(id: number, from: JobState, owner: string | null, reason: ReasonCode, params: Readonly<Record<string, string | number>>, detail: string, now: number): Promise<boolean>;
  /** Set `reserved_bytes` (refine after download, 0 when files are gone). */
  setReservation(id: number, bytes: number): Promise<void>;
  /**
   * Set `reserved_bytes` only while the lease holder is `owner` (null: nobody holds the lease), so a worker
   * that lost its lease never changes the next holder's reservation; false when no row matched (audit M7).
   */
  setReservationIf(id: number, owner: string | null, bytes: number): Promise<boolean>;
  /** Sum of reservations in use, bytes. */
  budgetInUse(): Promise<number>;
  /** 1-based position among waiting (`accepted`/`fetched`) jobs, or null when not waiting. */
  queuePosition(id: number): Promise<number | null>;
  /** Replace the job's result rows. */
  putResults(id: number, results: readonly NewResult[]): Promise<void>;
  results(id: number): Promise<JobResult[]>;
  /** Store Telegram's `file_id` of a sent result. */
  setResultFileId(id: number, idx: number, fileId: string): Promise<void>;
  /** `ready` jobs whose result_expires_at <= now. */
  dueForExpiry(now: number): Promise<FileJob[]>;
  /** `ready|failed → expired` (result deleted, row kept). */
  expire(id: number, from: "ready" | "failed", now: number): Promise<boolean>;
  /** Jobs by state (janitor, metrics, demo). */
  listByState(states: readonly JobState[]): Promise<FileJob[]>;
  /** Counts per state. */
  countByState(): Promise<Record<string, number>>;
  /**
   * `failed` jobs by reason code (metrics: `docket_jobs_failed`); with `sinceMs` (epoch ms) only those
   * that ended at or after it (`docket status`: errors in the last hour).
   */
  countFailedByReason(sinceMs?: number): Promise<Record<string, number>>;
  /**
   * `reserved_bytes = 0` only while the job is finished (`ready|failed|expired`), in one
   * conditional UPDATE, so a job re-armed and claimed meanwhile keeps its new reservation
   * (janitor). True when a reservation was released.
   */
  releaseReservation(id: number): Promise<boolean>;
}
