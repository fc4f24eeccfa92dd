/**
 * Job status messages: one message per job, sent at intake as a reply to the
 * user's file and edited as the job moves (accepted → downloading n % → queued →
 * processing → ready or failed). Users are never told "done" before `ready` is
 * committed (seed 000: "Сообщение, которое можно повторить").
 */
import type { InlineKeyboardMarkup } from "grammy/types";
import type { FileJob } from "../db/schema.ts";
import type { FinalShown } from "./final-rules.ts";

/** Where job status text goes. Implementations rate-limit and collapse edits. */
export interface StatusReporter {
  /**
   * The job's first status message (intake's reply to the user's file) is on its way: `messageId`
   * resolves with its message_id once Telegram accepted it (null when it was not delivered). Later
   * updates edit that message. Intake sends and records the reply itself (bot/intake/replies.ts: a
   * transactional outbox, so a crash never loses it); call this before any `update` of the job.
   */
  adopt(job: FileJob, messageId: Promise<number | null>): void;
  /** Show `text` as the job's current status (latest wins; may be delayed or collapsed). */
  update(job: FileJob, text: string): void;
  /**
   * Resolves once the job's first status message is in the chat (or could not be sent): results go
   * after it, so the chat reads "accepted" before the documents even after a hold.
   */
  shown(job: FileJob): Promise<void>;
  /**
   * Show the final text and wait until it is delivered (or has definitively failed); `replyMarkup` is
   * the message's inline keyboard (issue 15: the actions on a result), sent with the same edit. Called by
   * bot/status/finals.ts from the job's final-status record, which the outcome closes or keeps.
   */
  final(job: FileJob, text: string, replyMarkup?: InlineKeyboardMarkup): Promise<FinalShown>;
  /** Deliver what is pending and stop (shutdown). */
  close(): Promise<void>;
}
