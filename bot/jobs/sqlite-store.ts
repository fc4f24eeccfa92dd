/**
 * The SQLite `JobStore` (bun:sqlite + drizzle-orm). Claims run in IMMEDIATE
 * transactions so two workers (or two processes) never take the same job.
 */
import { and, asc, desc, eq, gt, gte, inArray, isNull, lte, ne, or, sql } from "drizzle-orm";
import type { DocketDb } from "../db/open.ts";
import { chatSettings, fileJobs, jobResults, type FileJob, type JobResult, type JobState } from "../db/schema.ts";
import { fits, reservationFor } from "./budget.ts";
import { iso, leaseDeadline } from "./lease.ts";
import { ACTIVE_STATES, canTransition, isActive, poolFor } from "./states.ts";
import type { ReasonCode } from "./reasons.ts";
import type { BudgetParams, JobStore, NewJob, NewResult, TransitionPatch, UserLimits } from "./store.ts";

const claimableAt = (nowIso: string) =>
  and(
    or(isNull(fileJobs.leaseUntil), lte(fileJobs.leaseUntil, nowIso)),
    or(isNull(fileJobs.notBefore), lte(fileJobs.notBefore, nowIso)),
  );

/** Files refused as too big were never downloaded: they do not count toward bytes per day. */
const notRefusedTooBig = or(isNull(fileJobs.reason), ne(fileJobs.reason, "too_big"));

/** The idempotency key of a job: (chat_id, file_unique_id, variant). */
const sameFile = (job: Pick<NewJob, "chatId" | "fileUniqueId" | "variant">) =>
  and(eq(fileJobs.chatId, job.chatId), eq(fileJobs.fileUniqueId, job.fileUniqueId), eq(fileJobs.variant, job.variant ?? "default"));

/** States the processing pool works on (bot/jobs/states.ts). */
const PROCESS_STATES = ACTIVE_STATES.filter((s) => poolFor(s) === "process");

/** {@link JobStore} over one SQLite database. */
export class SqliteJobStore implements JobStore {
  /** @param db drizzle handle from `openDb` */
  constructor(private readonly db: DocketDb) {}

  async accept(job: NewJob, now: number): Promise<{ job: FileJob; created: boolean }> {
    const t = iso(now);
    const inserted = this.db
      .insert(fileJobs)
      .values({ ...job, status: "accepted", createdAt: t, updatedAt: t })
      .onConflictDoNothing()
      .returning()
      .all();
    if (inserted[0]) return { job: inserted[0], created: true };
    const existing = this.db.select().from(fileJobs).where(sameFile(job)).get();
    if (!existing) throw new Error("accept: conflict without an existing row");
    return { job: existing, created: false };
  }

  async acceptWithinLimits(job: NewJob, now: number, limits: UserLimits) {
    return this.db.transaction(
      (tx) => {
        const existing = tx.select().from(fileJobs).where(sameFile(job)).get();
        if (existing) return { job: existing, created: false };
        const inFlight =
          tx
            .select({ n: sql<number>`count(*)` })
            .from(fileJobs)
            .where(and(eq(fileJobs.userId, job.userId), inArray(fileJobs.status, [...ACTIVE_STATES])))
            .get()?.n ?? 0;
        if (inFlight >= limits.maxInFlight) return { refused: { limit: "in_flight" as const, count: inFlight } };
        const used =
          tx
            .select({ n: sql<number>`coalesce(sum(coalesce(${fileJobs.realSize}, ${fileJobs.declaredSize}, 0)), 0)` })
            .from(fileJobs)
            .where(and(eq(fileJobs.userId, job.userId), gte(fileJobs.createdAt, iso(now - 86_400_000)), notRefusedTooBig))
            .get()?.n ?? 0;
        if (used >= limits.maxBytesPerDay) return { refused: { limit: "bytes_per_day" as const, used } };
        const t = iso(now);
        const inserted = tx.insert(fileJobs).values({ ...job, status: "accepted", createdAt: t, updatedAt: t }).returning().get();
        return { job: inserted, created: true };
      },
      { behavior: "immediate" },
    );
  }

  async rearm(id: number, from: "failed" | "expired", fresh: Pick<NewJob, "fileId" | "updateId" | "messageId" | "languageCode">, now: number): Promise<boolean> {
    const r = this.db
      .update(fileJobs)
      .set({
        ...fresh,
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
        reservedBytes: 0,
        updatedAt: iso(now),
      })
      .where(and(eq(fileJobs.id, id), eq(fileJobs.status, from)))
      .returning({ id: fileJobs.id })
      .all();
    if (r.length > 0) this.db.delete(jobResults).where(eq(jobResults.jobId, id)).returning({ id: fileJobs.id })
      .all();
    return r.length > 0;
  }

  async setStatusMessage(id: number, messageId: number): Promise<void> {
    this.db.update(fileJobs).set({ statusMessageId: messageId }).where(eq(fileJobs.id, id)).run();
  }

