/**
 * `JobStore`: every read and conditional write the engine makes, behind one
 * interface (DESIGN.md "Seams for growth": SQLite now; a PostgreSQL store with
 * `SELECT … FOR UPDATE SKIP LOCKED` later). Methods are async for that reason.
 * Every state change is conditional on the previous state (and the lease holder):
 * `false` means someone else moved the job (seed 000: conditional UPDATE).
 * Times are epoch ms in, UTC ISO strings in rows.
 */
import type { AlertState, ChatPrompt, ChatReply, FileJob, JobAttempt, JobPart, JobResult, JobState, OpsAlert } from "../db/schema.ts";
import type { IntakeDecision, QuotaLimits } from "./intake-rules.ts";

export type { AlertState, OpsAlert } from "../db/schema.ts";

/** An operator alert to record (issue 10 item 3; CONTRACTS.md §2). */
export interface NewAlert {
  /** bot/ops/alert-policy.ts ALERT_CAUSES. */
  readonly cause: string;
  /** What happened and what to do (operator text, English, redacted). */
  readonly text: string;
  /** `bot`, or `cli` (docket notify). */
  readonly source: "bot" | "cli";
}
import type { ReasonCode } from "./reasons.ts";

/** What intake records for a new job (seed 000: "Что записать при приёме"). */
export interface NewJob {
  readonly updateId: number;
  readonly chatId: number;
  readonly userId: number;
  readonly messageId: number;
  /** The message field the file came in; `album` for a multi-part job (its files are {@link NewPart}s). */
  readonly source: "document" | "photo" | "album";
  readonly fileId: string;
  readonly fileUniqueId: string;
  readonly declaredName: string | null;
  readonly declaredMime: string | null;
  readonly declaredSize: number | null;
  readonly languageCode: string | null;
  /** Processing variant from the chat's settings (`default` when omitted); part of the idempotency key. */
  readonly variant?: string;
}

/**
 * One part of an album (issue 13 item 5): the message's file, plus the size its share of the budget is
 * reserved for (the declared size, or the mode's download limit when unknown — seed 000: reserve by the
 * upper bound) and, when its declared size is over the limit, why it is left out.
 */
export interface NewPart {
  readonly updateId: number;
  readonly messageId: number;
  readonly source: "document" | "photo";
  readonly fileId: string;
  readonly fileUniqueId: string;
  readonly declaredName: string | null;
  readonly declaredMime: string | null;
  readonly declaredSize: number | null;
  /** Bytes this part adds to the album job's `declared_size` (what its download claim reserves from). */
  readonly reserveSize: number;
  /** Set when the declared size is over the mode's download limit: the part is inserted `failed`/`too_big`. */
  readonly tooBig: { readonly params: Readonly<Record<string, string | number>>; readonly detail: string } | null;
}

/** What {@link JobStore.intakeAlbumPart} did with one part. */
export type AlbumPartOutcome =
  /** The album's first part: {@link JobStore.intake}'s outcome for the album job (accepted or refused), the part recorded when accepted. */
  | { readonly kind: "first"; readonly intake: IntakeOutcome }
  /**
   * Added to the album's job while it is `accepted` (waiting: its quiet interval starts again; being
   * downloaded: the download picks it up). No reply (one reply per album). `refused`: recorded `failed`
   * with reason `daily_quota` (the sender's bytes of the day were used up), left out of the album.
   */
  | { readonly kind: "added"; readonly job: FileJob; readonly refused?: "daily_quota" }
  /** This update's part is recorded already (a redelivered update). */
  | { readonly kind: "redelivered"; readonly job: FileJob }
  /**
   * The album's download had finished (the job left `accepted`: fetched, processing or ended) before this
   * part came: nothing written; the caller takes it as a file of its own and says so.
   */
  | { readonly kind: "late"; readonly job: FileJob };

/** Why an album part is left out at intake: its chat params (reasons.ftl) and the operator detail. */
export interface PartRefusal {
  readonly params: Readonly<Record<string, string | number>>;
  readonly detail: string;
}

/** A part on disk, see {@link JobStore.markPartFetched}. */
export interface FetchedPart {
  readonly localPath: string;
  readonly sha256: string;
  readonly realSize: number;
}

