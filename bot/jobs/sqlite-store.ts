/**
 * The SQLite `JobStore` (bun:sqlite + drizzle-orm). Claims run in IMMEDIATE
 * transactions so two workers (or two processes) never take the same job.
 * The hot paths (accept, intake, claims, transition, renew, retryLater,
 * fail, get) run statements prepared once per store (./sqlite-statements.ts) and
 * bun:sqlite transaction functions; the rest uses drizzle.
 */
import { Database } from "bun:sqlite";
import { and, asc, desc, eq, gt, gte, inArray, lte, ne, sql } from "drizzle-orm";
import type { DocketDb } from "../db/open.ts";
import { chatPrompts, chatSettings, fileJobs, jobParts, jobResults, type ChatPrompt, type ChatReply, type FileJob, type JobAttempt, type JobPart, type JobResult, type JobState } from "../db/schema.ts";
import { attemptStep, INTERRUPTED, type AttemptNote } from "./attempts.ts";
import { AttemptStatements } from "./sqlite-attempts.ts";
import { fits, reservationFor } from "./budget.ts";
import { iso, leaseDeadline } from "./lease.ts";
import { ACTIVE_STATES, canTransition, isActive } from "./states.ts";
import { OWNER_SEPARATOR } from "./owner.ts";
import type { ReasonCode } from "./reasons.ts";
import { finalColumns, JobStatements, transitionPatch, type Params as SqlParams } from "./sqlite-statements.ts";
import { FinalStatements } from "./sqlite-finals.ts";
import { ReplyStatements } from "./sqlite-replies.ts";
import { decideExisting, decideNew, decidePart, replyKindOf, type QuotaUse } from "./intake-rules.ts";
import { albumNotBefore, quotaRefusal, type PartLeftOut } from "./album-intake.ts";
import type { AlbumPartOutcome, AlertState, BudgetParams, FailureNote, FetchedPart, FetchedSource, FinalStatus, ProcessClaim, IntakeOptions, IntakeOutcome, JobStore, NewAlert, NewJob, NewPart, NewReply, NewResult, OpsAlert, SourceFields, TransitionPatch } from "./store.ts";
import { SqliteAlerts } from "./sqlite-alerts.ts";

/** The history row of a re-arm (bot/jobs/attempts.ts): the reason the old life ended, with its params, then the new start. */
function rearmNote(old: FileJob, from: "failed" | "expired", updateId: number): AttemptNote {
  const params = from === "failed" && old.reasonParams ? (JSON.parse(old.reasonParams) as Record<string, string | number>) : undefined;
  return { step: "intake", outcome: "rearmed", reason: from === "expired" ? "expired" : (old.reason ?? "attempts_exhausted"), ...(params ? { params } : {}), detail: `a re-sent file (update ${updateId}) started the job again from ${from}` };
}

/** The idempotency key of a job, (chat_id, file_unique_id, variant), as bound values (seed 000: UNIQUE key). */
const jobKey = (job: Pick<NewJob, "chatId" | "fileUniqueId" | "variant">) => ({ chatId: job.chatId, fileUniqueId: job.fileUniqueId, variant: job.variant ?? "default" });

/** Bound values of {@link JobStatements.insertAccepted}: intake's fields (unknown ones NULL) and `now` as created/updated time. */
const insertValues = (job: NewJob, now: number) => ({
  ...jobKey(job),
  updateId: job.updateId,
  userId: job.userId,
  messageId: job.messageId,
  source: job.source,
  fileId: job.fileId,
  declaredName: job.declaredName ?? null,
  declaredMime: job.declaredMime ?? null,
  declaredSize: job.declaredSize ?? null,
  languageCode: job.languageCode ?? null,
  now: iso(now),
});

/** A claim as a bun:sqlite transaction function, run with `BEGIN IMMEDIATE` (Database.transaction). */
type ClaimTx<A extends unknown[]> = { immediate(...args: A): FileJob | null };

