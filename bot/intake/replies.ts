/**
 * Intake's replies, sent from their record (issue 11 item 3: a transactional outbox). Intake writes
 * every reply it decides on (accepted, too big, duplicate, re-send, limit, refused) into
 * `chat_replies` in the same transaction as the job row (`JobStore.intake`, `recordRefusal`), before
 * the handler returns — and so before polling confirms the update's batch. This module sends them
 * through the outbox and marks them sent. Whatever a crash or a shutdown left pending is sent by the
 * next start (`resume`), so a reply is never lost after its update was confirmed; the one duplicate a
 * crash can cause is a reply Telegram accepted in the instant before `sent_at` was written
 * (Telegram has no idempotency key), the same window the kill test allows for results.
 *
 * A `resend` reply (a re-sent file whose result is alive) is done once its results are in the chat: its
 * text's message_id is noted when Telegram accepted it (`noteReplyMessage`), the results are sent again by
 * `file_id`, and only then is it marked sent; a crash or a failed try in between sends the results, not the
 * text, again (at least once, like the results' own uploads).
 *
 * An `accepted` (or a new job's `too_big`) reply is the job's first status message: the status
 * reporter adopts it (`StatusReporter.adopt`) and edits it as the job moves; its message_id is stored
 * with the reply, in one transaction. A failed try is retried with backoff; a chat that is gone
 * (403, a 400 for the request) or a reply whose tries ran out is given up with one journal line.
 */
import type { ChatReply, FileJob } from "../db/schema.ts";
import { STATUS_REPLY_KINDS } from "../jobs/intake-rules.ts";
import type { JobStore } from "../jobs/store.ts";
import type { Logger } from "../log.ts";
import { redactSecrets } from "../log.ts";
import type { Services } from "../services.ts";
import type { StatusReporter } from "../status/reporter.ts";

/** Tries of one reply before it is given up (a restart's resend counts as a try only if it fails). */
export const REPLY_MAX_TRIES = 5;

/** Backoff after failed try `tries` (1-based): 30 s, 60 s, 120 s … capped at 10 min (ms). */
export function replyBackoffMs(tries: number): number {
  return Math.min(600_000, 30_000 * 2 ** Math.max(0, tries - 1));
}

/** Thrown by a {@link ReplySenderDeps.send} that finished without a message in the chat. */
export class ReplyNotDelivered extends Error {
  /** @param final the chat or the request cannot take this reply (no retry) */
  constructor(
    message: string,
    readonly final: boolean,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "ReplyNotDelivered";
  }
}

/**
 * Whether a failed send is final for this reply (no retry): a {@link ReplyNotDelivered} that says so,
 * or a Bot API error (also as the `cause` of the outbox's StreamFailedError) with code 403 (blocked,
 * kicked) or 400 (chat not found, a request Telegram refuses). 429, 5xx and network errors are not.
 */
export function isFinalReplyFailure(err: unknown): boolean {
  if (err instanceof ReplyNotDelivered) return err.final;
  for (let e: unknown = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { error_code?: unknown }).error_code;
    if (typeof code === "number") return code === 403 || code === 400;
  }
  return false;
}

/** What the sender needs; wired in bot/app.ts. */
export interface ReplySenderDeps {
  readonly store: JobStore;
  readonly log: Logger;
  /** Clock, epoch ms. */
  readonly now: () => number;
  /**
   * Send `text` in `chatId` as a reply to `replyTo` through the outbox (CONTRACTS.md §7) and resolve
   * with its message_id; reject (e.g. {@link ReplyNotDelivered}, StreamFailedError) when it was not delivered.
   */
  readonly send: (chatId: number, text: string, replyTo: number | null) => Promise<number>;
  readonly status: Pick<StatusReporter, "adopt">;
  /** Re-send a ready job's stored results after its `resend` reply. */
  readonly redeliver: (job: FileJob) => Promise<void>;
  readonly background: Services["background"];
  /** For redaction of error details. */
  readonly token: string;
}

/** Sends intake's recorded replies; see the module doc. */
export class ReplySender {
  /** Replies being sent by this process (never twice at once). */
  private readonly sending = new Set<number>();
  private closed = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private timerAt = Number.POSITIVE_INFINITY;

