/**
 * A `StatusReporter` that edits the job's status message with plain Bot API
 * calls, collapsing updates per job (latest text wins, at most one edit per
 * `minIntervalMs`) and treating "message is not modified" as success.
 * Used where the outbox is not wired (tools, tests of the engine alone).
 */
import { GrammyError, type Api } from "grammy";
import type { FileJob } from "../db/schema.ts";
import type { JobStore } from "../jobs/store.ts";
import type { Logger } from "../log.ts";
import type { StatusReporter } from "./reporter.ts";

interface Slot {
  chatId: number;
  messageId: number | null;
  latest: string | null;
  shown: string | null;
  timer: ReturnType<typeof setTimeout> | null;
  lastAt: number;
  chain: Promise<void>;
}

/** Direct-edit status reporter (see module doc). */
export class DirectStatusReporter implements StatusReporter {
  private readonly slots = new Map<number, Slot>();

  constructor(
    private readonly api: Api,
    private readonly store: JobStore,
    private readonly log: Logger,
    private readonly minIntervalMs = 3000,
  ) {}

  private slot(job: FileJob): Slot {
    let s = this.slots.get(job.id);
    if (!s) {
      s = { chatId: job.chatId, messageId: job.statusMessageId, latest: null, shown: null, timer: null, lastAt: 0, chain: Promise.resolve() };
      this.slots.set(job.id, s);
    }
    return s;
  }

  async announce(job: FileJob, text: string): Promise<void> {
    const msg = await this.api.sendMessage(job.chatId, text, { reply_parameters: { message_id: job.messageId, allow_sending_without_reply: true } });
    await this.store.setStatusMessage(job.id, msg.message_id);
    const s = this.slot(job);
    s.messageId = msg.message_id;
    s.shown = text;
    s.lastAt = Date.now();
  }

  update(job: FileJob, text: string): void {
    const s = this.slot(job);
    s.latest = text;
    if (s.timer) return;
    const wait = Math.max(0, s.lastAt + this.minIntervalMs - Date.now());
    s.timer = setTimeout(() => {
      s.timer = null;
      s.chain = s.chain.then(() => this.flush(job.id, s));
    }, wait);
  }

  async final(job: FileJob, text: string): Promise<void> {
    const s = this.slot(job);
    if (s.timer) clearTimeout(s.timer);
    s.timer = null;
    s.latest = text;
    s.chain = s.chain.then(() => this.flush(job.id, s));
    await s.chain;
    this.slots.delete(job.id);
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.slots.values()].map((s) => s.chain));
  }

  private async flush(jobId: number, s: Slot): Promise<void> {
    const text = s.latest;
    if (text === null || text === s.shown) return;
    s.lastAt = Date.now();
    try {
      if (s.messageId === null) {
        const msg = await this.api.sendMessage(s.chatId, text);
        s.messageId = msg.message_id;
        await this.store.setStatusMessage(jobId, msg.message_id);
      } else {
        await this.api.editMessageText(s.chatId, s.messageId, text);
      }
      s.shown = text;
    } catch (err) {
      if (err instanceof GrammyError && /message is not modified/.test(err.description)) {
        s.shown = text;
        return;
      }
      if (err instanceof GrammyError && /message to edit not found/.test(err.description)) {
        s.messageId = null; // the user deleted it: the next text goes out as a new message
        return this.flush(jobId, s);
      }
      this.log.warn({ job: jobId, err }, "status message not delivered");
    }
  }
}
