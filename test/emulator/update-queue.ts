/**
 * Pending updates, getUpdates long polling and webhook delivery (botapi-facts.md §2 "getUpdates",
 * "setWebhook"; TBA `process_get_updates_query`, `abort_long_poll`, WebhookActor; field case BR-04).
 */
import { ApiError, E } from "./api-error.ts";

/** Update types delivered when allowed_updates is [] or never set (all except these three). */
const NOT_DEFAULT = new Set(["chat_member", "message_reaction", "message_reaction_count"]);
/** LONG_POLL_MAX_TIMEOUT in TBA, seconds. */
export const LONG_POLL_MAX_TIMEOUT = 50;

interface Queued {
  update: Record<string, unknown> & { update_id: number };
  /** Re-queued by redeliver(): served once even below the confirmed offset. */
  redelivered?: boolean;
}

interface PendingPoll {
  finish: (r: unknown[] | ApiError) => void;
  limit: number;
}

/** Webhook settings (setWebhook). */
export interface WebhookConfig {
  url: string;
  secretToken?: string;
  maxConnections: number;
  allowedUpdates?: string[];
  ipAddress?: string;
}

/** Executes a method named in a webhook reply body (grammY webhook replies); provided by the server. */
export type WebhookReplyExecutor = (params: Record<string, unknown>) => Promise<void>;

/** The bot's update queue. */
export class UpdateQueue {
  private nextId: number;
  private queue: Queued[] = [];
  private readonly history = new Map<number, Queued["update"]>();
  private allowed: string[] | undefined;
  private poll: PendingPoll | undefined;
  private lastPoll: { offset: number; at: number } | undefined;
  webhook: WebhookConfig | undefined;
  webhookError: { date: number; message: string } | undefined;
  readonly deliveries: unknown[] = [];
  private delivering = false;
  private closed = false;

  constructor(
    firstUpdateId: number,
    private readonly onWebhookReply: WebhookReplyExecutor,
    private readonly repeatPollRule = true,
  ) {
    if (!(firstUpdateId >= 1)) throw new Error("emulator: firstUpdateId must be ≥ 1");
    this.nextId = firstUpdateId;
  }

  /** Queues an update payload (`{message: …}` etc.); returns its update_id (consecutive). */
  push(payload: Record<string, unknown>): number {
    const update = { update_id: this.nextId++, ...payload };
    this.history.set(update.update_id, update);
    this.queue.push({ update });
    this.wake();
    return update.update_id;
  }

  /** Re-queues a confirmed update (served once more, first). @throws Error for an unknown update_id. */
  redeliver(updateId: number): void {
    const update = this.history.get(updateId);
    if (!update) throw new Error(`emulator: no update ${updateId} to redeliver`);
    this.queue = this.queue.filter((q) => q.update.update_id !== updateId);
    this.queue.unshift({ update, redelivered: true });
    this.wake();
  }

  /** Number of unconfirmed updates. */
  get pending(): number {
    return this.queue.length;
  }

  /** drop_pending_updates. */
  clear(): void {
    this.queue = [];
  }

  private isAllowed(u: Record<string, unknown>): boolean {
    const type = Object.keys(u).find((k) => k !== "update_id") ?? "";
    const allowed = this.webhook?.allowedUpdates ?? this.allowed;
    return allowed && allowed.length > 0 ? allowed.includes(type) : !NOT_DEFAULT.has(type);
  }

  /** Drops confirmed (offset > 0: ids < offset) or surplus (offset < 0: all but the last -offset) updates. */
  private confirm(offset: number): void {
    if (offset > 0) this.queue = this.queue.filter((q) => q.redelivered || q.update.update_id >= offset);
    else if (offset < 0) this.queue = this.queue.slice(offset);
  }

  private take(limit: number): unknown[] {
    this.queue = this.queue.filter((q) => this.isAllowed(q.update));
    // One answer carries at most ~4 MiB of updates (TBA JsonUpdates, 1 << 22), but always at least one.
    const batch: Queued[] = [];
    let bytes = 0;
    for (const q of this.queue.slice(0, limit)) {
      bytes += JSON.stringify(q.update).length;
      if (batch.length > 0 && bytes > 1 << 22) break;
      batch.push(q);
    }
    for (const q of batch) delete q.redelivered;
    return batch.map((q) => q.update);
  }

  private wake(): void {
    if (this.webhook) void this.deliver();
    const p = this.poll;
    if (p && this.queue.some((q) => this.isAllowed(q.update))) p.finish(this.take(p.limit));
  }

  /** Ends the pending long poll with a 409 (a newer poll or setWebhook took over). */
  abortPoll(description: string): void {
    this.poll?.finish(new ApiError(409, description));
  }

