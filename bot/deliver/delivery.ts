/**
 * Sending results to the chat: first delivery uploads the results not yet sent and stores each
 * returned `document.file_id` right away (so a crash never sends the same result twice on resume);
 * re-delivery sends the stored `file_id`s — no download, no processing (seed 000: "повторная
 * выдача стоит одного обращения к базе и одного сообщения").
 *
 * Several results of a job go as one album (`sendMediaGroup` of 2–10 documents, the caption on the
 * last), one result as `sendDocument`: every call per job counts against Telegram's ~30 messages/s
 * (issue 11 item 2). Every call is an outbox post (contract 7): the chat's one pacing, its 429
 * hold and the bot-wide cap cover uploads with the chat's messages (issue 11 item 1); a 429 holds
 * the chat and the same upload goes again after it (field case BR-06: never an attempt).
 */
import { InputFile, type Api } from "grammy";
import type { InputMediaDocument, Message } from "grammy/types";
import type { FileJob, JobResult } from "../db/schema.ts";
import type { Locale } from "../i18n/index.ts";
import { t } from "../i18n/index.ts";
import type { JobStore } from "../jobs/store.ts";
import type { Logger } from "../log.ts";
import type { DocumentInput, Outbox } from "../outbox/index.ts";

/** Slowest upload speed still waited for, bytes/s: the bound grows with the file (50 MB: ≈ 3 min 20 s more). */
const UPLOAD_MIN_SPEED = 256 * 1024;
/** Documents in one album (Bot API sendMediaGroup: 2–10 items; TDLib MAX_GROUPED_MESSAGES). */
export const ALBUM_MAX = 10;
/** Caption length limit, UTF-16 code units (Bot API: 0–1024 characters after entity parsing). */
const CAPTION_MAX = 1024;

/**
 * Bound of one upload call of `bytes` (all files of the call), ms: `baseMs` (the outbox's per-call bound,
 * CHAT_CALL_TIMEOUT) plus the time at {@link UPLOAD_MIN_SPEED}.
 */
export function uploadTimeoutMs(bytes: number, baseMs: number): number {
  return Math.round(baseMs + (Math.max(0, bytes) / UPLOAD_MIN_SPEED) * 1000);
}

/** Split `items` into the calls that carry them: albums of up to {@link ALBUM_MAX}, a last lone item on its own. */
export function deliveryBatches<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += ALBUM_MAX) out.push(items.slice(i, i + ALBUM_MAX));
  return out;
}

/** `text` cut to `max` UTF-16 units, never inside a surrogate pair, with "…" when cut. */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  if (/[\uD800-\uDBFF]/.test(text[end - 1] ?? "")) end--;
  return `${text.slice(0, end)}…`;
}

/** `p`, or `signal`'s reason as soon as it aborts. */
function abortable<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(signal.reason);
    signal.addEventListener("abort", stop, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", stop));
  });
}

/** A result as one call sends it: what to send and what it is called. */
interface Item {
  readonly idx: number;
  readonly document: DocumentInput;
  readonly fileName: string;
  readonly size: number;
}

/** Sends result documents. */
export class Delivery {
  /**
   * @param outbox the chat-bound call path (pacing, holds, bot-wide cap)
   * @param api the outbox's Api: no auto-retry, so the outbox sees every 429 itself (seed 002: one call per action)
   * @param store job store (result rows and their file_ids)
   * @param before resolves when the job's results may go (its first status message is in the chat, so
   *   the chat reads "accepted" before the documents even when the chat was held)
   */
  constructor(
    private readonly outbox: Outbox,
    private readonly api: Api,
    private readonly store: JobStore,
    private readonly log: Logger,
    private readonly before: (job: FileJob) => Promise<void> = () => Promise.resolve(),
  ) {}

