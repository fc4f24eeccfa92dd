/**
 * RateLedger: where the outbox keeps the rate state that every chat-bound call of a bot shares — each
 * chat's timings (last call of each kind, the 429 hold) and the bot-wide slot queue.
 *
 * Source: seed 002 "TimingsCache" (timings outlive the chat machine) plus the bot-wide limit
 * (botapi-facts §3: ~30 messages/s). One process keeps it in memory ({@link MemoryLedger}). Several
 * processes sending for one bot (issue 14 item 5) need it shared: an implementation of this
 * interface over PostgreSQL keeps a row per chat and one per bot, merges what other hosts did in
 * `refresh` (GREATEST of the times), publishes in `record`, and reserves bot-wide slots in one
 * UPDATE … RETURNING. The chat machine stays pure: it plans on the Timings object it is given.
 * All times are ms of the outbox's Clock; a ledger shared by hosts needs a shared clock (epoch ms).
 */
import { RateLimiter, type BotLimiter } from "./limiter.ts";
import { TimingsCache, type Timings } from "./timings.ts";

/** The outbox's shared rate state. Keys are `<bot id>:<chat id>`. */
export interface RateLedger {
  /** The chat's timings: one object per chat, shared by every worker of that chat, kept past machine eviction. */
  timings(key: string): Timings;
  /** Before the chat's machine plans: bring `t` up to date with calls and holds recorded elsewhere (another process). */
  refresh(key: string, t: Timings): void | Promise<void>;
  /** After a call ended or a hold began: publish `t` (and keep it most recently used). */
  record(key: string, t: Timings): void | Promise<void>;
  /** The bot-wide limiter of `botId` (token prefix), or null when the bot-wide cap is off. */
  limiter(botId: string): BotLimiter | null;
}

/** The in-process ledger: an LRU of chat timings (seed: timings_capacity) and one {@link RateLimiter} per bot. */
export class MemoryLedger implements RateLedger {
  private readonly cache: TimingsCache;
  private readonly limiters = new Map<string, RateLimiter>();

  /**
   * @param capacity chats whose timings are remembered (seed: timings_capacity)
   * @param perSecond bot-wide sends + edits + drafts + uploads per second; 0 = no bot-wide cap
   */
  constructor(
    capacity: number,
    private readonly perSecond: number,
  ) {
    this.cache = new TimingsCache(capacity);
  }

  timings(key: string): Timings {
    return this.cache.get(key);
  }

  refresh(): void {
    // One process: the object the machine holds is the only copy.
  }

  record(key: string, t: Timings): void {
    this.cache.touch(key, t);
  }

  limiter(botId: string): BotLimiter | null {
    if (!(this.perSecond > 0)) return null;
    let l = this.limiters.get(botId);
    if (!l) this.limiters.set(botId, (l = new RateLimiter(this.perSecond)));
    return l;
  }
}