/** {@link JobStore} over one SQLite database. */
export class SqliteJobStore implements JobStore {
  private readonly stmts: JobStatements;
  /** Claim of the download pool, one IMMEDIATE transaction (call `.immediate`). */
  private readonly claimDownloadTx: ClaimTx<[owner: string, now: number, leaseTtlMs: number, budget: BudgetParams, release: readonly number[]]>;
  /** handOver with releases to carry (one IMMEDIATE transaction; without them the UPDATE alone). */
  private readonly handOverTx: { immediate(release: readonly number[], values: SqlParams): FileJob | null };
  /** Claim of the processing pool, one IMMEDIATE transaction (call `.immediate`). */
  private readonly claimProcessTx: { immediate(owner: string, now: number, leaseTtlMs: number): ProcessClaim | null };
  /** Key lookup, decision, writes and the reply, one IMMEDIATE transaction (call `.immediate`). */
  private readonly intakeTx: { immediate(job: NewJob, now: number, options: IntakeOptions): IntakeOutcome };
  /** The refusal check and its INSERT, one IMMEDIATE transaction. */
  private readonly refusalTx: { immediate(reply: NewReply, now: number, windowMs: number): ChatReply | null };
  /** {@link albumFetched}'s read and conditional transition, one IMMEDIATE transaction. */
  private readonly albumFetchedTx: { immediate(id: number, owner: string, now: number, patch: TransitionPatch): "fetched" | "parts_pending" | "lost" };
  /** {@link reservePart}'s read, fit check and write, one IMMEDIATE transaction. */
  private readonly reservePartTx: { immediate(id: number, owner: string, bytes: number, held: number, total: number): "reserved" | "yielded" | "lost" };
  /** An album part's intake, one IMMEDIATE transaction. */
  private readonly albumTx: { immediate(album: NewJob, part: NewPart, now: number, quietMs: number, options: IntakeOptions, seed: NewPart | undefined): AlbumPartOutcome };
  private readonly replies: ReplyStatements;
  private readonly history: AttemptStatements;
  /** retryLater's UPDATE and its history row, one transaction. */
  private readonly retryTx: (id: number, state: JobState, owner: string, notBefore: number, failure: FailureNote, now: number) => boolean;
  /** rearm's UPDATE and its history row, one transaction. */
  private readonly rearmTx: (id: number, from: "failed" | "expired", fresh: Pick<NewJob, "fileId" | "updateId" | "messageId" | "languageCode">, now: number) => boolean;
  /** fail's UPDATE and its history row, one transaction. */
  private readonly failTx: (id: number, from: JobState, owner: string | null, reason: ReasonCode, params: Readonly<Record<string, string | number>>, detail: string, now: number, final: FinalStatus | undefined) => boolean;
  /** The final-status statements (./sqlite-finals.ts). */
  private readonly finals: FinalStatements;

  /**
   * @param db drizzle handle from `openDb`; its bun:sqlite connection (`$client`) runs the prepared hot paths
   * @throws when the handle has no bun:sqlite connection (e.g. `drizzle.mock()`)
   */
  constructor(private readonly db: DocketDb) {
    // drizzle() puts the connection on the handle as `$client` (not part of the BunSQLiteDatabase type).
    const sqlite = (db as DocketDb & { $client?: unknown }).$client;
    if (!(sqlite instanceof Database)) throw new Error("SqliteJobStore: the drizzle handle has no bun:sqlite connection");
    this.stmts = new JobStatements(sqlite);
    this.claimDownloadTx = sqlite.transaction((owner: string, now: number, leaseTtlMs: number, budget: BudgetParams, release: readonly number[]) => {
      this.releaseAll(release);
      return this.takeDownload(owner, now, leaseTtlMs, budget);
    });
    this.handOverTx = sqlite.transaction((release: readonly number[], values: SqlParams) => {
      this.releaseAll(release);
      return this.stmts.handOver.get(values);
    });
    this.claimProcessTx = sqlite.transaction((owner: string, now: number, leaseTtlMs: number) => this.takeProcess(owner, now, leaseTtlMs));
    this.replies = new ReplyStatements(sqlite);
    this.history = new AttemptStatements(sqlite);
    this.retryTx = sqlite.transaction((id: number, state: JobState, owner: string, notBefore: number, f: FailureNote, now: number) => {
      const moved = this.stmts.retryLater.run({ id, state, owner, notBefore: iso(notBefore), detail: f.detail, now: iso(now) }).changes > 0;
      if (moved) this.history.record(id, { step: attemptStep(state, f.reason), outcome: "retry", reason: f.reason, ...(f.params ? { params: f.params } : {}), detail: f.detail }, now);
      return moved;
    });
    this.failTx = sqlite.transaction((id: number, from: JobState, owner: string | null, reason: ReasonCode, params: Readonly<Record<string, string | number>>, detail: string, now: number, final: FinalStatus | undefined) => {
      const values = { id, from, reason, params: JSON.stringify(params), detail, now: iso(now), ...finalColumns(final) };
      const moved = (owner === null ? this.stmts.failAny.run(values) : this.stmts.failHeld.run({ ...values, owner })).changes > 0;
      if (moved) this.history.record(id, { step: attemptStep(from, reason), outcome: "failed", reason, params, detail }, now);
      return moved;
    });
    this.rearmTx = sqlite.transaction((id: number, from: "failed" | "expired", fresh: Pick<NewJob, "fileId" | "updateId" | "messageId" | "languageCode">, now: number) => {
      const old = this.stmts.byId.get({ id });
      if (old?.status !== from) return false;
      this.history.record(id, rearmNote(old, from, fresh.updateId), now);
      if (!this.rearmNow(id, from, fresh, now)) throw new Error(`rearm: job ${id} left ${from} inside the transaction`);
      return true;
    });
    this.intakeTx = sqlite.transaction((job: NewJob, now: number, options: IntakeOptions) => this.intakeBody(job, now, options));
    this.albumTx = sqlite.transaction((album: NewJob, part: NewPart, now: number, quietMs: number, options: IntakeOptions, seed: NewPart | undefined) =>
      this.albumBody(album, part, now, quietMs, options, seed),
    );
    this.albumFetchedTx = sqlite.transaction((id: number, owner: string, now: number, patch: TransitionPatch) => {
      const job = this.stmts.byId.get({ id });
      if (job?.status !== "accepted" || job.leaseOwner !== owner) return "lost" as const;
      const pending = this.db.select({ n: sql<number>`count(*)` }).from(jobParts).where(and(eq(jobParts.jobId, id), eq(jobParts.status, "accepted"))).get();
      if ((pending?.n ?? 0) > 0) return "parts_pending" as const;
      const { shape, values } = transitionPatch(patch, false);
      return this.stmts.transition(shape).run({ ...values, id, from: "accepted", to: "fetched", owner, now: iso(now) }).changes > 0 ? ("fetched" as const) : ("lost" as const);
    });
    this.reservePartTx = sqlite.transaction((id: number, owner: string, bytes: number, held: number, total: number) => {
      const job = this.stmts.byId.get({ id });
      if (job?.status !== "accepted" || job.leaseOwner !== owner) return "lost" as const;
      const others = this.stmts.reservedExcept.get({ id })?.n ?? 0;
      if (bytes <= job.reservedBytes || fits(others, bytes, total)) {
        this.db.update(fileJobs).set({ reservedBytes: bytes }).where(eq(fileJobs.id, id)).run();
        return "reserved" as const;
      }
      this.db
        .update(fileJobs)
        .set({ leaseOwner: null, leaseUntil: null, attempts: sql`max(${fileJobs.attempts} - 1, 0)`, reservedBytes: held })
        .where(eq(fileJobs.id, id))
        .run();
      return "yielded" as const;
    });
    this.refusalTx = sqlite.transaction((reply: NewReply, now: number, windowMs: number) =>
      this.replies.refusals(reply.userId, now - windowMs) > 0 ? null : this.replies.insert({ ...reply, jobId: null, kind: "refused" }, now),
    );
    this.alerts = new SqliteAlerts(db);
    this.finals = new FinalStatements(sqlite);
  }

