/**
 * Flood control like the Bot API FAQ describes it (botapi-facts.md §3 "Rate limits"): ~1 msg/s per chat with
 * bursts, ≤ 20 msgs/min per group, ~30 msgs/s overall; edits share the send budget (levlam, tdlib/td#2592).
 * Also holds set by an injected 429 (the chat stays limited for retry_after seconds, like Telegram).
 */
import type { RateLimits } from "./types.ts";

/** Defaults of {@link RateLimits}. */
export const DEFAULT_RATE_LIMITS: Required<RateLimits> = {
  perChatBurst: 3,
  perChatPerSec: 1,
  groupPerMin: 20,
  groupWindowMs: 60_000,
  globalPerSec: 30,
  chatActionPerSec: 10,
  draftPerSec: 0,
};

/** Which budget a method draws from. */
export type RateClass = "message" | "chatAction" | "draft" | "none";

class Bucket {
  private tokens: number;
  private last: number;
  constructor(
    private readonly capacity: number,
    private readonly perSec: number,
    now: number,
  ) {
    this.tokens = capacity;
    this.last = now;
  }
  private refill(now: number): void {
    this.tokens = Math.min(this.capacity, this.tokens + ((now - this.last) / 1000) * this.perSec);
    this.last = now;
  }
  /** ms until one token is available (0 = now). */
  waitMs(now: number): number {
    this.refill(now);
    return this.tokens >= 1 ? 0 : ((1 - this.tokens) / this.perSec) * 1000;
  }
  /** Takes `n` tokens; the bucket may go below zero (an album admitted with one token left pays the rest later). */
  take(now: number, n = 1): void {
    this.refill(now);
    this.tokens -= n;
  }
}

/** Token buckets per chat / globally and a sliding window per group. All times are epoch ms. */
export class RateLimiter {
  private limits: Required<RateLimits> | false;
  private chat = new Map<number, Bucket>();
  private action = new Map<number, Bucket>();
  private draft = new Map<number, Bucket>();
  private group = new Map<number, number[]>();
  private global: Bucket | undefined;
  private holds = new Map<number, number>();

  constructor(limits: Partial<RateLimits> | false | undefined) {
    this.limits = limits === false ? false : { ...DEFAULT_RATE_LIMITS, ...limits };
  }

  /** Replaces the limits and forgets all counters (holds stay). */
  set(limits: Partial<RateLimits> | false): void {
    this.limits = limits === false ? false : { ...DEFAULT_RATE_LIMITS, ...limits };
    this.chat.clear();
    this.action.clear();
    this.draft.clear();
    this.group.clear();
    this.global = undefined;
  }

  /** Keeps `chatId` limited until `until` (epoch ms): set by an injected 429 with retry_after. */
  hold(chatId: number, until: number): void {
    this.holds.set(chatId, Math.max(this.holds.get(chatId) ?? 0, until));
  }

  /**
   * Checks and, when allowed, consumes `weight` units for a request to `chatId`. A request is admitted when one
   * unit is free in each budget; an album of n messages (sendMediaGroup) then takes all n, so the chat, the group
   * window and the bot-wide bucket wait for them afterwards (UNCONFIRMED whether Telegram counts an album as one
   * message or n; n is the strict reading of "messages per second").
   * @returns 0 when allowed, else the ms to wait (nothing consumed).
   */
  acquire(cls: RateClass, chatId: number, now: number, weight = 1): number {
    if (cls === "none") return 0;
    const held = (this.holds.get(chatId) ?? 0) - now;
    if (cls === "message" && held > 0) return held;
    const l = this.limits;
    if (l === false) return 0;
    if (cls === "chatAction" || cls === "draft") {
      const rate = cls === "chatAction" ? l.chatActionPerSec : l.draftPerSec;
      if (!(rate > 0)) return 0;
      const map = cls === "chatAction" ? this.action : this.draft;
      let b = map.get(chatId);
      if (!b) map.set(chatId, (b = new Bucket(rate, rate, now)));
      const w = b.waitMs(now);
      if (w === 0) b.take(now);
      return w;
    }
    let chatBucket = this.chat.get(chatId);
    if (!chatBucket) this.chat.set(chatId, (chatBucket = new Bucket(l.perChatBurst, l.perChatPerSec, now)));
    this.global ??= new Bucket(l.globalPerSec, l.globalPerSec, now);
    let wait = Math.max(chatBucket.waitMs(now), this.global.waitMs(now));
    let window: number[] | undefined;
    if (chatId < 0) {
      window = (this.group.get(chatId) ?? []).filter((t) => t > now - l.groupWindowMs);
      this.group.set(chatId, window);
      if (window.length >= l.groupPerMin) wait = Math.max(wait, window[window.length - l.groupPerMin]! + l.groupWindowMs - now);
    }
    if (wait > 0) return wait;
    chatBucket.take(now, weight);
    this.global.take(now, weight);
    for (let i = 0; i < weight; i++) window?.push(now);
    return 0;
  }
}
