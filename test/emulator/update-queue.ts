/**
 * Pending updates, getUpdates long polling and webhook delivery (botapi-facts.md §2 "getUpdates",
 * "setWebhook"; TBA `process_get_updates_query`, `abort_long_poll`, `fail_query_conflict`, WebhookActor;
 * field case BR-04). Updates live at most 24 h (TBA `add_message`, `add_update_impl`; DOC #getupdates
 * "not kept longer than 24 hours"), and 409 Conflict answers are paced like TBA's.
 */
import { ApiError, E } from "./api-error.ts";

/** Update types delivered when allowed_updates is [] or never set (all except these three). */
const NOT_DEFAULT = new Set(["chat_member", "message_reaction", "message_reaction_count"]);
/** LONG_POLL_MAX_TIMEOUT in TBA, seconds. */
export const LONG_POLL_MAX_TIMEOUT = 50;
/** How long Telegram keeps an update, ms: 24 h from its object's `edit_date`/`date`, or from arrival when it has none (TBA). */
export const UPDATE_TTL_MS = 86_400_000;
/** A callback query lives 150 s (TBA `add_update(UpdateType::CallbackQuery, …, 150, …)`). */
export const CALLBACK_QUERY_TTL_MS = 150_000;
/** TBA `fail_query_conflict`: at most one immediate 409 per this many ms; the others are answered this much later. */
export const CONFLICT_PACE_MS = 3000;

type Update = Record<string, unknown> & { update_id: number };

interface Queued {
  update: Update;
  /** Epoch ms from which Telegram no longer serves the update. */
  expiresAt: number;
  /** Re-queued by redeliver(): served once even below the confirmed offset. */
  redelivered?: boolean;
}

interface PendingPoll {
  /** Settle the poll if it is still the pending one (timer and abort listener removed). */
  finish: (r: unknown[] | ApiError) => void;
  /** Stop being the pending poll without answering yet (its answer is paced). */
  detach: () => void;
  /** Answer the poll (after detach). */
  settle: (r: unknown[] | ApiError) => void;
  limit: number;
}

/**
 * When an update payload stops being served, epoch ms, or null when Telegram would not queue it at
 * all. An update whose object carries a `date` (messages: `edit_date` when set; chat_member,
 * message_reaction, chat_join_request …) lives until that date + 24 h and is not queued once older
 * (TBA `add_message`: "don't send messages received/edited more than 1 day ago"; `left_time > 0`
 * checks); a callback_query lives 150 s from arrival, anything else 24 h from arrival.
 */