  /** The `ops_alerts` statements (bot/jobs/sqlite-alerts.ts). */
  private readonly alerts: SqliteAlerts;

  /** Release the reservations of `ids` as {@link releaseReservation} does (inside the caller's transaction). */
  private releaseAll(ids: readonly number[]): void {
    for (const id of ids) this.stmts.releaseReservation.run({ id });
  }

  /** Body of {@link claimDownload}; runs inside its IMMEDIATE transaction. */
  private takeDownload(owner: string, now: number, leaseTtlMs: number, budget: BudgetParams): FileJob | null {
    const nowIso = iso(now);
    const head = this.stmts.downloadHead.get({ now: nowIso });
    if (!head) return null;
    const reservation = reservationFor(head.declaredSize, budget.multiplier, budget.modeLimit, budget.total, budget.floor);
    const used = this.stmts.reservedExcept.get({ id: head.id })?.n ?? 0;
    if (!fits(used, reservation, budget.total)) return null;
    return this.stmts.claimDownload.get({ id: head.id, owner, leaseUntil: leaseDeadline(now, leaseTtlMs), reservedBytes: reservation, now: nowIso });
  }

  /** Body of {@link claimProcess}; runs inside its IMMEDIATE transaction. */
  private takeProcess(owner: string, now: number, leaseTtlMs: number): ProcessClaim | null {
    const nowIso = iso(now);
    const head = this.stmts.processHead.get({ now: nowIso });
    if (!head) return null;
    const job = this.stmts.claimProcess.get({ id: head.id, status: head.status, owner, leaseUntil: leaseDeadline(now, leaseTtlMs), now: nowIso });
    return job ? { job, found: head.status === "fetched" ? "fetched" : "processing" } : null;
  }

  /** The user's usage for the quota check (USER_MAX_JOBS_IN_FLIGHT, USER_MAX_BYTES_PER_DAY). */
  private quotaUse(userId: number, now: number): QuotaUse {
    return {
      inFlight: this.stmts.inFlight.get({ userId })?.n ?? 0,
      bytesToday: this.stmts.bytesSince.get({ userId, since: iso(now - 86_400_000) })?.n ?? 0,
    };
  }

