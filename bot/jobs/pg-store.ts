/**
 * The PostgreSQL `JobStore` (issue 14 item 1), selected by `DATABASE_URL`: the same conditional
 * writes as the SQLite store, over a pool of connections shared by several processes and hosts.
 *
 * - Claims take one row with `FOR UPDATE SKIP LOCKED`, so concurrent claimers on any host never take
 *   the same job nor wait for each other's row. The processing claim is one statement. The download
 *   claim decides the byte budget, so the claims of one budget run one at a time: a transaction
 *   takes `pg_advisory_xact_lock` on the budget first, then reads head and sum and writes the claim,
 *   all inside one server-side function call (two claims reading the same sum could both fit and
 *   together overrun it).
 * - `intake` (key read, decision, writes and the reply in one transaction) serializes one user's
 *   intake the same way (the SQLite store's IMMEDIATE transaction serializes every writer).
 * - Every other write is one conditional UPDATE whose WHERE is the SQLite store's: state, and the
 *   lease owner where the engine holds a lease (seed 000: conditional UPDATE).
 * Hot paths run the compiled statements of ./pg-statements.ts — alone on Bun's SQL client
 * (bot/db/pg-statements-pool.ts), inside a transaction on postgres.js; the rest uses drizzle's pg dialect.
 */
import { and, asc, desc, eq, gt, gte, inArray, lte, ne, sql as dsql } from "drizzle-orm";
import { drizzle, type PostgresJsDatabase } from "drizzle-orm/postgres-js";
import type { OpenPg, PgSql } from "../db/pg-open.ts";
import type { PgStatements } from "../db/pg-statements-pool.ts";
import { KEYED_LOCK_CLASS } from "../db/pg-locks.ts";
import * as pg from "../db/pg-schema.ts";
import type { ChatPrompt, ChatReply, FileJob, JobAttempt, JobPart, JobResult, JobState } from "../db/schema.ts";
import { decideExisting, decideNew, decidePart, replyKindOf, STATUS_REPLY_KINDS, type QuotaUse } from "./intake-rules.ts";
import { albumNotBefore, quotaRefusal } from "./album-intake.ts";
import { fits, reservationFor } from "./budget.ts";
import { iso, leaseDeadline } from "./lease.ts";
import { OWNER_SEPARATOR } from "./owner.ts";
import { bind, compile, F, H, idArray, Q, R, type Compiled, type Params } from "./pg-statements.ts";
import { attemptStep, INTERRUPTED, type AttemptNote } from "./attempts.ts";
import { PgAlerts } from "./pg-alerts.ts";
import { PgParts } from "./pg-parts.ts";
import type { ReasonCode } from "./reasons.ts";
import { canTransition, isActive } from "./states.ts";
import type { AlbumPartOutcome, AlertState, BudgetParams, FailureNote, FetchedPart, FinalStatus, FetchedSource, ProcessClaim, IntakeOptions, IntakeOutcome, JobStore, NewAlert, NewJob, NewPart, NewReply, NewResult, OpsAlert, SourceFields, TransitionPatch } from "./store.ts";
import { finalColumns, transitionPatch, transitionSql, type TransitionShape } from "./sqlite-statements.ts";
import { hostPrefix } from "./final-sql.ts";

const { fileJobs, jobResults, chatSettings } = pg;

/** `status = 'ready'` as a literal, so the planner can use the partial indexes on `ready` rows (a bound value cannot). */
const READY = dsql`${fileJobs.status} = 'ready'`;


/** A client or a transaction of it: both run tagged and unsafe queries. */
type Runner = Pick<PgSql, "unsafe">;

/** The idempotency key of a job as bound values (seed 000: UNIQUE key). */
const jobKey = (job: Pick<NewJob, "chatId" | "fileUniqueId" | "variant">) => ({ chatId: job.chatId, fileUniqueId: job.fileUniqueId, variant: job.variant ?? "default" });