  /**
   * Bot API getUpdates. offset/limit/timeout already parsed; allowedUpdates undefined = keep the previous list.
   * Same offset within 3 s with timeout < 3 → timeout 3; within 0.5 s → limit 1 (TBA).
   * @throws ApiError 409 while a webhook is set, or when a newer poll terminates this one.
   */
  async getUpdates(
    o: { offset: number; limit: number; timeout: number; allowedUpdates?: string[] },
    signal: AbortSignal,
    now: number,
  ): Promise<unknown[]> {
    if (this.webhook) throw new ApiError(409, E.conflictWebhook);
    let { limit, timeout } = o;
    if (o.allowedUpdates !== undefined) this.allowed = o.allowedUpdates;
    if (this.repeatPollRule && this.lastPoll && this.lastPoll.offset === o.offset && timeout < 3 && now - this.lastPoll.at < 3000) {
      timeout = 3;
      if (now - this.lastPoll.at < 500) limit = 1;
    }
    this.lastPoll = { offset: o.offset, at: now };
    this.confirm(o.offset);
    this.abortPoll(E.conflictPoll);
    const ready = this.take(limit);
    if (ready.length > 0 || timeout === 0 || this.closed) return ready;
    return new Promise<unknown[]>((resolve, reject) => {
      const poll: PendingPoll = {
        limit,
        finish: (r) => {
          if (this.poll !== poll) return;
          this.poll = undefined;
          clearTimeout(timer);
          signal.removeEventListener("abort", onAbort);
          if (r instanceof ApiError) reject(r);
          else resolve(r);
        },
      };
      const timer = setTimeout(() => poll.finish([]), Math.min(timeout, LONG_POLL_MAX_TIMEOUT) * 1000);
      // The client went away: forget the poll so a later one is not answered 409 on its behalf.
      const onAbort = () => poll.finish([]);
      signal.addEventListener("abort", onAbort);
      this.poll = poll;
    });
  }

  /** Sets the webhook and starts delivery; ends a pending poll with 409 "terminated by setWebhook request". */
  setWebhook(cfg: WebhookConfig): void {
    this.webhook = cfg;
    this.webhookError = undefined;
    this.abortPoll(E.conflictSetWebhook);
    void this.deliver();
  }

  /** Removes the webhook. */
  deleteWebhook(): void {
    this.webhook = undefined;
    this.webhookError = undefined;
  }

  /**
   * Delivers queued updates one at a time: POST JSON with X-Telegram-Bot-Api-Secret-Token; any 2xx = delivered
   * (a JSON body with `method` is executed); otherwise retried after 100 ms doubling up to 2 s.
   */
  private async deliver(): Promise<void> {
    if (this.delivering) return;
    this.delivering = true;
    let backoff = 100;
    try {
      while (this.webhook && !this.closed) {
        this.queue = this.queue.filter((q) => this.isAllowed(q.update));
        const q = this.queue[0];
        if (!q) break;
        const hook = this.webhook;
        const headers: Record<string, string> = { "content-type": "application/json" };
        if (hook.secretToken) headers["x-telegram-bot-api-secret-token"] = hook.secretToken;
        let delivered = false;
        try {
          const res = await fetch(hook.url, {
            method: "POST",
            headers,
            body: JSON.stringify(q.update),
            signal: AbortSignal.timeout(60_000),
          });
          const body = await res.text();
          if (res.status >= 200 && res.status < 300) {
            delivered = true;
            this.deliveries.push(q.update);
            this.queue = this.queue.filter((x) => x !== q);
            backoff = 100;
            await this.executeReply(body);
          } else {
            this.webhookError = { date: Math.floor(Date.now() / 1000), message: `Wrong response from the webhook: ${res.status} ${res.statusText}`.trim() };
          }
        } catch (e) {
          this.webhookError = { date: Math.floor(Date.now() / 1000), message: (e as Error).message.includes("refused") ? "Connection refused" : "Connection timed out" };
        }
        if (!delivered) {
          await Bun.sleep(backoff);
          backoff = Math.min(backoff * 2, 2000);
        }
      }
    } finally {
      this.delivering = false;
    }
  }

  private async executeReply(body: string): Promise<void> {
    if (!body.trim().startsWith("{")) return;
    try {
      const parsed = JSON.parse(body) as Record<string, unknown>;
      if (typeof parsed.method === "string") await this.onWebhookReply(parsed);
    } catch {
      // Telegram ignores unparsable webhook replies.
    }
  }

  /** Ends polling and delivery (close()). */
  close(): void {
    this.closed = true;
    this.poll?.finish([]);
  }
}