  /** Body of {@link intake}; runs inside its IMMEDIATE transaction. */
  private intakeBody(job: NewJob, now: number, o: IntakeOptions): IntakeOutcome {
    const existing = this.stmts.byKey.get(jobKey(job));
    const input = { updateId: job.updateId, tooBig: o.tooBig !== null, edited: o.edited };
    const decision = existing ? decideExisting(existing, input, now) : decideNew(input, () => this.quotaUse(job.userId, now), o.limits);
    let row: FileJob | null = existing;
    switch (decision.kind) {
      case "accept":
        row = this.stmts.insertAccepted.get(insertValues(job, now));
        break;
      case "too_big":
        row = this.stmts.insertTooBig.get({ ...insertValues(job, now), params: JSON.stringify(o.tooBig!.params), detail: o.tooBig!.detail });
        if (row) this.history.record(row.id, { step: "intake", outcome: "failed", reason: "too_big", params: o.tooBig!.params, detail: o.tooBig!.detail }, now);
        break;
      case "rearm":
        if (decision.expireFirst) this.expireNow(existing!.id, "ready", now);
        // The history keeps the end of the old life: why it had ended, then the new start.
        this.history.record(existing!.id, rearmNote(existing!, decision.from, job.updateId), now);
        this.rearmNow(existing!.id, decision.from, job, now);
        row = this.stmts.byId.get({ id: existing!.id });
        break;
      case "too_big_again":
        if (decision.expireFirst) this.expireNow(existing!.id, "ready", now);
        row = this.stmts.byId.get({ id: existing!.id });
        break;
      default:
        break;
    }
    // The key was read inside this IMMEDIATE transaction, so no other writer can have moved it.
    if ((decision.kind === "accept" || decision.kind === "too_big" || decision.kind === "rearm") && !row) throw new Error(`intake: ${decision.kind} wrote no row inside the transaction`);
    const kind = replyKindOf(decision);
    const text = kind === null ? null : o.render(decision, row);
    const reply =
      kind === null || text === null
        ? null
        : this.replies.insert({ updateId: job.updateId, chatId: job.chatId, userId: job.userId, replyTo: job.messageId, jobId: row?.id ?? null, kind, text }, now);
    return { decision, job: row, reply };
  }

  /** Body of {@link intakeAlbumPart}; runs inside its IMMEDIATE transaction. */
  private albumBody(album: NewJob, part: NewPart, now: number, quietMs: number, o: IntakeOptions, seed: NewPart | undefined): AlbumPartOutcome {
    const existing = this.stmts.byKey.get(jobKey(album));
    if (existing) {
      const known = this.db.select({ jobId: jobParts.jobId }).from(jobParts).where(eq(jobParts.updateId, part.updateId)).get();
      if (known) return { kind: "redelivered", job: existing };
      // The album's download has finished (or the job ended): the part cannot join it.
      if (existing.status !== "accepted") return { kind: "late", job: existing };
      const quota = decidePart(this.quotaUse(album.userId, now).bytesToday, o.limits);
      if (quota.kind === "limit") {
        this.insertPart(existing.id, part, { reason: "daily_quota", ...quotaRefusal(quota.used, o) });
        return { kind: "added", job: existing, refused: "daily_quota" };
      }
      this.insertPart(existing.id, part, part.tooBig ? { reason: "too_big", ...part.tooBig } : null);
      const job = this.db
        .update(fileJobs)
        .set({ declaredSize: (existing.declaredSize ?? 0) + part.reserveSize, notBefore: albumNotBefore(existing, now, quietMs), updatedAt: iso(now) })
        .where(eq(fileJobs.id, existing.id))
        .returning()
        .get()!;
      return { kind: "added", job };
    }
    const first = this.intakeBody({ ...album, declaredSize: part.reserveSize + (seed?.reserveSize ?? 0) }, now, { ...o, tooBig: null });
    if (first.decision.kind !== "accept" || !first.job) return { kind: "first", intake: first };
    if (seed) this.insertPart(first.job.id, seed, seed.tooBig ? { reason: "too_big", ...seed.tooBig } : null);
    this.insertPart(first.job.id, part, part.tooBig ? { reason: "too_big", ...part.tooBig } : null);
    const job = this.db.update(fileJobs).set({ notBefore: iso(now + quietMs) }).where(eq(fileJobs.id, first.job.id)).returning().get()!;
    return { kind: "first", intake: { ...first, job } };
  }