export function expiryOf(payload: Record<string, unknown>, now: number): number | null {
  const type = Object.keys(payload).find((k) => k !== "update_id") ?? "";
  const body = payload[type] as { date?: unknown; edit_date?: unknown } | undefined;
  const date = typeof body?.edit_date === "number" && body.edit_date !== 0 ? body.edit_date : body?.date;
  if (typeof date === "number") {
    const expiresAt = date * 1000 + UPDATE_TTL_MS;
    return expiresAt <= now ? null : expiresAt;
  }
  return now + (type === "callback_query" ? CALLBACK_QUERY_TTL_MS : UPDATE_TTL_MS);
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
  private readonly history = new Map<number, Queued>();
  private allowed: string[] | undefined;
  private poll: PendingPoll | undefined;
  private lastPoll: { offset: number; at: number } | undefined;
  webhook: WebhookConfig | undefined;
  webhookError: { date: number; message: string } | undefined;
  readonly deliveries: unknown[] = [];
  private delivering = false;
  private closed = false;
  /** TBA `next_get_updates_conflict_time_`: before this epoch ms a 409 is answered CONFLICT_PACE_MS late. */
  private nextConflictAt = 0;
  /** 409 answers waiting for their paced time (answered at once by close()). */
  private readonly pacedConflicts = new Set<() => void>();

  /**
   * @param clock epoch ms for arrival times and expiry (tests inject a fake so they need not wait 24 h);
   *   getUpdates takes its request time as an argument
   */
  constructor(
    firstUpdateId: number,
    private readonly onWebhookReply: WebhookReplyExecutor,
    private readonly repeatPollRule = true,
    private readonly clock: () => number = Date.now,
  ) {
    if (!(firstUpdateId >= 1)) throw new Error("emulator: firstUpdateId must be ≥ 1");
    this.nextId = firstUpdateId;
  }

  /**
   * Queues an update payload (`{message: …}` etc.); returns its update_id (consecutive), or 0 when
   * Telegram would drop it unqueued (a message older than 24 h: no update_id is used up).
   */
  push(payload: Record<string, unknown>): number {
    const expiresAt = expiryOf(payload, this.clock());
    if (expiresAt === null) return 0;
    const q: Queued = { update: { update_id: this.nextId++, ...payload }, expiresAt };
    this.history.set(q.update.update_id, q);
    this.queue.push(q);
    this.wake();
    return q.update.update_id;
  }

  /** Re-queues a confirmed update (served once more, first). @throws Error for an unknown update_id. */
  redeliver(updateId: number): void {
    const old = this.history.get(updateId);
    if (!old) throw new Error(`emulator: no update ${updateId} to redeliver`);
    this.queue = this.queue.filter((q) => q.update.update_id !== updateId);
    this.queue.unshift({ update: old.update, expiresAt: old.expiresAt, redelivered: true });
    this.wake();
  }

  /** Number of unconfirmed updates still within their lifetime. */
  get pending(): number {
    this.dropExpired(this.clock());
    return this.queue.length;
  }

  /** Forgets updates whose lifetime is over (never served again, not counted as pending). */
  private dropExpired(now: number): void {
    if (this.queue.some((q) => q.expiresAt <= now)) this.queue = this.queue.filter((q) => q.expiresAt > now);
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

  private take(limit: number, now: number): unknown[] {
    this.dropExpired(now);
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
    const now = this.clock();
    if (p && this.queue.some((q) => q.expiresAt > now && this.isAllowed(q.update))) p.finish(this.take(p.limit, now));
  }

  /**
   * Answers a 409 Conflict the way TBA's `fail_query_conflict` does: at once when no conflict was
   * answered at once in the last CONFLICT_PACE_MS (and that window starts now), else CONFLICT_PACE_MS later.
   */
  private conflict(description: string, now: number, answer: (e: ApiError) => void): void {
    const err = new ApiError(409, description);
    if (now >= this.nextConflictAt) {
      this.nextConflictAt = now + CONFLICT_PACE_MS;
      answer(err);
      return;
    }
    const fire = () => {
      clearTimeout(timer);
      this.pacedConflicts.delete(fire);
      answer(err);
    };
    const timer = setTimeout(fire, CONFLICT_PACE_MS);
    this.pacedConflicts.add(fire);
  }

  /** Ends the pending long poll with a paced 409 (a newer poll or setWebhook took over); `now` epoch ms. */
  abortPoll(description: string, now: number = this.clock()): void {
    const p = this.poll;
    if (!p) return;
    p.detach();
    this.conflict(description, now, (e) => p.settle(e));
  }

  /**
   * Bot API getUpdates. offset/limit/timeout already parsed; allowedUpdates undefined = keep the previous list.
   * Same offset within 3 s with timeout < 3 → timeout 3; within 0.5 s → limit 1 (TBA). Updates past
   * their lifetime are dropped unserved. `now` is the request time, epoch ms.
   * @throws ApiError 409 while a webhook is set, or when a newer poll terminates this one (both paced).
   */
  async getUpdates(
    o: { offset: number; limit: number; timeout: number; allowedUpdates?: string[] },
    signal: AbortSignal,
    now: number,
  ): Promise<unknown[]> {
    if (this.webhook) return new Promise<unknown[]>((_, reject) => this.conflict(E.conflictWebhook, now, reject));
    let { limit, timeout } = o;
    if (o.allowedUpdates !== undefined) this.allowed = o.allowedUpdates;
    if (this.repeatPollRule && this.lastPoll && this.lastPoll.offset === o.offset && timeout < 3 && now - this.lastPoll.at < 3000) {
      timeout = 3;
      if (now - this.lastPoll.at < 500) limit = 1;
    }
    this.lastPoll = { offset: o.offset, at: now };
    this.confirm(o.offset);
    this.abortPoll(E.conflictPoll, now);
    const ready = this.take(limit, now);
    if (ready.length > 0 || timeout === 0 || this.closed) return ready;
    return new Promise<unknown[]>((resolve, reject) => {
      const poll: PendingPoll = {
        limit,
        detach: () => {
          if (this.poll === poll) this.poll = undefined;
          clearTimeout(timer);
          signal.removeEventListener("abort", onAbort);
        },
        settle: (r) => (r instanceof ApiError ? reject(r) : resolve(r)),
        finish: (r) => {
          if (this.poll !== poll) return;
          poll.detach();
          poll.settle(r);
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
    this.abortPoll(E.conflictSetWebhook, this.clock());
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
        this.dropExpired(this.clock());
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
            this.webhookError = { date: Math.floor(this.clock() / 1000), message: `Wrong response from the webhook: ${res.status} ${res.statusText}`.trim() };
          }
        } catch (e) {
          this.webhookError = { date: Math.floor(this.clock() / 1000), message: (e as Error).message.includes("refused") ? "Connection refused" : "Connection timed out" };
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
    for (const fire of [...this.pacedConflicts]) fire();
  }
}