  /**
   * Upload every result of `job` not yet sent (an album for several, see {@link deliveryBatches});
   * records the `file_id`s of each call as soon as Telegram returns them.
   * @throws GrammyError/HttpError the upload finally failed with (the caller classifies); `signal`'s reason
   */
  async sendResults(job: FileJob, locale: Locale, signal?: AbortSignal): Promise<void> {
    const pending = (await this.store.results(job.id)).filter((r) => !r.telegramFileId);
    if (pending.length === 0) return;
    await abortable(this.before(job), signal);
    const items = pending.map((r) => ({ idx: r.idx, document: new InputFile(r.path, r.fileName), fileName: r.fileName, size: r.size }));
    for (const batch of deliveryBatches(items)) {
      const ids = await this.send(job, batch, locale, true, signal);
      for (const [i, r] of batch.entries()) if (ids[i]) await this.store.setResultFileId(job.id, r.idx, ids[i]);
      this.log.info({ job: job.id, file_unique_id: job.fileUniqueId, idx: batch.map((r) => r.idx), size: batch.reduce((n, r) => n + r.size, 0) }, batch.length > 1 ? "results sent as an album" : "result sent");
    }
  }

  /**
   * Send stored results again by their `file_id`s (no upload), grouped as {@link sendResults} groups
   * them. `onSent(idx, file_id)` runs for each document as soon as its call succeeded (the file_id
   * Telegram returned, else the one sent). Returns how many were sent.
   * @throws GrammyError (400 when a `file_id` is no longer valid); `signal`'s reason
   */
  async sendStored(
    job: FileJob,
    results: readonly Pick<JobResult, "idx" | "telegramFileId" | "fileName">[],
    locale: Locale,
    signal?: AbortSignal,
    onSent?: (idx: number, fileId: string) => Promise<void>,
  ): Promise<number> {
    const items = results.filter((r) => r.telegramFileId).map((r) => ({ idx: r.idx, document: r.telegramFileId!, fileName: r.fileName, size: 0 }));
    if (items.length > 0) await abortable(this.before(job), signal);
    for (const batch of deliveryBatches(items)) {
      const ids = await this.send(job, batch, locale, false, signal);
      for (const [i, r] of batch.entries()) await onSent?.(r.idx, ids[i] ?? (r.document as string));
    }
    return items.length;
  }

  /** Send the stored results again by `file_id` (/resend, re-sent file). Returns how many were sent. */
  async redeliver(job: FileJob, locale: Locale): Promise<number> {
    const sent = await this.sendStored(job, await this.store.results(job.id), locale);
    this.log.info({ job: job.id, file_unique_id: job.fileUniqueId, sent }, "results re-delivered by file_id");
    return sent;
  }

  /**
   * One call for `batch`: sendDocument for one item, else sendMediaGroup with the caption on the last
   * (Bot API: a caption per item; the album reads as one message). Returns each document's file_id.
   */
  private async send(job: FileJob, batch: readonly Item[], locale: Locale, reply: boolean, signal?: AbortSignal): Promise<(string | undefined)[]> {
    const caption = clip(t(locale, "result-caption", { id: String(job.id), name: batch.map((r) => r.fileName).join(", ") }), CAPTION_MAX);
    const replyTo = reply ? { reply_parameters: { message_id: job.messageId, allow_sending_without_reply: true } } : {};
    const opts = { ...(signal ? { signal } : {}), timeoutMs: uploadTimeoutMs(batch.reduce((n, r) => n + r.size, 0), this.outbox.options.callTimeoutMs) };
    if (batch.length === 1) {
      const msg: Message.DocumentMessage = await this.outbox.post(this.api, job.chatId, { method: "sendDocument", document: batch[0]!.document, other: { caption, ...replyTo } }, opts);
      return [msg.document?.file_id];
    }
    const media: InputMediaDocument[] = batch.map((r, i) => ({ type: "document", media: r.document, ...(i === batch.length - 1 ? { caption } : {}) }));
    const msgs = await this.outbox.post(this.api, job.chatId, { method: "sendMediaGroup", media, other: replyTo }, opts);
    return msgs.map((m) => (m as Message.DocumentMessage).document?.file_id);
  }
}