  /** INSERT one part: `accepted`, or `failed` with `refusal`'s reason (too big, over the daily quota). */
  private insertPart(jobId: number, part: NewPart, refusal: PartLeftOut | null): void {
    this.db
      .insert(jobParts)
      .values({
        jobId,
        messageId: part.messageId,
        updateId: part.updateId,
        source: part.source,
        fileId: part.fileId,
        fileUniqueId: part.fileUniqueId,
        declaredName: part.declaredName,
        declaredMime: part.declaredMime,
        declaredSize: part.declaredSize,
        status: refusal ? "failed" : "accepted",
        reason: refusal?.reason ?? null,
        reasonParams: refusal ? JSON.stringify(refusal.params) : null,
        lastError: refusal?.detail ?? null,
      })
      .run();
  }

  async intakeAlbumPart(album: NewJob, part: NewPart, now: number, quietMs: number, options: IntakeOptions, seed?: NewPart): Promise<AlbumPartOutcome> {
    return this.albumTx.immediate(album, part, now, quietMs, options, seed);
  }

  async albumFetched(id: number, owner: string, now: number, patch: TransitionPatch): Promise<"fetched" | "parts_pending" | "lost"> {
    return this.albumFetchedTx.immediate(id, owner, now, patch);
  }

  async reservePart(id: number, owner: string, bytes: number, held: number, total: number): Promise<"reserved" | "yielded" | "lost"> {
    return this.reservePartTx.immediate(id, owner, bytes, held, total);
  }

  async parts(jobId: number): Promise<JobPart[]> {
    return this.db.select().from(jobParts).where(eq(jobParts.jobId, jobId)).orderBy(asc(jobParts.messageId)).all();
  }

  /** WHERE of a part write: this part, its job `accepted` and leased by `owner`. */
  private partHeld(jobId: number, messageId: number, owner: string) {
    return and(
      eq(jobParts.jobId, jobId),
      eq(jobParts.messageId, messageId),
      sql`EXISTS (SELECT 1 FROM file_jobs WHERE file_jobs.id = ${jobId} AND file_jobs.status = 'accepted' AND file_jobs.lease_owner = ${owner})`,
    );
  }

  async markPartFetched(jobId: number, messageId: number, owner: string, file: FetchedPart): Promise<boolean> {
    const r = this.db
      .update(jobParts)
      .set({ status: "fetched", localPath: file.localPath, sha256: file.sha256, realSize: file.realSize, reason: null, reasonParams: null, lastError: null })
      .where(this.partHeld(jobId, messageId, owner))
      .returning({ messageId: jobParts.messageId })
      .all();
    return r.length > 0;
  }

  async failPart(jobId: number, messageId: number, owner: string, reason: ReasonCode, params: Readonly<Record<string, string | number>>, detail: string): Promise<boolean> {
    const r = this.db
      .update(jobParts)
      .set({ status: "failed", localPath: null, reason, reasonParams: JSON.stringify(params), lastError: detail })
      .where(this.partHeld(jobId, messageId, owner))
      .returning({ messageId: jobParts.messageId })
      .all();
    return r.length > 0;
  }

  async resetPart(jobId: number, messageId: number, owner: string): Promise<boolean> {
    const r = this.db
      .update(jobParts)
      .set({ status: "accepted", localPath: null, sha256: null, realSize: null })
      .where(this.partHeld(jobId, messageId, owner))
      .returning({ messageId: jobParts.messageId })
      .all();
    return r.length > 0;
  }

  async setPrompt(prompt: Omit<ChatPrompt, "createdAt">, now: number): Promise<void> {
    const row = { ...prompt, createdAt: iso(now) };
    this.db.insert(chatPrompts).values(row).onConflictDoUpdate({ target: [chatPrompts.chatId, chatPrompts.userId], set: { jobId: row.jobId, action: row.action, createdAt: row.createdAt } }).run();
  }

  async takePrompt(chatId: number, userId: number, now: number, maxAgeMs: number): Promise<ChatPrompt | null> {
    const row = this.db
      .delete(chatPrompts)
      .where(and(eq(chatPrompts.chatId, chatId), eq(chatPrompts.userId, userId)))
      .returning()
      .get();
    return row && Date.parse(row.createdAt) > now - maxAgeMs ? row : null;
  }

  async getPrompt(chatId: number, userId: number, now: number, maxAgeMs: number): Promise<ChatPrompt | null> {
    const row = this.db.select().from(chatPrompts).where(and(eq(chatPrompts.chatId, chatId), eq(chatPrompts.userId, userId))).get();
    return row && Date.parse(row.createdAt) > now - maxAgeMs ? row : null;
  }

  async intake(job: NewJob, now: number, options: IntakeOptions): Promise<IntakeOutcome> {
    return this.intakeTx.immediate(job, now, options);
  }

  async recordRefusal(reply: NewReply, now: number, windowMs: number): Promise<ChatReply | null> {
    return this.refusalTx.immediate(reply, now, windowMs);
  }

