/**
 * Sending results to the chat: first delivery uploads each result file with
 * `sendDocument` and stores the returned `document.file_id` right away (so a crash
 * never sends the same result twice on resume); re-delivery sends the stored
 * `file_id`s — no download, no processing (seed 000: "повторная выдача стоит одного
 * обращения к базе и одного сообщения").
 *
 * Every upload is an outbox post (contract 7): the chat's one pacing, its 429 hold and the
 * bot-wide cap cover uploads with the chat's messages (issue 11 item 1). A 429 holds the chat and
 * the same document goes again after it (field case BR-06: never an attempt).
 */
import { InputFile, type Api } from "grammy";
import type { Message } from "grammy/types";
import type { FileJob, JobResult } from "../db/schema.ts";
import type { Locale } from "../i18n/index.ts";
import { t } from "../i18n/index.ts";
import type { JobStore } from "../jobs/store.ts";
import type { Logger } from "../log.ts";
import type { DocumentInput, Outbox } from "../outbox/index.ts";

/** Fixed part of an upload call's bound, ms (connecting, Telegram storing the file). */
const UPLOAD_BASE_MS = 60_000;
/** Slowest upload speed still waited for, bytes/s: the bound grows with the file (50 MB: ≈ 4 min). */
const UPLOAD_MIN_SPEED = 256 * 1024;

/** Bound of one upload call of `bytes`, ms: {@link UPLOAD_BASE_MS} plus the time at {@link UPLOAD_MIN_SPEED}. */
export function uploadTimeoutMs(bytes: number): number {
  return Math.round(UPLOAD_BASE_MS + (Math.max(0, bytes) / UPLOAD_MIN_SPEED) * 1000);
}

/** Sends result documents. */
export class Delivery {
  /**
   * @param outbox the chat-bound call path (pacing, holds, bot-wide cap)
   * @param api the outbox's Api: no auto-retry, so the outbox sees every 429 itself (seed 002: one call per action)
   * @param store job store (result rows and their file_ids)
   */
  constructor(
    private readonly outbox: Outbox,
    private readonly api: Api,
    private readonly store: JobStore,
    private readonly log: Logger,
  ) {}

  /**
   * Upload every result of `job` not yet sent; records each `file_id` as soon as
   * Telegram returns it.
   * @throws GrammyError/HttpError the upload finally failed with (the caller classifies); `signal`'s reason
   */
  async sendResults(job: FileJob, locale: Locale, signal?: AbortSignal): Promise<void> {
    const results = await this.store.results(job.id);
    for (const r of results) {
      if (r.telegramFileId) continue;
      const msg = await this.sendDocument(job, new InputFile(r.path, r.fileName), r.size, {
        caption: t(locale, "result-caption", { id: String(job.id), name: r.fileName }),
        reply_parameters: { message_id: job.messageId, allow_sending_without_reply: true },
      }, signal);
      const fileId = msg.document?.file_id;
      if (fileId) await this.store.setResultFileId(job.id, r.idx, fileId);
      this.log.info({ job: job.id, file_unique_id: job.fileUniqueId, idx: r.idx, size: r.size }, "result sent");
    }
  }

  /**
   * Send one stored result again by its `file_id` (no upload). Returns the `file_id` of the
   * document Telegram sent.
   * @throws GrammyError from sendDocument (400 when the `file_id` is no longer valid)
   */
  async sendStored(job: FileJob, result: Pick<JobResult, "telegramFileId" | "fileName">, locale: Locale, signal?: AbortSignal): Promise<string> {
    const msg = await this.sendDocument(job, result.telegramFileId!, 0, { caption: t(locale, "result-caption", { id: String(job.id), name: result.fileName }) }, signal);
    return msg.document?.file_id ?? result.telegramFileId!;
  }

  /** Send the stored results again by `file_id` (/resend, re-sent file). Returns how many were sent. */
  async redeliver(job: FileJob, locale: Locale): Promise<number> {
    const results = await this.store.results(job.id);
    let sent = 0;
    for (const r of results) {
      if (!r.telegramFileId) continue;
      await this.sendStored(job, r, locale);
      sent++;
    }
    this.log.info({ job: job.id, file_unique_id: job.fileUniqueId, sent }, "results re-delivered by file_id");
    return sent;
  }

  /** One sendDocument through the outbox, bounded by the upload's size. */
  private sendDocument(job: FileJob, document: DocumentInput, bytes: number, other: Parameters<Api["sendDocument"]>[2], signal?: AbortSignal): Promise<Message.DocumentMessage> {
    return this.outbox.post(this.api, job.chatId, { method: "sendDocument", document, ...(other ? { other } : {}) }, { ...(signal ? { signal } : {}), timeoutMs: uploadTimeoutMs(bytes) });
  }
}