/** Bound values of the INSERT of a new `accepted` job. */
const insertValues = (job: NewJob, now: number): Params => ({
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

/** A 64-bit id folded into the int4 object key of an advisory lock (collisions only serialize more). */
const lockKey = (n: number): number => Number(BigInt.asIntN(32, BigInt(Math.trunc(n))));

/** The history row of a re-arm (bot/jobs/attempts.ts): why the old life ended, with its params, then the new start. */
function rearmNote(old: FileJob, from: "failed" | "expired", updateId: number): AttemptNote {
  const params = from === "failed" && old.reasonParams ? (JSON.parse(old.reasonParams) as Record<string, string | number>) : undefined;
  return { step: "intake", outcome: "rearmed", reason: from === "expired" ? "expired" : (old.reason ?? "attempts_exhausted"), ...(params ? { params } : {}), detail: `a re-sent file (update ${updateId}) started the job again from ${from}` };
}

/** {@link JobStore} over one PostgreSQL database. */
export class PgJobStore implements JobStore {
  private readonly db: PostgresJsDatabase<typeof pg>;
  private readonly transitions = new Map<string, Compiled>();

  /** postgres.js: transactions and drizzle's queries. */
  private readonly sql: PgSql;
  /** Bun's SQL client: every compiled statement run outside a transaction (bot/db/pg-statements-pool.ts). */
  private readonly statements: PgStatements;

  /** @param pools both pools from `openPg` or `pgPools` (bot/db/pg-open.ts) */
  constructor(pools: Pick<OpenPg, "sql" | "statements">) {
    this.sql = pools.sql;
    this.statements = pools.statements;
    this.db = drizzle(pools.sql as never, { schema: pg });
    this.alerts = new PgAlerts(this.db);
    this.partsOf = new PgParts(this.db);
  }

  /** The `job_parts` / `chat_prompts` statements (./pg-parts.ts). */
  private readonly partsOf: PgParts;

  /** The `ops_alerts` statements (./pg-alerts.ts). */
  private readonly alerts: PgAlerts;

  /** Run a compiled statement, alone on the statement pool or inside the transaction `on`; its rows. */
  private async run<R>(c: Compiled, values: Params, on?: Runner): Promise<R[]> {
    if (!on) return this.statements.rows<R>(c.text, bind(c, values));
    return (await on.unsafe(c.text, bind(c, values) as never[], { prepare: true })) as unknown as R[];
  }

  /** Record `note` in job `id`'s history (inside the caller's transaction `on`). */
  private async record(on: Runner, id: number, note: AttemptNote, now: number): Promise<void> {
    const params = note.params && Object.keys(note.params).length > 0 ? JSON.stringify(note.params) : null;
    await this.run(H.insert, { id, at: iso(now), step: note.step, outcome: note.outcome, reason: note.reason, params, detail: note.detail }, on);
  }

  /** Run a compiled write; how many rows it changed. */
  private async changed(c: Compiled, values: Params): Promise<number> {
    return this.statements.count(c.text, bind(c, values));
  }

  async accept(job: NewJob, now: number): Promise<{ job: FileJob; created: boolean }> {
    const [inserted] = await this.run<FileJob>(Q.insertAccepted, insertValues(job, now));
    if (inserted) return { job: inserted, created: true };
    const [existing] = await this.run<FileJob>(Q.byKey, jobKey(job));
    if (!existing) throw new Error("accept: conflict without an existing row");
    return { job: existing, created: false };
  }

  async intake(job: NewJob, now: number, o: IntakeOptions): Promise<IntakeOutcome> {
    return (await this.sql.begin(async (tx) => {
      // One user's intake at a time: the quota read and the INSERT must not interleave with another
      // chat's handler of the same user (the SQLite store's IMMEDIATE transaction serializes every writer).
      await this.run(Q.xactLock, { cls: KEYED_LOCK_CLASS.user, key: lockKey(job.userId) }, tx);
      return this.intakeOn(tx, job, now, o);
    })) as IntakeOutcome;
  }

  /**
   * One album part in ONE transaction under the user's lock (the same lock as intake: an album's parts
   * come from one sender), as the SQLite store's albumBody: the first part goes through intake for the
   * album job; later ones are added while no download has claimed it; a redelivered update is known;
   * otherwise `late`, nothing written.
   */
  async intakeAlbumPart(album: NewJob, part: NewPart, now: number, quietMs: number, o: IntakeOptions, seed?: NewPart): Promise<AlbumPartOutcome> {
    return (await this.sql.begin(async (tx) => {
      await this.run(Q.xactLock, { cls: KEYED_LOCK_CLASS.user, key: lockKey(album.userId) }, tx);
      const [found] = await this.run<FileJob>(Q.byKey, jobKey(album), tx);
      // The row locked before its state is read: albumFetched locks it too, so a part either joins before
      // the download's last check (and is downloaded) or finds the job `fetched` (late) — never in between.
      const [existing] = found ? await this.run<FileJob>(Q.byIdForUpdate, { id: found.id }, tx) : [];
      if (existing) {
        if (await this.partsOf.known(tx, part.updateId)) return { kind: "redelivered", job: existing };
        // The album's download has finished (or the job ended): the part cannot join it.
        if (existing.status !== "accepted") return { kind: "late", job: existing };
        const [use] = await this.run<QuotaUse>(Q.userUsage, { userId: album.userId, since: iso(now - 86_400_000) }, tx);
        const quota = decidePart(Number(use?.bytesToday ?? 0), o.limits);
        if (quota.kind === "limit") {
          await this.partsOf.insert(tx, existing.id, part, { reason: "daily_quota", ...quotaRefusal(quota.used, o) });
          return { kind: "added", job: existing, refused: "daily_quota" };
        }
        await this.partsOf.insert(tx, existing.id, part, part.tooBig ? { reason: "too_big", ...part.tooBig } : null);
        const [job] = await this.run<FileJob>(Q.albumGrew, { id: existing.id, declaredSize: (existing.declaredSize ?? 0) + part.reserveSize, notBefore: albumNotBefore(existing, now, quietMs), now: iso(now) }, tx);
        return { kind: "added", job: job! };
      }
      const first = await this.intakeOn(tx, { ...album, declaredSize: part.reserveSize + (seed?.reserveSize ?? 0) }, now, { ...o, tooBig: null });
      if (first.decision.kind !== "accept" || !first.job) return { kind: "first", intake: first };
      if (seed) await this.partsOf.insert(tx, first.job.id, seed, seed.tooBig ? { reason: "too_big", ...seed.tooBig } : null);
      await this.partsOf.insert(tx, first.job.id, part, part.tooBig ? { reason: "too_big", ...part.tooBig } : null);
      const [job] = await this.run<FileJob>(Q.albumQuiet, { id: first.job.id, notBefore: iso(now + quietMs) }, tx);
      return { kind: "first", intake: { ...first, job: job! } };
    })) as AlbumPartOutcome;
  }

  /** As the SQLite store: the row locked (intakeAlbumPart locks it too), then the parts counted in a statement that sees every committed part. */
  async albumFetched(id: number, owner: string, now: number, patch: TransitionPatch): Promise<"fetched" | "parts_pending" | "lost"> {
    return (await this.sql.begin(async (tx) => {
      const [job] = await this.run<FileJob>(Q.byIdForUpdate, { id }, tx);
      if (job?.status !== "accepted" || job.leaseOwner !== owner) return "lost";
      const [pending] = await this.run<{ n: number }>(Q.partsAccepted, { id }, tx);
      if (Number(pending?.n ?? 0) > 0) return "parts_pending";
      const { shape, values } = transitionPatch(patch, false);
      const c = this.transitionStatement(shape);
      const r = await tx.unsafe(c.text, bind(c, { ...values, id, from: "accepted", to: "fetched", owner, now: iso(now) }) as never[], { prepare: true });
      return r.count > 0 ? "fetched" : "lost";
    })) as "fetched" | "parts_pending" | "lost";
  }

  /** As the SQLite store, under the budget lock the download claims take (one budget decision at a time). */
  async reservePart(id: number, owner: string, bytes: number, held: number, total: number): Promise<"reserved" | "yielded" | "lost"> {
    return (await this.sql.begin(async (tx) => {
      await this.run(Q.xactLock, { cls: KEYED_LOCK_CLASS.budget, key: 0 }, tx);
      const [job] = await this.run<FileJob>(Q.byIdForUpdate, { id }, tx);
      if (job?.status !== "accepted" || job.leaseOwner !== owner) return "lost";
      const [others] = await this.run<{ n: number }>(Q.reservedExcept, { id }, tx);
      if (bytes <= Number(job.reservedBytes) || fits(Number(others?.n ?? 0), bytes, total)) {
        await this.run(Q.setReserved, { id, bytes }, tx);
        return "reserved";
      }
      await this.run(Q.yieldDownload, { id, held }, tx);
      return "yielded";
    })) as "reserved" | "yielded" | "lost";
  }

  async parts(jobId: number): Promise<JobPart[]> {
    return this.partsOf.list(jobId);
  }

  async markPartFetched(jobId: number, messageId: number, owner: string, file: FetchedPart): Promise<boolean> {
    return this.partsOf.fetched(jobId, messageId, owner, file);
  }

  async failPart(jobId: number, messageId: number, owner: string, reason: ReasonCode, params: Readonly<Record<string, string | number>>, detail: string): Promise<boolean> {
    return this.partsOf.failed(jobId, messageId, owner, reason, params, detail);
  }

  async resetPart(jobId: number, messageId: number, owner: string): Promise<boolean> {
    return this.partsOf.reset(jobId, messageId, owner);
  }

  async setPrompt(prompt: Omit<ChatPrompt, "createdAt">, now: number): Promise<void> {
    return this.partsOf.setPrompt(prompt, now);
  }

  async takePrompt(chatId: number, userId: number, now: number, maxAgeMs: number): Promise<ChatPrompt | null> {
    return this.partsOf.takePrompt(chatId, userId, now, maxAgeMs);
  }

  async getPrompt(chatId: number, userId: number, now: number, maxAgeMs: number): Promise<ChatPrompt | null> {
    return this.partsOf.getPrompt(chatId, userId, now, maxAgeMs);
  }

  /** Body of {@link intake} inside `tx`, the user's lock held. */
  private async intakeOn(tx: Runner, job: NewJob, now: number, o: IntakeOptions): Promise<IntakeOutcome> {
    {
      const [existing] = await this.run<FileJob>(Q.byKey, jobKey(job), tx);
      const input = { updateId: job.updateId, tooBig: o.tooBig !== null, edited: o.edited };
      // decideNew reads the quota only for a new file that fits; read it here for that case (async).
      const use = !existing && !input.tooBig ? (await this.run<QuotaUse>(Q.userUsage, { userId: job.userId, since: iso(now - 86_400_000) }, tx))[0] : undefined;
      const decision = existing ? decideExisting(existing, input, now) : decideNew(input, () => use ?? { inFlight: 0, bytesToday: 0 }, o.limits);
      let row: FileJob | null = existing ?? null;
      switch (decision.kind) {
        case "accept":
          row = (await this.run<FileJob>(Q.insertAccepted, insertValues(job, now), tx))[0] ?? null;
          break;
        case "too_big":
          row = (await this.run<FileJob>(Q.insertTooBig, { ...insertValues(job, now), params: JSON.stringify(o.tooBig!.params), detail: o.tooBig!.detail }, tx))[0] ?? null;
          if (row) await this.record(tx, row.id, { step: "intake", outcome: "failed", reason: "too_big", params: o.tooBig!.params, detail: o.tooBig!.detail }, now);
          break;
        case "rearm":
          if (decision.expireFirst) await this.run(Q.expire, { id: existing!.id, from: "ready", now: iso(now) }, tx);
          // The history keeps the end of the old life: why it had ended, then the new start.
          await this.record(tx, existing!.id, rearmNote(existing!, decision.from, job.updateId), now);
          await this.rearmOn(tx, existing!.id, decision.from, job, now);
          row = (await this.run<FileJob>(Q.byId, { id: existing!.id }, tx))[0] ?? null;
          break;
        case "too_big_again":
          if (decision.expireFirst) await this.run(Q.expire, { id: existing!.id, from: "ready", now: iso(now) }, tx);
          row = (await this.run<FileJob>(Q.byId, { id: existing!.id }, tx))[0] ?? null;
          break;
        default:
          break;
      }
      // A new key was inserted by another chat of this user between the read and the INSERT cannot
      // happen (the user lock); a different user's chat cannot share the key (chat_id is part of it).
      if ((decision.kind === "accept" || decision.kind === "too_big" || decision.kind === "rearm") && !row) throw new Error(`intake: ${decision.kind} wrote no row inside the transaction`);
      const kind = replyKindOf(decision);
      const text = kind === null ? null : o.render(decision, row);
      const reply =
        kind === null || text === null
          ? null
          : ((await this.run<ChatReply>(R.insert, { updateId: job.updateId, chatId: job.chatId, userId: job.userId, replyTo: job.messageId, jobId: row?.id ?? null, kind, text, now: iso(now) }, tx))[0] ?? null);
      return { decision, job: row, reply };
    }
  }

  async recordRefusal(reply: NewReply, now: number, windowMs: number): Promise<ChatReply | null> {
    return (await this.sql.begin(async (tx) => {
      await this.run(Q.xactLock, { cls: KEYED_LOCK_CLASS.user, key: lockKey(reply.userId) }, tx);
      const [seen] = await this.run<{ n: number }>(R.refusedSince, { userId: reply.userId, since: iso(now - windowMs) }, tx);
      if ((seen?.n ?? 0) > 0) return null;
      const [row] = await this.run<ChatReply>(R.insert, { ...reply, jobId: null, kind: "refused", now: iso(now) }, tx);
      return row ?? null;
    })) as ChatReply | null;
  }

  async pendingReplies(now: number, limit: number, afterId = 0): Promise<ChatReply[]> {
    return this.run<ChatReply>(R.pending, { now: iso(now), limit, afterId });
  }

  async markReplySent(id: number, messageId: number, now: number): Promise<void> {
    await this.sql.begin(async (tx) => {
      const [r] = await this.run<{ jobId: number | null; kind: string }>(R.markSent, { id, messageId, now: iso(now) }, tx);
      if (r && r.jobId !== null && STATUS_REPLY_KINDS.has(r.kind)) await this.run(R.statusMessage, { jobId: r.jobId, messageId }, tx);
    });
  }

  async noteReplyMessage(id: number, messageId: number): Promise<void> {
    await this.changed(R.noteMessage, { id, messageId });
  }

  async retryReplyLater(id: number, notBefore: number, detail: string): Promise<void> {
    await this.changed(R.retryLater, { id, notBefore: iso(notBefore), detail });
  }

  async giveUpReply(id: number, detail: string, now: number): Promise<void> {
    await this.changed(R.giveUp, { id, detail, now: iso(now) });
  }

  async pruneReplies(before: number): Promise<number> {
    return this.changed(R.prune, { before: iso(before) });
  }

  async rearm(id: number, from: "failed" | "expired", fresh: Pick<NewJob, "fileId" | "updateId" | "messageId" | "languageCode">, now: number): Promise<boolean> {
    return (await this.sql.begin(async (tx) => {
      const [old] = await this.run<FileJob>(Q.byIdForUpdate, { id }, tx);
      if (old?.status !== from) return false;
      await this.record(tx, id, rearmNote(old, from, fresh.updateId), now);
      if (!(await this.rearmOn(tx, id, from, fresh, now))) throw new Error(`rearm: job ${id} left ${from} inside the transaction`);
      return true;
    })) as boolean;
  }

  /** `failed|expired → accepted` with the fresh message's fields, every per-try column cleared, old results dropped (inside `tx`). */
  private async rearmOn(tx: Runner, id: number, from: "failed" | "expired", fresh: Pick<NewJob, "fileId" | "updateId" | "messageId" | "languageCode">, now: number): Promise<boolean> {
    const r = await tx.unsafe(Q.rearm.text, bind(Q.rearm, { id, from, fileId: fresh.fileId, updateId: fresh.updateId, messageId: fresh.messageId, languageCode: fresh.languageCode ?? null, now: iso(now) }) as never[], { prepare: true });
    if (r.count > 0) await this.run(Q.deleteResults, { id }, tx);
    return r.count > 0;
  }

  async setStatusMessage(id: number, messageId: number): Promise<void> {
    await this.db.update(fileJobs).set({ statusMessageId: messageId }).where(eq(fileJobs.id, id));
  }

  async get(id: number): Promise<FileJob | undefined> {
    const [row] = await this.run<FileJob>(Q.byId, { id });
    return row;
  }

  async getSettings(chatId: number): Promise<{ pdfAction: string }> {
    const [row] = await this.db.select().from(chatSettings).where(eq(chatSettings.chatId, chatId)).limit(1);
    return { pdfAction: row?.pdfAction ?? "default" };
  }

  async setSettings(chatId: number, settings: { pdfAction: string }, now: number): Promise<void> {
    await this.db
      .insert(chatSettings)
      .values({ chatId, pdfAction: settings.pdfAction, updatedAt: iso(now) })
      .onConflictDoUpdate({ target: chatSettings.chatId, set: { pdfAction: settings.pdfAction, updatedAt: iso(now) } });
  }

  async listByChat(chatId: number, limit: number): Promise<FileJob[]> {
    return this.db.select().from(fileJobs).where(eq(fileJobs.chatId, chatId)).orderBy(desc(fileJobs.id)).limit(limit);
  }

  async findReadyBySha(chatId: number, sha256: string, variant: string, now: number, excludeId: number): Promise<FileJob | undefined> {
    const [row] = await this.db
      .select()
      .from(fileJobs)
      .where(
        and(
          eq(fileJobs.chatId, chatId),
          eq(fileJobs.sha256, sha256),
          eq(fileJobs.variant, variant),
          READY, // a literal: the partial index file_jobs_ready_sha
          ne(fileJobs.id, excludeId),
          dsql`${fileJobs.resultExpiresAt} > ${iso(now)}`,
        ),
      )
      .orderBy(desc(fileJobs.id))
      .limit(1);
    return row;
  }

  async claimDownload(owner: string, now: number, leaseTtlMs: number, budget: BudgetParams, release: readonly number[] = []): Promise<FileJob | null> {
    // One budget decision at a time (see the module doc): docket_claim_download (pg migration 0004)
    // takes the budget lock and claims in one round trip.
    const [row] = await this.run<FileJob>(Q.claimDownload, {
      cls: KEYED_LOCK_CLASS.budget,
      owner,
      leaseUntil: leaseDeadline(now, leaseTtlMs),
      now: iso(now),
      total: budget.total,
      multiplier: budget.multiplier,
      unsized: reservationFor(null, budget.multiplier, budget.modeLimit, budget.total, budget.floor),
      floor: budget.floor ?? 0,
      release: idArray(release),
    });
    return row ?? null;
  }

  async claimProcess(owner: string, now: number, leaseTtlMs: number): Promise<ProcessClaim | null> {
    const [row] = await this.run<FileJob & { found: ProcessClaim["found"] }>(Q.claimProcess, { owner, leaseUntil: leaseDeadline(now, leaseTtlMs), now: iso(now) });
    if (!row) return null;
    const { found, ...job } = row;
    return { job, found };
  }

  async handOver(id: number, owner: string, now: number, leaseTtlMs: number, source: FetchedSource, release: readonly number[] = []): Promise<ProcessClaim | null> {
    const values = { id, owner, leaseUntil: leaseDeadline(now, leaseTtlMs), now: iso(now), localPath: source.localPath, sha256: source.sha256, realSize: source.realSize, reservedBytes: source.reservedBytes };
    const [job] = release.length > 0 ? await this.run<FileJob>(Q.handOverReleasing, { ...values, release: idArray(release) }) : await this.run<FileJob>(Q.handOver, values);
    return job ? { job, found: "fetched" } : null;
  }

  async reclaimHostLeases(hostId: string, self: string, now: number): Promise<Array<{ id: number; status: JobState; from: string }>> {
    const prefix = `${hostId}${OWNER_SEPARATOR}`;
    return (await this.sql.begin(async (tx) => {
      // One statement: the rows taken are the rows released, each still held by the owner it was read with.
      const rows = (await tx.unsafe(
        `UPDATE file_jobs f SET lease_owner = NULL, lease_until = NULL, updated_at = $1
         FROM (SELECT id, lease_owner FROM file_jobs
               WHERE status IN ('accepted', 'fetched', 'processing') AND lease_owner <> $2
                 AND (substr(lease_owner, 1, $3) = $4 OR strpos(lease_owner, $5) = 0)
               FOR UPDATE) held
         WHERE f.id = held.id
         RETURNING f.id AS id, f.status AS status, held.lease_owner AS "from"`,
        [iso(now), self, prefix.length, prefix, OWNER_SEPARATOR] as never[],
        { prepare: true },
      )) as unknown as Array<{ id: number; status: JobState; from: string }>;
      for (const h of rows) await this.record(tx, h.id, { step: attemptStep(h.status, INTERRUPTED), outcome: "interrupted", reason: INTERRUPTED, detail: `the process ${h.from} holding it died; taken back by ${self}` }, now);
      return [...rows].sort((a, b) => a.id - b.id);
    })) as Array<{ id: number; status: JobState; from: string }>;
  }

  async renew(id: number, owner: string, now: number, leaseTtlMs: number): Promise<boolean> {
    return (await this.changed(Q.renew, { id, owner, leaseUntil: leaseDeadline(now, leaseTtlMs) })) > 0;
  }

  async transition(id: number, from: JobState, to: JobState, owner: string, now: number, patch: TransitionPatch = {}): Promise<boolean> {
    if (!canTransition(from, to)) throw new Error(`illegal transition ${from} → ${to} (job ${id})`);
    const { shape, values } = transitionPatch(patch, !isActive(to));
    return (await this.changed(this.transitionStatement(shape), { ...values, id, from, to, owner, now: iso(now) })) > 0;
  }

  /** The conditional `$from → $to` UPDATE by the lease holder for one patch shape, compiled on first use. */
  private transitionStatement(shape: TransitionShape): Compiled {
    const { key, text } = transitionSql(shape);
    let c = this.transitions.get(key);
    if (!c) {
      c = compile(text);
      this.transitions.set(key, c);
    }
    return c;
  }

  async replaceSource(id: number, state: "fetched" | "processing", owner: string, now: number, source: SourceFields): Promise<boolean> {
    return (await this.changed(Q.replaceSource, { id, state, owner, localPath: source.localPath, sha256: source.sha256, realSize: source.realSize, now: iso(now) })) > 0;
  }

  async retryLater(id: number, state: JobState, owner: string, notBefore: number, failure: FailureNote, now: number): Promise<boolean> {
    return (await this.sql.begin(async (tx) => {
      const r = await tx.unsafe(Q.retryLater.text, bind(Q.retryLater, { id, state, owner, notBefore: iso(notBefore), detail: failure.detail, now: iso(now) }) as never[], { prepare: true });
      if (r.count === 0) return false;
      await this.record(tx, id, { step: attemptStep(state, failure.reason), outcome: "retry", reason: failure.reason, ...(failure.params ? { params: failure.params } : {}), detail: failure.detail }, now);
      return true;
    })) as boolean;
  }

  async fail(id: number, from: JobState, owner: string | null, reason: ReasonCode, params: Readonly<Record<string, string | number>>, detail: string, now: number, final?: FinalStatus): Promise<boolean> {
    const values = { id, from, reason, params: JSON.stringify(params), detail, now: iso(now), ...finalColumns(final) };
    return (await this.sql.begin(async (tx) => {
      const c = owner === null ? Q.failAny : Q.failHeld;
      const r = await tx.unsafe(c.text, bind(c, owner === null ? values : { ...values, owner }) as never[], { prepare: true });
      if (r.count === 0) return false;
      await this.record(tx, id, { step: attemptStep(from, reason), outcome: "failed", reason, params, detail }, now);
      return true;
    })) as boolean;
  }

  async pendingFinals(now: number, limit: number): Promise<FileJob[]> {
    return this.run<FileJob>(F.pending, { now: iso(now), limit });
  }

  async claimFinal(id: number, owner: string, now: number, until: number): Promise<FileJob | null> {
    const [row] = await this.run<FileJob>(F.claim, { id, owner, now: iso(now), until: iso(until) });
    return row ?? null;
  }

  async renewFinals(owner: string, until: number): Promise<number> {
    return this.changed(F.renew, { owner, until: iso(until) });
  }

  async finishFinal(id: number, now: number): Promise<boolean> {
    return (await this.changed(F.finish, { id, now: iso(now) })) > 0;
  }

  async retryFinalLater(id: number, owner: string, notBefore: number): Promise<boolean> {
    return (await this.changed(F.retryLater, { id, owner, notBefore: iso(notBefore) })) > 0;
  }

  async reclaimHostFinals(hostId: string, self: string): Promise<number> {
    return this.changed(F.reclaimHost, hostPrefix(hostId, self));
  }

  async attempts(id: number): Promise<JobAttempt[]> {
    return this.run<JobAttempt>(H.byJob, { id });
  }

  async setReservation(id: number, bytes: number): Promise<void> {
    await this.db.update(fileJobs).set({ reservedBytes: bytes }).where(eq(fileJobs.id, id));
  }

  async setReservationIf(id: number, owner: string | null, bytes: number): Promise<boolean> {
    const r = await this.db
      .update(fileJobs)
      .set({ reservedBytes: bytes })
      .where(and(eq(fileJobs.id, id), dsql`${fileJobs.leaseOwner} IS NOT DISTINCT FROM ${owner}`))
      .returning({ id: fileJobs.id });
    return r.length > 0;
  }

  async budgetInUse(): Promise<number> {
    const [r] = await this.db.select({ n: dsql<number>`coalesce(sum(${fileJobs.reservedBytes}), 0)::bigint` }).from(fileJobs).where(gt(fileJobs.reservedBytes, 0));
    return Number(r?.n ?? 0);
  }

  async queuePosition(id: number): Promise<number | null> {
    const job = await this.get(id);
    if (!job || (job.status !== "accepted" && job.status !== "fetched")) return null;
    const [r] = await this.db
      .select({ n: dsql<number>`count(*)::bigint` })
      .from(fileJobs)
      // Literal states: the partial indexes file_jobs_accepted / file_jobs_processable.
      .where(and(job.status === "accepted" ? dsql`${fileJobs.status} = 'accepted'` : dsql`${fileJobs.status} = 'fetched'`, dsql`${fileJobs.id} <= ${id}`));
    return r ? Number(r.n) : null;
  }

  async putResults(id: number, results: readonly NewResult[]): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.delete(jobResults).where(eq(jobResults.jobId, id));
      if (results.length > 0) await tx.insert(jobResults).values(results.map((r) => ({ jobId: id, ...r })));
    });
  }

  async results(id: number): Promise<JobResult[]> {
    return this.db.select().from(jobResults).where(eq(jobResults.jobId, id)).orderBy(asc(jobResults.idx));
  }

  async setResultFileId(id: number, idx: number, fileId: string): Promise<void> {
    await this.db.update(jobResults).set({ telegramFileId: fileId }).where(and(eq(jobResults.jobId, id), eq(jobResults.idx, idx)));
  }

  async dueForExpiry(now: number): Promise<FileJob[]> {
    return this.db
      .select()
      .from(fileJobs)
      .where(and(READY, lte(fileJobs.resultExpiresAt, iso(now)))) // file_jobs_ready_expires
      .orderBy(asc(fileJobs.id));
  }

  async expire(id: number, from: "ready" | "failed", now: number): Promise<boolean> {
    return (await this.changed(Q.expire, { id, from, now: iso(now) })) > 0;
  }

  async listByState(states: readonly JobState[]): Promise<FileJob[]> {
    return this.db.select().from(fileJobs).where(inArray(fileJobs.status, [...states])).orderBy(asc(fileJobs.id));
  }

  async countByState(): Promise<Record<string, number>> {
    const rows = await this.db.select({ status: fileJobs.status, n: dsql<number>`count(*)::bigint` }).from(fileJobs).groupBy(fileJobs.status);
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  }

  async countFailedByReason(sinceMs?: number): Promise<Record<string, number>> {
    const failed = eq(fileJobs.status, "failed");
    const rows = await this.db
      .select({ reason: fileJobs.reason, n: dsql<number>`count(*)::bigint` })
      .from(fileJobs)
      .where(sinceMs === undefined ? failed : and(failed, gte(fileJobs.finishedAt, iso(sinceMs))))
      .groupBy(fileJobs.reason);
    return Object.fromEntries(rows.map((r) => [r.reason ?? "unknown", Number(r.n)]));
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
    return (await this.changed(Q.releaseReservation, { id })) > 0;
  }
}