  async pendingReplies(now: number, limit: number, afterId = 0): Promise<ChatReply[]> {
    return this.replies.pending(now, limit, afterId);
  }

  async markReplySent(id: number, messageId: number, now: number): Promise<void> {
    this.replies.markSent(id, messageId, now);
  }

  async noteReplyMessage(id: number, messageId: number): Promise<void> {
    this.replies.noteMessage(id, messageId);
  }

  async retryReplyLater(id: number, notBefore: number, detail: string): Promise<void> {
    this.replies.retryLater(id, notBefore, detail);
  }

  async giveUpReply(id: number, detail: string, now: number): Promise<void> {
    this.replies.giveUp(id, detail, now);
  }

  async pruneReplies(before: number): Promise<number> {
    return this.replies.prune(before);
  }

  async accept(job: NewJob, now: number): Promise<{ job: FileJob; created: boolean }> {
    const inserted = this.stmts.insertAccepted.get(insertValues(job, now));
    if (inserted) return { job: inserted, created: true };
    const existing = this.stmts.byKey.get(jobKey(job));
    if (!existing) throw new Error("accept: conflict without an existing row");
    return { job: existing, created: false };
  }

  async rearm(id: number, from: "failed" | "expired", fresh: Pick<NewJob, "fileId" | "updateId" | "messageId" | "languageCode">, now: number): Promise<boolean> {
    return this.rearmTx(id, from, fresh, now);
  }

  /** `failed|expired → accepted` with the fresh message's fields, every per-try column cleared, old results dropped (synchronous). */
  private rearmNow(id: number, from: "failed" | "expired", fresh: Pick<NewJob, "fileId" | "updateId" | "messageId" | "languageCode">, now: number): boolean {
    const r = this.db
      .update(fileJobs)
      .set({
        fileId: fresh.fileId,
        updateId: fresh.updateId,
        messageId: fresh.messageId,
        languageCode: fresh.languageCode,
        status: "accepted",
        attempts: 0,
        leaseOwner: null,
        leaseUntil: null,
        notBefore: null,
        reason: null,
        reasonParams: null,
        lastError: null,
        localPath: null,
        sha256: null,
        realSize: null,
        facts: null,
        detectedType: null,
        resultExpiresAt: null,
        finishedAt: null,
        statusMessageId: null,
        finalText: null,
        finalMarkup: null,
        finalOwner: null,
        finalUntil: null,
        finalTries: 0,
        finalDoneAt: null,
        reservedBytes: 0,
        updatedAt: iso(now),
      })
      .where(and(eq(fileJobs.id, id), eq(fileJobs.status, from)))
      .returning({ id: fileJobs.id })
      .all();
    if (r.length > 0) this.db.delete(jobResults).where(eq(jobResults.jobId, id)).run();
    return r.length > 0;
  }

  async setStatusMessage(id: number, messageId: number): Promise<void> {
    this.db.update(fileJobs).set({ statusMessageId: messageId }).where(eq(fileJobs.id, id)).run();
  }

  async get(id: number): Promise<FileJob | undefined> {
    return this.stmts.byId.get({ id }) ?? undefined;
  }

  async getSettings(chatId: number): Promise<{ pdfAction: string }> {
    const row = this.db.select().from(chatSettings).where(eq(chatSettings.chatId, chatId)).get();
    return { pdfAction: row?.pdfAction ?? "default" };
  }

  async setSettings(chatId: number, settings: { pdfAction: string }, now: number): Promise<void> {
    this.db
      .insert(chatSettings)
      .values({ chatId, pdfAction: settings.pdfAction, updatedAt: iso(now) })
      .onConflictDoUpdate({ target: chatSettings.chatId, set: { pdfAction: settings.pdfAction, updatedAt: iso(now) } })
      .run();
  }

  async listByChat(chatId: number, limit: number): Promise<FileJob[]> {
    return this.db.select().from(fileJobs).where(eq(fileJobs.chatId, chatId)).orderBy(desc(fileJobs.id)).limit(limit).all();
  }

  async findReadyBySha(chatId: number, sha256: string, variant: string, now: number, excludeId: number): Promise<FileJob | undefined> {
    return this.db
      .select()
      .from(fileJobs)
      .where(
        and(
          eq(fileJobs.chatId, chatId),
          eq(fileJobs.sha256, sha256),
          eq(fileJobs.variant, variant),
          eq(fileJobs.status, "ready"),
          ne(fileJobs.id, excludeId),
          sql`${fileJobs.resultExpiresAt} > ${iso(now)}`,
        ),
      )
      .orderBy(desc(fileJobs.id))
      .get();
  }

  async claimDownload(owner: string, now: number, leaseTtlMs: number, budget: BudgetParams, release: readonly number[] = []): Promise<FileJob | null> {
    return this.claimDownloadTx.immediate(owner, now, leaseTtlMs, budget, release);
  }

