/**
 * Sending results to the chat: first delivery uploads each result file with
 * `sendDocument` and stores the returned `document.file_id` right away (so a crash
 * never sends the same result twice on resume); re-delivery sends the stored
 * `file_id`s — no download, no processing (seed 000: "повторная выдача стоит одного
 * обращения к базе и одного сообщения").
 */
import { GrammyError, InputFile, type Api } from "grammy";
import type { Message } from "grammy/types";
import type { FileJob, JobResult } from "../db/schema.ts";
import type { Locale } from "../i18n/index.ts";
import { t } from "../i18n/index.ts";
import type { JobStore } from "../jobs/store.ts";
import type { Logger } from "../log.ts";
import type { ChatHolds } from "./chat-holds.ts";

/**
 * Spacing between two uploads to one chat, ms: Telegram's FAQ allows about one message a second
 * per chat and 20 a minute in a group (botapi-facts §3). Uploads to a chat also go one at a time,
 * so when a 429 hold ends, the waiting results do not all hit the chat at once.
 */
export function uploadSpacingMs(chatId: number): number {
  return chatId < 0 ? 3000 : 1000;
}

/** Sends result documents. */
export class Delivery {
  /** The last upload of each chat in turn: uploads to one chat run one after another. */
  private readonly turns = new Map<number, Promise<void>>();
  /** When each chat last got an upload (epoch ms; bounded, oldest dropped). */
  private readonly lastUpload = new Map<number, number>();

  /**
   * @param api grammY Api (auto-retry installed: short 429s and 5xx are retried per request)
   * @param store job store (result rows and their file_ids)
   * @param holds chat holds after 429s: no upload goes to a held chat (BR-06)
   */
  constructor(
    private readonly api: Api,
    private readonly store: JobStore,
    private readonly log: Logger,
    private readonly holds: ChatHolds,
  ) {}

  /**
   * Upload every result of `job` not yet sent; records each `file_id` as soon as
   * Telegram returns it.
   * @throws GrammyError/HttpError from sendDocument other than 429 (the caller classifies)
   */
  async sendResults(job: FileJob, locale: Locale, signal?: AbortSignal): Promise<void> {
    const results = await this.store.results(job.id);
    for (const r of results) {
      if (r.telegramFileId) continue;
      const msg = await this.sendDocument(job, new InputFile(r.path, r.fileName), {
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
   * @throws GrammyError from sendDocument other than 429 (400 when the `file_id` is no longer valid)
   */
  async sendStored(job: FileJob, result: Pick<JobResult, "telegramFileId" | "fileName">, locale: Locale, signal?: AbortSignal): Promise<string> {
    const msg = await this.sendDocument(job, result.telegramFileId!, { caption: t(locale, "result-caption", { id: String(job.id), name: result.fileName }) }, signal);
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

  /**
   * sendDocument paced per chat (one upload at a time, {@link uploadSpacingMs} apart) that honours
   * chat holds and treats a 429 as a hold, not a failure: when auto-retry gives up (retry_after
   * over its cap, or its retries used), the chat is held for `retry_after` and the same document is
   * sent again (field case BR-06: the job ends `ready`, a 429 is not an attempt). Ends only by
   * success, another error, or `signal`.
   */
  private async sendDocument(job: FileJob, document: InputFile | string, other: Parameters<Api["sendDocument"]>[2], signal?: AbortSignal): Promise<Message.DocumentMessage> {
    const chatId = job.chatId;
    const before = this.turns.get(chatId) ?? Promise.resolve();
    let done!: () => void;
    const turn = before.then(() => new Promise<void>((r) => (done = r)));
    this.turns.set(chatId, turn);
    await before;
    try {
      const wait = (this.lastUpload.get(chatId) ?? 0) + uploadSpacingMs(chatId) - Date.now();
      if (wait > 0 && !signal?.aborted) await Bun.sleep(wait);
      return await this.sendThroughHolds(job, document, other, signal);
    } finally {
      this.lastUpload.delete(chatId); // re-insert: the map stays ordered by last use
      this.lastUpload.set(chatId, Date.now());
      if (this.lastUpload.size > 10_000) this.lastUpload.delete(this.lastUpload.keys().next().value!);
      done();
      if (this.turns.get(chatId) === turn) this.turns.delete(chatId);
    }
  }

  /** One document through chat holds: a 429 holds the chat and the same document goes again. */
  private async sendThroughHolds(job: FileJob, document: InputFile | string, other: Parameters<Api["sendDocument"]>[2], signal?: AbortSignal): Promise<Message.DocumentMessage> {
    for (;;) {
      await this.holds.wait(job.chatId, signal);
      try {
        return await this.api.sendDocument(job.chatId, document, other, signal as never);
      } catch (err) {
        if (!(err instanceof GrammyError) || err.error_code !== 429 || signal?.aborted) throw err;
        const retryAfter = err.parameters.retry_after ?? 1;
        this.holds.note(job.chatId, Date.now() + retryAfter * 1000);
        this.log.warn({ job: job.id, chat_id: job.chatId, retry_after: retryAfter }, "429 on a result upload; holding the chat and sending again (not an attempt)");
      }
    }
  }
}