  /** @param deps see {@link ReplySenderDeps} */
  constructor(private readonly deps: ReplySenderDeps) {}

  /**
   * Send `reply` (just committed by intake, or pending from an earlier process) in the background.
   * A status reply is handed to the status reporter at once (synchronously), so no status update of
   * `job` can open a second message first. Never throws.
   * @param job the reply's job row (null: none, or not needed)
   */
  deliver(reply: ChatReply, job: FileJob | null): void {
    if (this.closed || this.sending.has(reply.id)) return;
    this.sending.add(reply.id);
    // A re-send of a live result is done when its results are in the chat too: its text's message_id is
    // noted first, so a crash or a failed redelivery sends the results again, never the text a second time.
    const resend = reply.kind === "resend" && job !== null;
    const sent = resend && reply.messageId !== null ? Promise.resolve(reply.messageId) : this.deps.send(reply.chatId, reply.text, reply.replyTo);
    if (job && STATUS_REPLY_KINDS.has(reply.kind)) {
      this.deps.status.adopt(
        job,
        sent.then(
          (id) => id,
          () => null,
        ),
      );
    }
    this.deps.background(async () => {
      try {
        const messageId = await sent;
        if (resend) {
          if (reply.messageId === null) await this.deps.store.noteReplyMessage(reply.id, messageId);
          await this.deps.redeliver(job);
        }
        await this.deps.store.markReplySent(reply.id, messageId, this.deps.now());
      } catch (err) {
        await this.failed(reply, err);
      } finally {
        this.sending.delete(reply.id);
      }
    }, "intake reply");
  }

  /**
   * Send every reply that is pending and due (a crash, a shutdown or a failed try left it), oldest
   * first. Call at start before the engine and intake run (so a job's pending first status message is
   * adopted before any update of it). Returns how many were handed to {@link deliver}.
   */
  async resume(): Promise<number> {
    if (this.closed) return 0;
    const { store, log, now } = this.deps;
    let n = 0;
    for (let after = 0; ; ) {
      const page = await store.pendingReplies(now(), 200, after);
      if (page.length === 0) break;
      after = page.at(-1)!.id;
      for (const r of page) {
        if (this.sending.has(r.id)) continue;
        const job = r.jobId === null ? null : ((await store.get(r.jobId)) ?? null);
        this.deliver(r, job);
        n++;
      }
    }
    if (n > 0) log.info({ replies: n }, "sending intake replies left pending by an earlier process or a failed try");
    return n;
  }

  /** Stop sending (shutdown): replies not delivered yet stay pending for the next start. */
  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** A try failed: retry later, or give up when the chat cannot take it or tries ran out. */
  private async failed(reply: ChatReply, err: unknown): Promise<void> {
    if (this.closed) return; // shutdown cancelled it: pending for the next start
    const { store, log, now } = this.deps;
    const detail = redactSecrets(err instanceof Error ? `${err.name}: ${err.message}` : String(err), this.deps.token).slice(0, 500);
    const tries = reply.tries + 1;
    if (isFinalReplyFailure(err) || tries >= REPLY_MAX_TRIES) {
      await store.giveUpReply(reply.id, detail, now());
      log.warn({ reply: reply.id, chat_id: reply.chatId, kind: reply.kind, job: reply.jobId, tries, detail }, "intake reply not delivered; given up");
      return;
    }
    const at = now() + replyBackoffMs(tries);
    await store.retryReplyLater(reply.id, at, detail);
    log.warn({ reply: reply.id, chat_id: reply.chatId, kind: reply.kind, tries, detail }, "intake reply not delivered; will retry");
    this.schedule(at);
  }

  /** Run {@link resume} at `at` (epoch ms), unless an earlier run is scheduled. */
  private schedule(at: number): void {
    if (this.closed || at >= this.timerAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.timerAt = Number.POSITIVE_INFINITY;
      void this.resume().catch((err) => this.deps.log.error({ err }, "could not send pending intake replies"));
    }, Math.max(0, at - this.deps.now()));
  }
}