/** How {@link JobStore.intake} treats one file message; the handler's part of the decision. */
export interface IntakeOptions {
  /** The update is an `edited_message` (a kept file gets no answer). */
  readonly edited: boolean;
  /**
   * Set when the declared size is over the mode's download limit: the `failed`/`too_big` row's chat
   * params and operator detail (the size is checked before the quota; issue 11 item 5).
   */
  readonly tooBig: { readonly params: Readonly<Record<string, string | number>>; readonly detail: string } | null;
  /** Per-user limits (Infinity for admins). */
  readonly limits: QuotaLimits;
  /**
   * The reply's text in the user's language, from the decision and the job row after the writes
   * (null: none). Runs inside the transaction: pure and quick.
   */
  render(decision: IntakeDecision, job: FileJob | null): string | null;
  /**
   * An album part left out by USER_MAX_BYTES_PER_DAY ({@link JobStore.intakeAlbumPart}): its chat params and
   * detail from the bytes the sender used in the last 24 h. Omitted: params `{ used, limit }` in bytes.
   */
  partOverQuota?(usedBytes: number): PartRefusal;
}

/** What {@link JobStore.intake} did. */
export interface IntakeOutcome {
  readonly decision: IntakeDecision;
  /** The job after the writes (null for a limit refusal). */
  readonly job: FileJob | null;
  /** The reply recorded in the same transaction, pending delivery (null: none, or this update has one already). */
  readonly reply: ChatReply | null;
}

/** A reply recorded without a job (a refusal), see {@link JobStore.recordRefusal}. */
export interface NewReply {
  readonly updateId: number;
  readonly chatId: number;
  readonly userId: number;
  readonly replyTo: number | null;
  readonly text: string;
}