  async claimProcess(owner: string, now: number, leaseTtlMs: number): Promise<ProcessClaim | null> {
    return this.claimProcessTx.immediate(owner, now, leaseTtlMs);
  }

  async handOver(id: number, owner: string, now: number, leaseTtlMs: number, source: FetchedSource, release: readonly number[] = []): Promise<ProcessClaim | null> {
    const values = { id, owner, leaseUntil: leaseDeadline(now, leaseTtlMs), now: iso(now), localPath: source.localPath, sha256: source.sha256, realSize: source.realSize, reservedBytes: source.reservedBytes };
    const job = release.length > 0 ? this.handOverTx.immediate(release, values) : this.stmts.handOver.get(values);
    return job ? { job, found: "fetched" } : null;
  }

  async reclaimHostLeases(hostId: string, self: string, now: number): Promise<Array<{ id: number; status: JobState; from: string }>> {
    const prefix = `${hostId}${OWNER_SEPARATOR}`;
    return this.db.transaction(
      (tx) => {
        const held = tx
          .select({ id: fileJobs.id, status: fileJobs.status, from: sql<string>`${fileJobs.leaseOwner}` })
          .from(fileJobs)
          .where(
            and(
              inArray(fileJobs.status, [...ACTIVE_STATES]),
              ne(fileJobs.leaseOwner, self),
              // substr, not LIKE: a host id may contain `_`, a LIKE wildcard.
              sql`(substr(${fileJobs.leaseOwner}, 1, ${prefix.length}) = ${prefix} OR instr(${fileJobs.leaseOwner}, ${OWNER_SEPARATOR}) = 0)`,
            ),
          )
          .all();
        for (const h of held) {
          tx.update(fileJobs)
            .set({ leaseOwner: null, leaseUntil: null, updatedAt: iso(now) })
            .where(and(eq(fileJobs.id, h.id), eq(fileJobs.leaseOwner, h.from)))
            .run();
          this.history.record(h.id, { step: attemptStep(h.status, INTERRUPTED), outcome: "interrupted", reason: INTERRUPTED, detail: `the process ${h.from} holding it died; taken back by ${self}` }, now);
        }
        return held;
      },
      { behavior: "immediate" },
    );
  }

  async renew(id: number, owner: string, now: number, leaseTtlMs: number): Promise<boolean> {
    return this.stmts.renew.run({ id, owner, leaseUntil: leaseDeadline(now, leaseTtlMs) }).changes > 0;
  }

  async transition(id: number, from: JobState, to: JobState, owner: string, now: number, patch: TransitionPatch = {}): Promise<boolean> {
    if (!canTransition(from, to)) throw new Error(`illegal transition ${from} → ${to} (job ${id})`);
    const { shape, values } = transitionPatch(patch, !isActive(to));
    return this.stmts.transition(shape).run({ ...values, id, from, to, owner, now: iso(now) }).changes > 0;
  }

  async replaceSource(id: number, state: "fetched" | "processing", owner: string, now: number, source: SourceFields): Promise<boolean> {
    const r = this.db
      .update(fileJobs)
      .set({ localPath: source.localPath, sha256: source.sha256, realSize: source.realSize, updatedAt: iso(now) })
      .where(and(eq(fileJobs.id, id), eq(fileJobs.status, state), eq(fileJobs.leaseOwner, owner)))
      .returning({ id: fileJobs.id })
      .all();
    return r.length > 0;
  }

  async retryLater(id: number, state: JobState, owner: string, notBefore: number, failure: FailureNote, now: number): Promise<boolean> {
    return this.retryTx(id, state, owner, notBefore, failure, now);
  }

  async fail(id: number, from: JobState, owner: string | null, reason: ReasonCode, params: Readonly<Record<string, string | number>>, detail: string, now: number, final?: FinalStatus): Promise<boolean> {
    return this.failTx(id, from, owner, reason, params, detail, now, final);
  }

  async pendingFinals(now: number, limit: number): Promise<FileJob[]> {
    return this.finals.pending(now, limit);
  }

  async claimFinal(id: number, owner: string, now: number, until: number): Promise<FileJob | null> {
    return this.finals.claim(id, owner, now, until);
  }

  async renewFinals(owner: string, until: number): Promise<number> {
    return this.finals.renew(owner, until);
  }

  async finishFinal(id: number, now: number): Promise<boolean> {
    return this.finals.finish(id, now);
  }

  async retryFinalLater(id: number, owner: string, notBefore: number): Promise<boolean> {
    return this.finals.retryLater(id, owner, notBefore);
  }

  async reclaimHostFinals(hostId: string, self: string): Promise<number> {
    return this.finals.reclaimHost(hostId, self);
  }

