/**
 * The job status message through the outbox (issue 3 §12): one message per job,
 * sent at intake as a reply to the user's file (intake's durable reply, bot/intake/replies.ts,
 * handed over by `adopt`), then edited by one long-lived
 * outbox stream as the job moves (accepted → downloading n % → queued →
 * processing → ready or failed). The outbox paces per chat and bot-wide, holds
 * the chat on 429 and collapses pending edits to the latest text. After a
 * restart the stream adopts the stored `status_message_id`, so the old message
 * is edited instead of a new one appearing.
 */
import type { Api } from "grammy";
import type { InlineKeyboardMarkup } from "grammy/types";
import type { FileJob } from "../db/schema.ts";
import type { Logger } from "../log.ts";
import type { LiveStream, Outbox } from "../outbox/index.ts";
import type { StatusReporter } from "./reporter.ts";
import type { FinalShown } from "./final-rules.ts";

/** What the job's status message should show: its text and, for the final one, its keyboard. */
interface Shown {
  readonly text: string;
  readonly reply_markup?: InlineKeyboardMarkup;
}

interface Entry {
  stream: LiveStream | null;
  /** The latest wanted content, shown once the stream exists (one edit, keyboard included). */
  latest: Shown | null;
  /** Resolves once the stream exists. */
  ready: Promise<void>;
}

/** {@link StatusReporter} over the outbox. */
export class OutboxStatusReporter implements StatusReporter {
  private readonly entries = new Map<number, Entry>();
  /** Jobs whose final text was shown (bounded, oldest dropped first): a late update() must not undo it. */
  private readonly finished = new Set<number>();

  /**
   * @param api the outbox's own client: no auto-retry, so every 429 reaches the outbox (ChatHold,
   *   stale edits collapsed to the latest text; seed 002: one action → exactly one API call).
   */
  constructor(
    private readonly outbox: Outbox,
    private readonly api: Api,
    private readonly log: Logger,
    /**
     * The status message of a job this process did not announce, once known (default: the row's
     * `status_message_id`). With several processes (issue 14 item 5: status messages follow the job's
     * lease) the intake process may still be sending it: bot/status/status-message.ts waits for it.
     */
    private readonly messageOf: (job: FileJob) => Promise<number | null> = async (job) => job.statusMessageId,
  ) {}

  adopt(job: FileJob, messageId: Promise<number | null>): void {
    this.finished.delete(job.id); // a re-armed job starts a new status line
    this.entries.set(job.id, this.entry(job, messageId));
  }

  shown(job: FileJob): Promise<void> {
    return this.entries.get(job.id)?.ready ?? Promise.resolve();
  }

  update(job: FileJob, text: string): void {
    // A step racing /cancel or a failure may report progress after the final text: ignore it.
    if (this.finished.has(job.id)) return;
    const e = this.entries.get(job.id) ?? this.open(job);
    e.latest = { text };
    e.stream?.update([e.latest]);
  }

  async final(job: FileJob, text: string, replyMarkup?: InlineKeyboardMarkup): Promise<FinalShown> {
    const e = this.entries.get(job.id) ?? this.open(job);
    // Set before the stream exists, so its first edit (after a restart: the adopted message) carries the keyboard too.
    e.latest = { text, ...(replyMarkup ? { reply_markup: replyMarkup } : {}) };
    this.markFinished(job.id);
    await e.ready;
    // Only this entry: a re-armed job's new try may have been adopted during the await (a new entry
    // under the same id, its reply still on its way); removing that one would lose the new try's status
    // (its updates opening a second message, shown() no longer waiting for its reply).
    if (this.entries.get(job.id) === e) this.entries.delete(job.id);
    if (!e.stream) return { status: "closed" };
    try {
      e.stream.update([e.latest]);
    } catch {
      return { status: "closed" }; // Outbox.close() finalized the stream meanwhile (shutdown)
    }
    const ids = await e.stream.finish({ raiseOnFailure: false });
    const outcome = e.stream.outcome();
    if (outcome?.status === "ok") return { status: "ok" };
    this.log.warn({ job: job.id, outcome: outcome?.status, reason: outcome?.reason, ids }, "final status message not fully delivered");
    if (outcome?.status === "partial") return { status: "partial" };
    // The outbox stopped its worker (shutdown): not a try of this message.
    if (!this.outbox.isOpen) return { status: "closed" };
    return { status: "failed", reason: outcome?.reason, error: outcome?.error };
  }

  private markFinished(id: number): void {
    this.finished.add(id);
    if (this.finished.size > 10_000) this.finished.delete(this.finished.values().next().value!);
  }

  async close(): Promise<void> {
    await this.outbox.close();
  }

  /** Entry for a job this process did not announce (after a restart, another host's intake): adopt its message. */
  private open(job: FileJob): Entry {
    const e = this.entry(job, this.messageOf(job).catch(() => job.statusMessageId));
    this.entries.set(job.id, e);
    return e;
  }

  private entry(job: FileJob, messageId: Promise<number | null>): Entry {
    const e: Entry = { stream: null, latest: null, ready: Promise.resolve() };
    e.ready = messageId.then((id) => {
      try {
        e.stream = this.outbox.stream(this.api, job.chatId, id !== null ? { typing: false, adopt: [id] } : { typing: false, replyTo: job.messageId });
      } catch (err) {
        // Only a closed outbox refuses a stream (shutdown): the job's state is in the database and
        // the next start adopts the stored message; nothing to show now.
        this.log.debug({ job: job.id, err }, "status not shown: the outbox is closed");
        return;
      }
      if (e.latest !== null) e.stream.update([e.latest]);
    });
    return e;
  }
}
