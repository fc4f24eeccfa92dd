/**
 * Sending results to the chat: first delivery uploads each result file with
 * `sendDocument` and stores the returned `document.file_id` right away (so a crash
 * never sends the same result twice on resume); re-delivery sends the stored
 * `file_id`s — no download, no processing (seed 000: "повторная выдача стоит одного
 * обращения к базе и одного сообщения").
 */
import { InputFile, type Api } from "grammy";
import type { FileJob, JobResult } from "../db/schema.ts";
import type { Locale } from "../i18n/index.ts";
import { t } from "../i18n/index.ts";
import type { JobStore } from "../jobs/store.ts";
import type { Logger } from "../log.ts";
import type { ChatHolds } from "./chat-holds.ts";

/** Sends result documents. */
export class Delivery {
  /**
   * @param api grammY Api (auto-retry installed: 429s and 5xx are retried per request)
   * @param store job store (result rows and their file_ids)
   */
  constructor(
    private readonly api: Api,
    private readonly store: JobStore,
    private readonly log: Logger,
    /** Chat holds after 429s: no upload goes to a held chat (BR-06). */
    private readonly holds?: ChatHolds,
  ) {}

  /**
   * Upload every result of `job` not yet sent; records each `file_id` as soon as
   * Telegram returns it.
   * @throws GrammyError/HttpError from sendDocument (the caller classifies)
   */
  async sendResults(job: FileJob, locale: Locale, signal?: AbortSignal): Promise<JobResult[]> {
    const results = await this.store.results(job.id);
    for (const r of results) {
      if (r.telegramFileId) continue;
      await this.holds?.wait(job.chatId, signal);
      const msg = await this.api.sendDocument(
        job.chatId,
        new InputFile(r.path, r.fileName),
        {
          caption: t(locale, "result-caption", { id: String(job.id), name: r.fileName }),
          reply_parameters: { message_id: job.messageId, allow_sending_without_reply: true },
        },
        signal as never,
      );
      const fileId = msg.document?.file_id;
      if (fileId) await this.store.setResultFileId(job.id, r.idx, fileId);
      this.log.info({ job: job.id, file_unique_id: job.fileUniqueId, idx: r.idx, size: r.size }, "result sent");
    }
    return this.store.results(job.id);
  }

  /** Send the stored results again by `file_id` (/resend, re-sent file). Returns how many were sent. */
  async redeliver(job: FileJob, locale: Locale): Promise<number> {
    const results = await this.store.results(job.id);
    let sent = 0;
    for (const r of results) {
      if (!r.telegramFileId) continue;
      await this.holds?.wait(job.chatId);
      await this.api.sendDocument(job.chatId, r.telegramFileId, { caption: t(locale, "result-caption", { id: String(job.id), name: r.fileName }) });
      sent++;
    }
    this.log.info({ job: job.id, file_unique_id: job.fileUniqueId, sent }, "results re-delivered by file_id");
    return sent;
  }
}