/** A failed try as {@link JobStore.retryLater} records it. */
export interface FailureNote {
  readonly reason: ReasonCode;
  readonly params?: Readonly<Record<string, string | number>>;
  /** Operator detail (English, redacted); also the job's `last_error`. */
  readonly detail: string;
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

/**
 * A job's final status message, recorded with its final state (ready, failed) in the same UPDATE and shown
 * from that record (bot/status/finals.ts): held by `owner` until `until` (epoch ms), renewed while it waits
 * on the chat; a process that dies leaves it to the next one (this host's next start, or any host once
 * `until` passed).
 */
export interface FinalStatus {
  /** The final text in the user's language. */
  readonly text: string;
  /** JSON of the message's InlineKeyboardMarkup, or null for none. */
  readonly markup: string | null;
  /** The process that shows it (`<host>/<start>`, CONTRACTS.md §6). */
  readonly owner: string;
  /** Until when `owner` holds it, epoch ms. */
  readonly until: number;
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
  /** The final status message to show once this (final) transition is committed, recorded in the same UPDATE. */
  readonly final?: FinalStatus;
}

/** Where a job's verified source is and what it holds. */
export interface SourceFields {
  readonly localPath: string;
  readonly sha256: string;
  readonly realSize: number;
}

/**
 * A processing claim (seed 000: two pools, resume by state): the job, moved to `processing` under the
 * claimer's lease by the claim itself, and the state it was found in — `fetched` (its source is verified
 * and may be re-used, then processed) or `processing` (an abandoned try: intermediates are invalid,
 * redo from the source).
 */
export interface ProcessClaim {
  /** The row after the claim (`processing`, lease, owner, attempts + 1). */
  readonly job: FileJob;
  readonly found: "fetched" | "processing";
}

/** What the download recorded, see {@link JobStore.handOver}. */
export interface FetchedSource extends SourceFields {
  /** The reservation refined from the real size (bot/jobs/budget.ts refinedReservation). */
  readonly reservedBytes: number;
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
   * Take in one file message in ONE transaction (seed 000 intake; issue 11 items 3 and 5): read the job
   * with the same key, decide (bot/jobs/intake-rules.ts: `decideExisting`, or `decideNew` — size
   * limit first, then the quota), write (INSERT `accepted`, INSERT `failed`/`too_big`, expire, re-arm,
   * or nothing) and record the reply `render` gives in `chat_replies` (one per `update_id`: a
   * redelivered update records none). A crash after commit loses neither the job nor its reply.
   */
  intake(job: NewJob, now: number, options: IntakeOptions): Promise<IntakeOutcome>;
  /**
   * Take in one part of an album in ONE transaction (issue 13 item 5). `album` is the album job's
   * record (`source` `album`, `file_unique_id` `album:<media_group_id>`, so the album is one key).
   * No job with that key: {@link intake} for it (quota, reply "accepted" for the whole album), and when
   * accepted the part is recorded and `not_before` set to `now + quietMs`. A part of this update exists:
   * `redelivered`. A job in `accepted` — waiting for its claim, in a retry's backoff, or being downloaded
   * (docs/processors.md "Albums": the rule for a late part) — takes the part: when the sender's bytes of
   * the day are used up (`decidePart`, options.limits) it is recorded `failed`/`daily_quota` and adds
   * nothing; otherwise it is recorded (`failed`/`too_big` with `part.tooBig`) and `declared_size` grows by
   * its `reserveSize`; while no download holds the job, `not_before` moves to at least `now + quietMs`
   * (the debounce: the album is complete after a quiet interval, since Telegram delivers its parts as
   * separate updates; a retry's later backoff is kept). A held job's download picks the part up before
   * it ends ({@link albumFetched}). Any other state: `late`, nothing written. `seed` (issue 15 "merge
   * with the next files"): a part recorded before `part` when the job is created — the file the merge
   * started from.
   */
  intakeAlbumPart(album: NewJob, part: NewPart, now: number, quietMs: number, options: IntakeOptions, seed?: NewPart): Promise<AlbumPartOutcome>;
  /**
   * `accepted → fetched` of a multi-part job by the lease holder with `patch`, only when none of its parts
   * is `accepted` any more — a part that joined while the job was downloading is downloaded first (issue 13
   * item 5: `fetched` only when every part is on disk). Serialized with {@link intakeAlbumPart}: a part
   * either joins before this commits (then `parts_pending`, nothing written) or finds the job `fetched`
   * (then it is `late`). `lost`: the job is not `accepted` or not held by `owner`.
   */
  albumFetched(id: number, owner: string, now: number, patch: TransitionPatch): Promise<"fetched" | "parts_pending" | "lost">;
  /**
   * A multi-part job's download needs `bytes` reserved for a part that joined it (issue 13 item 5: each
   * part's budget share): set when `bytes` is at most what it holds, or fits next to every other job's
   * reservation within `total` (bot/jobs/budget.ts `fits`) — `reserved`. Otherwise the job waits for the
   * budget like any unclaimed job (seed 000: "Нет места в бюджете — задача остаётся в accepted и ждёт"):
   * lease released, `attempts` back by one (this claim tried nothing), `reserved_bytes` = `held` (what its
   * parts on disk keep) — `yielded`. `lost`: the job is not `accepted` or not held by `owner`.
   */
  reservePart(id: number, owner: string, bytes: number, held: number, total: number): Promise<"reserved" | "yielded" | "lost">;
  /** The parts of a multi-part job in album order (`message_id` ascending). */
  parts(jobId: number): Promise<JobPart[]>;
  /**
   * Part `messageId` of job `jobId` is on disk: `fetched` with its file — only while the job is `accepted`
   * and leased by `owner` (a worker that lost its lease writes nothing). False when no row matched.
   */
  markPartFetched(jobId: number, messageId: number, owner: string, file: FetchedPart): Promise<boolean>;
  /** Part `messageId` is left out of the output: `failed` with a reason, under the same condition as {@link markPartFetched}. */
  failPart(jobId: number, messageId: number, owner: string, reason: ReasonCode, params: Readonly<Record<string, string | number>>, detail: string): Promise<boolean>;
  /** A `fetched` part whose file is gone or changed goes back to `accepted` (resume rule), same condition as {@link markPartFetched}. */
  resetPart(jobId: number, messageId: number, owner: string): Promise<boolean>;
  /** Ask `userId` in `chatId` a question about job `jobId` (replaces the user's earlier one in that chat). */
  setPrompt(prompt: Omit<ChatPrompt, "createdAt">, now: number): Promise<void>;
  /**
   * The user's open question in the chat, removed as it is taken (answered once), or null when there is
   * none or it was asked more than `maxAgeMs` ago (an old one is removed too).
   */
  takePrompt(chatId: number, userId: number, now: number, maxAgeMs: number): Promise<ChatPrompt | null>;
  /** The user's open question in the chat without taking it (null: none, or older than `maxAgeMs`). */
  getPrompt(chatId: number, userId: number, now: number, maxAgeMs: number): Promise<ChatPrompt | null>;
  /**
   * Record a refusal for a user outside ALLOWED_USER_IDS unless that user got one within `windowMs`
   * (issue 11 item 6: at most one a day) or this update has a reply; the pending row, or null.
   */
  recordRefusal(reply: NewReply, now: number, windowMs: number): Promise<ChatReply | null>;
  /** Pending replies due at `now` (not sent, not given up, backoff passed) with id > `afterId`, oldest first, at most `limit`. */
  pendingReplies(now: number, limit: number, afterId?: number): Promise<ChatReply[]>;
  /**
   * Telegram accepted reply `id` as `messageId`: mark it sent and, for a status reply
   * (intake-rules.ts `STATUS_REPLY_KINDS`), store the id as its job's `status_message_id` — one transaction.
   */
  markReplySent(id: number, messageId: number, now: number): Promise<void>;
  /**
   * Telegram accepted pending reply `id` as `messageId`, but the reply is not done yet (a `resend`: its
   * results go after it): note the id and keep it pending, so the next try sends only what is left. No-op
   * when it is sent or has an id already.
   */
  noteReplyMessage(id: number, messageId: number): Promise<void>;
  /** A try of reply `id` failed: `tries + 1`, not before `notBefore`, with the (redacted) detail. */
  retryReplyLater(id: number, notBefore: number, detail: string): Promise<void>;
  /** Stop trying reply `id` (the chat is gone, or tries ran out). */
  giveUpReply(id: number, detail: string, now: number): Promise<void>;
  /** Delete replies sent or given up that were created before `before` (janitor); how many. */
  pruneReplies(before: number): Promise<number>;
  /**
   * A re-sent file re-arms a `failed`/`expired` job: back to `accepted` with the fresh file_id, attempts 0;
   * the job's history keeps its rows and gets one `rearmed` row (the old reason and params, the old
   * `attempts`) in the same transaction. False when the job is not in `from`.
   */
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
   * @param release jobs whose reservations to release first, as {@link releaseReservation} does, in the
   *   claim's own transaction (issue 14 item 8: the release after `ready` rides on the process's next
   *   claim, bot/worker/releases.ts), so the budget check of this claim already counts them free. They are
   *   released whether or not a job is claimed; when the call throws, nothing was released.
   */
  claimDownload(owner: string, now: number, leaseTtlMs: number, budget: BudgetParams, release?: readonly number[]): Promise<FileJob | null>;
  /**
   * Claim the oldest claimable `fetched` or `processing` job in one conditional write: lease, owner,
   * attempts + 1, and `fetched → processing` folded into the claim (the claimer starts on it now).
   * Returns the row and the state it was found in, or null when nothing is claimable.
   */
  claimProcess(owner: string, now: number, leaseTtlMs: number): Promise<ProcessClaim | null>;
  /**
   * The download's holder `owner` has the file on disk and a free processing slot (issue 14 item 8:
   * the host holding the file processes it): `accepted → fetched → processing` in ONE conditional
   * UPDATE (`WHERE id AND status = 'accepted' AND lease_owner = owner`) — the download's fields
   * recorded as {@link transition} to `fetched` records them, and the processing claim taken by the
   * same owner as {@link claimProcess} takes it (lease renewed to `now + leaseTtlMs`, attempts 1: a
   * fresh try budget, claimed once). Found in `fetched`. Null when zero rows changed (the job moved or
   * the lease was lost).
   * @param release as {@link claimDownload}'s: released in the same transaction, whatever the hand-over's outcome
   */
  handOver(id: number, owner: string, now: number, leaseTtlMs: number, source: FetchedSource, release?: readonly number[]): Promise<ProcessClaim | null>;
  /**
   * Take back at once the leases of this host's earlier processes (CONTRACTS.md §6; issue 11 item 4):
   * every active job whose `lease_owner` is `<hostId>/…` other than `self`, or an owner id without a
   * host part (written before owner ids had one), gets `lease_owner`/`lease_until` cleared — state,
   * attempts, reservation and retry backoff stay — so the pools claim it now and resume it by state.
   * Each is recorded in the job's history as `interrupted`.
   * Leases of other hosts are untouched (they expire after LEASE_TTL). Returns the jobs released, with
   * the owner each was taken from.
   */
  reclaimHostLeases(hostId: string, self: string, now: number): Promise<Array<{ id: number; status: JobState; from: string }>>;
  /** Extend the lease; false when the holder lost it. */
  renew(id: number, owner: string, now: number, leaseTtlMs: number): Promise<boolean>;
  /** Conditional `from → to` by the lease holder; false when zero rows changed. */
  transition(id: number, from: JobState, to: JobState, owner: string, now: number, patch?: TransitionPatch): Promise<boolean>;
  /**
   * Record a source fetched again for a job in `state` held by `owner` (seed 000 resume rule: the
   * server removed or changed the source, so a new getFile and the same checks): path, size and
   * SHA-256 replaced, state and lease kept. False when zero rows changed (the job moved or the lease was lost).
   */
  replaceSource(id: number, state: "fetched" | "processing", owner: string, now: number, source: SourceFields): Promise<boolean>;
  /**
   * Release the lease and set a backoff; the job stays in `state`. The try is recorded in the job's
   * history (`retry`, bot/jobs/attempts.ts) in the same transaction.
   */
  retryLater(id: number, state: JobState, owner: string, notBefore: number, failure: FailureNote, now: number): Promise<boolean>;
  /**
   * `from → failed` with a reason (owner null: not lease-bound, e.g. /cancel), recorded in the job's
   * history (`failed`) in the same transaction; `final` (the chat's "failed" text) in the same UPDATE.
   */
  fail(id: number, from: JobState, owner: string | null, reason: ReasonCode, params: Readonly<Record<string, string | number>>, detail: string, now: number, final?: FinalStatus): Promise<boolean>;
  /**
   * Final status messages still to show whose holder is gone or whose retry is due at `now`
   * (`final_until` passed or unset), oldest first, at most `limit`.
   */
  pendingFinals(now: number, limit: number): Promise<FileJob[]>;
  /**
   * Take job `id`'s pending final status for `owner` until `until` (epoch ms) — only while nobody else
   * holds it (unheld, expired, or already `owner`'s). The row, or null when it is shown, held or gone.
   */
  claimFinal(id: number, owner: string, now: number, until: number): Promise<FileJob | null>;
  /** Extend every pending final status `owner` holds to `until` (epoch ms); how many. */
  renewFinals(owner: string, until: number): Promise<number>;
  /** The chat showed job `id`'s final status (or it was given up): done, unheld; false when it was done already. */
  finishFinal(id: number, now: number): Promise<boolean>;
  /** A try of job `id`'s final status failed: `final_tries + 1`, unheld, not before `notBefore` (epoch ms); only while `owner` holds it. */
  retryFinalLater(id: number, owner: string, notBefore: number): Promise<boolean>;
  /**
   * Release at once the final statuses this host's earlier processes hold (one bot process per host: they
   * are dead; CONTRACTS.md §6), like {@link reclaimHostLeases}; how many.
   */
  reclaimHostFinals(hostId: string, self: string): Promise<number>;
  /** The job's history of tries, oldest first (bot/jobs/attempts.ts): kept across re-arms. */
  attempts(id: number): Promise<JobAttempt[]>;
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
  /** Record an operator alert in `pending`; returns its id. */
  recordAlert(alert: NewAlert, now: number): Promise<number>;
  /** Alerts a sender may claim at `now`, oldest first: `pending`, or `sending` claims abandoned for 10 min. */
  pendingAlerts(now: number): Promise<OpsAlert[]>;
  /** Claim an alert for sending (conditional on it still being claimable); false when another sender has it. */
  claimAlert(id: number, now: number): Promise<boolean>;
  /** `sending → state` with a detail; false when the alert was not claimed. */
  settleAlert(id: number, state: Exclude<AlertState, "pending" | "sending">, detail: string | null, now: number): Promise<boolean>;
  /** Alerts created at or after `sinceMs` (epoch ms), any state, oldest first (once-per-hour rule, `docket status`). */
  alertsSince(sinceMs: number): Promise<OpsAlert[]>;
  /**
   * `reserved_bytes = 0` only while the job is finished (`ready|failed|expired`), in one
   * conditional UPDATE, so a job re-armed and claimed meanwhile keeps its new reservation
   * (janitor). True when a reservation was released.
   */
  releaseReservation(id: number): Promise<boolean>;
}