  async attempts(id: number): Promise<JobAttempt[]> {
    return this.history.list(id);
  }

  async setReservation(id: number, bytes: number): Promise<void> {
    this.db.update(fileJobs).set({ reservedBytes: bytes }).where(eq(fileJobs.id, id)).run();
  }

  async budgetInUse(): Promise<number> {
    return this.db.select({ n: sql<number>`coalesce(sum(${fileJobs.reservedBytes}), 0)` }).from(fileJobs).where(gt(fileJobs.reservedBytes, 0)).get()?.n ?? 0;
  }

  async queuePosition(id: number): Promise<number | null> {
    const job = await this.get(id);
    if (!job || (job.status !== "accepted" && job.status !== "fetched")) return null;
    const r = this.db
      .select({ n: sql<number>`count(*)` })
      .from(fileJobs)
      .where(and(eq(fileJobs.status, job.status), sql`${fileJobs.id} <= ${id}`))
      .get();
    return r?.n ?? null;
  }

  async putResults(id: number, results: readonly NewResult[]): Promise<void> {
    this.db.transaction((tx) => {
      tx.delete(jobResults).where(eq(jobResults.jobId, id)).run();
      for (const r of results) tx.insert(jobResults).values({ jobId: id, ...r }).run();
    });
  }

  async results(id: number): Promise<JobResult[]> {
    return this.db.select().from(jobResults).where(eq(jobResults.jobId, id)).orderBy(asc(jobResults.idx)).all();
  }

  async setResultFileId(id: number, idx: number, fileId: string): Promise<void> {
    this.db.update(jobResults).set({ telegramFileId: fileId }).where(and(eq(jobResults.jobId, id), eq(jobResults.idx, idx))).run();
  }

  async dueForExpiry(now: number): Promise<FileJob[]> {
    return this.db
      .select()
      .from(fileJobs)
      .where(and(eq(fileJobs.status, "ready"), lte(fileJobs.resultExpiresAt, iso(now))))
      .all();
  }

  async expire(id: number, from: "ready" | "failed", now: number): Promise<boolean> {
    return this.expireNow(id, from, now);
  }

  /** `ready|failed → expired`, reservation released (synchronous). */
  private expireNow(id: number, from: "ready" | "failed", now: number): boolean {
    const r = this.db
      .update(fileJobs)
      .set({ status: "expired", updatedAt: iso(now), reservedBytes: 0 })
      .where(and(eq(fileJobs.id, id), eq(fileJobs.status, from)))
      .returning({ id: fileJobs.id })
      .all();
    return r.length > 0;
  }

  async listByState(states: readonly JobState[]): Promise<FileJob[]> {
    return this.db.select().from(fileJobs).where(inArray(fileJobs.status, [...states])).orderBy(asc(fileJobs.id)).all();
  }

  async countByState(): Promise<Record<string, number>> {
    const rows = this.db.select({ status: fileJobs.status, n: sql<number>`count(*)` }).from(fileJobs).groupBy(fileJobs.status).all();
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  }

  async countFailedByReason(sinceMs?: number): Promise<Record<string, number>> {
    const failed = eq(fileJobs.status, "failed");
    const rows = this.db
      .select({ reason: fileJobs.reason, n: sql<number>`count(*)` })
      .from(fileJobs)
      .where(sinceMs === undefined ? failed : and(failed, gte(fileJobs.finishedAt, iso(sinceMs))))
      .groupBy(fileJobs.reason)
      .all();
    return Object.fromEntries(rows.map((r) => [r.reason ?? "unknown", r.n]));
  }

  async recordAlert(alert: NewAlert, now: number): Promise<number> {
    return this.alerts.record(alert, now);
  }

  async pendingAlerts(now: number): Promise<OpsAlert[]> {
    return this.alerts.pending(now);
  }

  async claimAlert(id: number, now: number): Promise<boolean> {
    return this.alerts.claim(id, now);
  }

  async settleAlert(id: number, state: Exclude<AlertState, "pending" | "sending">, detail: string | null, now: number): Promise<boolean> {
    return this.alerts.settle(id, state, detail, now);
  }

  async alertsSince(sinceMs: number): Promise<OpsAlert[]> {
    return this.alerts.since(sinceMs);
  }

  async releaseReservation(id: number): Promise<boolean> {
    return this.stmts.releaseReservation.run({ id }).changes > 0;
  }

  async setReservationIf(id: number, owner: string | null, bytes: number): Promise<boolean> {
    const r = this.db
      .update(fileJobs)
      .set({ reservedBytes: bytes })
      .where(and(eq(fileJobs.id, id), sql`${fileJobs.leaseOwner} IS ${owner}`))
      .returning({ id: fileJobs.id })
      .all();
    return r.length > 0;
  }
}
