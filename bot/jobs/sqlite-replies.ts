/**
 * The SQL of intake's transactional outbox (`chat_replies`, issue 11 item 3) for `SqliteJobStore`:
 * statements prepared once per connection. A reply is INSERTed inside the intake transaction that
 * decided it, one per `update_id` (`ON CONFLICT DO NOTHING`: a redelivered update records no second
 * one), and marked sent once Telegram accepted it. Rows come back shaped like drizzle's `ChatReply`.
 */
import type { Database, Statement } from "bun:sqlite";
import { getTableColumns } from "drizzle-orm";
import { chatReplies, type ChatReply } from "../db/schema.ts";
import { STATUS_REPLY_KINDS } from "./intake-rules.ts";
import { iso } from "./lease.ts";

const COLUMNS = getTableColumns(chatReplies);
/** Every `chat_replies` column as `"snake_name" AS "camelKey"`. */
const ROW = Object.entries(COLUMNS)
  .map(([key, column]) => `"${column.name}" AS "${key}"`)
  .join(", ");
/** The status reply kinds as a SQL list of literals (constants of intake-rules.ts only). */
const STATUS_KINDS = `(${[...STATUS_REPLY_KINDS].map((k) => `'${k}'`).join(", ")})`;

type Params = Record<string, string | number | null>;

/** JobStore.noteReplyMessage (the same SQL in both stores): the id of a pending reply the chat shows already. */
export const NOTE_REPLY_MESSAGE = "UPDATE chat_replies SET message_id = $messageId WHERE id = $id AND sent_at IS NULL AND message_id IS NULL";

/** A reply as intake records it. */
export interface ReplyValues {
  readonly updateId: number;
  readonly chatId: number;
  readonly userId: number | null;
  readonly replyTo: number | null;
  readonly jobId: number | null;
  readonly kind: string;
  readonly text: string;
}

/** Prepared statements of `chat_replies` over one bun:sqlite connection. */
export class ReplyStatements {
  private readonly insertStmt: Statement<ChatReply, [Params]>;
  private readonly refusedSince: Statement<{ n: number }, [Params]>;
  private readonly pendingStmt: Statement<ChatReply, [Params]>;
  private readonly sentStmt: Statement<{ jobId: number | null; kind: string }, [Params]>;
  private readonly statusMessage: Statement<unknown, [Params]>;
  private readonly retryStmt: Statement<unknown, [Params]>;
  private readonly noteStmt: Statement<unknown, [Params]>;
  private readonly giveUpStmt: Statement<unknown, [Params]>;
  private readonly pruneStmt: Statement<unknown, [Params]>;
  /** markSent's two writes as one transaction. */
  private readonly markSentTx: (id: number, messageId: number, now: number) => void;

  /** @param sqlite the store's connection */
  constructor(sqlite: Database) {
    this.insertStmt = sqlite.prepare(
      `INSERT INTO chat_replies (update_id, chat_id, user_id, reply_to, job_id, kind, text, created_at)
       VALUES ($updateId, $chatId, $userId, $replyTo, $jobId, $kind, $text, $now)
       ON CONFLICT (update_id) DO NOTHING RETURNING ${ROW}`,
    );
    this.refusedSince = sqlite.prepare("SELECT count(*) AS n FROM chat_replies WHERE user_id = $userId AND kind = 'refused' AND created_at >= $since");
    this.pendingStmt = sqlite.prepare(
      `SELECT ${ROW} FROM chat_replies WHERE sent_at IS NULL AND gave_up_at IS NULL AND id > $afterId AND (not_before IS NULL OR not_before <= $now) ORDER BY id ASC LIMIT $limit`,
    );
    this.sentStmt = sqlite.prepare('UPDATE chat_replies SET sent_at = $now, message_id = $messageId WHERE id = $id AND sent_at IS NULL RETURNING job_id AS "jobId", kind');
    // Only while the job has no status message yet: a re-armed job's new reply is the one that counts.
    this.statusMessage = sqlite.prepare("UPDATE file_jobs SET status_message_id = $messageId WHERE id = $jobId AND status_message_id IS NULL");
    this.noteStmt = sqlite.prepare(NOTE_REPLY_MESSAGE);
    this.retryStmt = sqlite.prepare("UPDATE chat_replies SET tries = tries + 1, not_before = $notBefore, last_error = $detail WHERE id = $id AND sent_at IS NULL");
    this.giveUpStmt = sqlite.prepare("UPDATE chat_replies SET tries = tries + 1, gave_up_at = $now, last_error = $detail WHERE id = $id AND sent_at IS NULL");
    this.pruneStmt = sqlite.prepare("DELETE FROM chat_replies WHERE created_at < $before AND (sent_at IS NOT NULL OR gave_up_at IS NOT NULL)");
    this.markSentTx = sqlite.transaction((id: number, messageId: number, now: number) => {
      const r = this.sentStmt.get({ id, messageId, now: iso(now) });
      if (r && r.jobId !== null && STATUS_REPLY_KINDS.has(r.kind)) this.statusMessage.run({ jobId: r.jobId, messageId });
    });
  }

  /** INSERT a pending reply unless this update has one; the row, or null. Call inside the deciding transaction. */
  insert(v: ReplyValues, now: number): ChatReply | null {
    return this.insertStmt.get({ ...v, now: iso(now) }) ?? null;
  }

  /** Refusals recorded for `userId` at or after `since` (epoch ms). */
  refusals(userId: number, since: number): number {
    return this.refusedSince.get({ userId, since: iso(since) })?.n ?? 0;
  }

  /** Pending replies due at `now` with id > `afterId`, oldest first. */
  pending(now: number, limit: number, afterId: number): ChatReply[] {
    return this.pendingStmt.all({ now: iso(now), limit, afterId });
  }

  /** Mark sent (and a status reply's job's `status_message_id`), one transaction. */
  markSent(id: number, messageId: number, now: number): void {
    this.markSentTx(id, messageId, now);
  }

  /** See JobStore.noteReplyMessage. */
  noteMessage(id: number, messageId: number): void {
    this.noteStmt.run({ id, messageId });
  }

  /** One more failed try; not before `notBefore`. */
  retryLater(id: number, notBefore: number, detail: string): void {
    this.retryStmt.run({ id, notBefore: iso(notBefore), detail });
  }

  /** Stop trying. */
  giveUp(id: number, detail: string, now: number): void {
    this.giveUpStmt.run({ id, detail, now: iso(now) });
  }

  /** Delete sent or given-up replies created before `before`; how many. */
  prune(before: number): number {
    return this.pruneStmt.run({ before: iso(before) }).changes;
  }
}