  async get(id: number): Promise<FileJob | undefined> {
    return this.db.select().from(fileJobs).where(eq(fileJobs.id, id)).get();
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

  async claimDownload(owner: string, now: number, leaseTtlMs: number, budget: BudgetParams): Promise<FileJob | null> {
    const nowIso = iso(now);
    return this.db.transaction(
      (tx) => {
        const head = tx
          .select()
          .from(fileJobs)
          .where(and(eq(fileJobs.status, "accepted"), claimableAt(nowIso)))
          .orderBy(asc(fileJobs.id))
          .limit(1)
          .get();
        if (!head) return null;
        const reservation = reservationFor(head.declaredSize, budget.multiplier, budget.modeLimit, budget.total, budget.floor);
        const used = tx
          .select({ n: sql<number>`coalesce(sum(${fileJobs.reservedBytes}), 0)` })
          .from(fileJobs)
          .where(and(gt(fileJobs.reservedBytes, 0), ne(fileJobs.id, head.id)))
          .get();
        if (!fits(used?.n ?? 0, reservation, budget.total)) return null;
        const claimed = tx
          .update(fileJobs)
          .set({
            leaseOwner: owner,
            leaseUntil: leaseDeadline(now, leaseTtlMs),
            attempts: sql`${fileJobs.attempts} + 1`,
            reservedBytes: reservation,
            notBefore: null,
            updatedAt: nowIso,
          })
          .where(and(eq(fileJobs.id, head.id), eq(fileJobs.status, "accepted")))
          .returning()
          .get();
        return claimed ?? null;
      },
      { behavior: "immediate" },
    );
  }

  async claimProcess(owner: string, now: number, leaseTtlMs: number): Promise<FileJob | null> {
    const nowIso = iso(now);
    return this.db.transaction(
      (tx) => {
        const head = tx
          .select({ id: fileJobs.id, status: fileJobs.status })
          .from(fileJobs)
          .where(and(inArray(fileJobs.status, PROCESS_STATES), claimableAt(nowIso)))
          .orderBy(asc(fileJobs.id))
          .limit(1)
          .get();
        if (!head) return null;
        const claimed = tx
          .update(fileJobs)
          .set({ leaseOwner: owner, leaseUntil: leaseDeadline(now, leaseTtlMs), attempts: sql`${fileJobs.attempts} + 1`, notBefore: null, updatedAt: nowIso })
          .where(and(eq(fileJobs.id, head.id), eq(fileJobs.status, head.status)))
          .returning()
          .get();
        return claimed ?? null;
      },
      { behavior: "immediate" },
    );
  }

  async renew(id: number, owner: string, now: number, leaseTtlMs: number): Promise<boolean> {
    const r = this.db
      .update(fileJobs)
      .set({ leaseUntil: leaseDeadline(now, leaseTtlMs) })
      .where(and(eq(fileJobs.id, id), eq(fileJobs.leaseOwner, owner), inArray(fileJobs.status, [...ACTIVE_STATES])))
      .returning({ id: fileJobs.id })
      .all();
    return r.length > 0;
  }

  async transition(id: number, from: JobState, to: JobState, owner: string, now: number, patch: TransitionPatch = {}): Promise<boolean> {
    if (!canTransition(from, to)) throw new Error(`illegal transition ${from} → ${to} (job ${id})`);
    const { keepLease, resetAttempts, ...fields } = patch;
    const final = !isActive(to);
    const r = this.db
      .update(fileJobs)
      .set({
        ...fields,
        status: to,
        updatedAt: iso(now),
        ...(keepLease ? {} : { leaseOwner: null, leaseUntil: null }),
        ...(resetAttempts ? { attempts: 0 } : {}),
        ...(final ? { finishedAt: iso(now) } : {}),
      })
      .where(and(eq(fileJobs.id, id), eq(fileJobs.status, from), eq(fileJobs.leaseOwner, owner)))
      .returning({ id: fileJobs.id })
      .all();
    return r.length > 0;
  }

  async retryLater(id: number, state: JobState, owner: string, notBefore: number, detail: string, now: number): Promise<boolean> {
    const r = this.db
      .update(fileJobs)
      .set({ leaseOwner: null, leaseUntil: null, notBefore: iso(notBefore), lastError: detail, updatedAt: iso(now) })
      .where(and(eq(fileJobs.id, id), eq(fileJobs.status, state), eq(fileJobs.leaseOwner, owner)))
      .returning({ id: fileJobs.id })
      .all();
    return r.length > 0;
  }

  async fail(id: number, from: JobState, owner: string | null, reason: ReasonCode, params: Readonly<Record<string, string | number>>, detail: string, now: number): Promise<boolean> {
    const t = iso(now);
    const r = this.db
      .update(fileJobs)
      .set({ status: "failed", reason, reasonParams: JSON.stringify(params), lastError: detail, leaseOwner: null, leaseUntil: null, updatedAt: t, finishedAt: t })
      .where(and(eq(fileJobs.id, id), eq(fileJobs.status, from), owner === null ? sql`1 = 1` : eq(fileJobs.leaseOwner, owner)))
      .returning({ id: fileJobs.id })
      .all();
    return r.length > 0;
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
}
