/**
 * The album parts and chat prompts of the PostgreSQL JobStore (issue 13 item 5, issue 15), the same
 * conditional writes as the SQLite store: a part is written only while its job is `accepted` and leased
 * by the writer; a prompt is one row per (chat, user), taken once.
 */
import { and, asc, eq, sql as dsql } from "drizzle-orm";
import type { PostgresJsDatabase } from "drizzle-orm/postgres-js";
import type { PgSql } from "../db/pg-open.ts";
import * as pg from "../db/pg-schema.ts";
import type { ChatPrompt, JobPart } from "../db/schema.ts";
import { iso } from "./lease.ts";
import type { ReasonCode } from "./reasons.ts";
import type { FetchedPart, NewPart } from "./store.ts";
import type { PartLeftOut } from "./album-intake.ts";

const { jobParts, chatPrompts } = pg;

/** A postgres.js client or transaction (raw statements inside the caller's transaction). */
type Runner = Pick<PgSql, "unsafe">;

/** Part and prompt reads and writes. */
export class PgParts {
  constructor(private readonly db: PostgresJsDatabase<typeof pg>) {}

  /** INSERT one part (inside `tx`): `accepted`, or `failed` with `refusal`'s reason (too big, over the daily quota). */
  async insert(tx: Runner, jobId: number, part: NewPart, refusal: PartLeftOut | null): Promise<void> {
    await tx.unsafe(
      `INSERT INTO job_parts (job_id, message_id, update_id, source, file_id, file_unique_id, declared_name, declared_mime, declared_size, status, reason, reason_params, last_error)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
      [
        jobId, part.messageId, part.updateId, part.source, part.fileId, part.fileUniqueId, part.declaredName, part.declaredMime, part.declaredSize,
        refusal ? "failed" : "accepted", refusal?.reason ?? null, refusal ? JSON.stringify(refusal.params) : null, refusal?.detail ?? null,
      ] as never[],
      { prepare: true },
    );
  }

  /** Whether update `updateId` carried a part already (inside `tx`). */
  async known(tx: Runner, updateId: number): Promise<boolean> {
    return (await tx.unsafe("SELECT 1 FROM job_parts WHERE update_id = $1 LIMIT 1", [updateId] as never[], { prepare: true })).length > 0;
  }

  async list(jobId: number): Promise<JobPart[]> {
    return this.db.select().from(jobParts).where(eq(jobParts.jobId, jobId)).orderBy(asc(jobParts.messageId));
  }

  /** WHERE of a part write: this part, its job `accepted` and leased by `owner`. */
  private held(jobId: number, messageId: number, owner: string) {
    return and(
      eq(jobParts.jobId, jobId),
      eq(jobParts.messageId, messageId),
      dsql`EXISTS (SELECT 1 FROM file_jobs WHERE file_jobs.id = ${jobId} AND file_jobs.status = 'accepted' AND file_jobs.lease_owner = ${owner})`,
    );
  }

  async fetched(jobId: number, messageId: number, owner: string, file: FetchedPart): Promise<boolean> {
    const r = await this.db
      .update(jobParts)
      .set({ status: "fetched", localPath: file.localPath, sha256: file.sha256, realSize: file.realSize, reason: null, reasonParams: null, lastError: null })
      .where(this.held(jobId, messageId, owner))
      .returning({ messageId: jobParts.messageId });
    return r.length > 0;
  }

  async failed(jobId: number, messageId: number, owner: string, reason: ReasonCode, params: Readonly<Record<string, string | number>>, detail: string): Promise<boolean> {
    const r = await this.db
      .update(jobParts)
      .set({ status: "failed", localPath: null, reason, reasonParams: JSON.stringify(params), lastError: detail })
      .where(this.held(jobId, messageId, owner))
      .returning({ messageId: jobParts.messageId });
    return r.length > 0;
  }

  async reset(jobId: number, messageId: number, owner: string): Promise<boolean> {
    const r = await this.db
      .update(jobParts)
      .set({ status: "accepted", localPath: null, sha256: null, realSize: null })
      .where(this.held(jobId, messageId, owner))
      .returning({ messageId: jobParts.messageId });
    return r.length > 0;
  }

  async setPrompt(prompt: Omit<ChatPrompt, "createdAt">, now: number): Promise<void> {
    const row = { ...prompt, createdAt: iso(now) };
    await this.db.insert(chatPrompts).values(row).onConflictDoUpdate({ target: [chatPrompts.chatId, chatPrompts.userId], set: { jobId: row.jobId, action: row.action, createdAt: row.createdAt } });
  }

  async takePrompt(chatId: number, userId: number, now: number, maxAgeMs: number): Promise<ChatPrompt | null> {
    const [row] = await this.db.delete(chatPrompts).where(and(eq(chatPrompts.chatId, chatId), eq(chatPrompts.userId, userId))).returning();
    return row && Date.parse(row.createdAt) > now - maxAgeMs ? row : null;
  }

  async getPrompt(chatId: number, userId: number, now: number, maxAgeMs: number): Promise<ChatPrompt | null> {
    const [row] = await this.db.select().from(chatPrompts).where(and(eq(chatPrompts.chatId, chatId), eq(chatPrompts.userId, userId))).limit(1);
    return row && Date.parse(row.createdAt) > now - maxAgeMs ? row : null;
  }
}
