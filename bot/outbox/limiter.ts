/**
 * Bot-wide limiter: spaces sends/edits/drafts of one bot across all its chats.
 *
 * Source: Telegram Bots FAQ "~30 messages per second" for bulk sends (botapi-facts §3). The
 * per-chat machines keep each chat under ~1/s (groups 20/min); with many chats at once this
 * limiter keeps the sum under the bot-wide cap. reserve(now) hands out slots `1000/perSecond` ms
 * apart, first come first served, so no chat starves; use()/useWait() hold that spacing in real
 * send times too.
 */

/**
 * Reservation-based rate limiter (GCRA with burst 1) plus a check on real send times. Times are
 * monotonic ms. `reserve()` gives each caller its place in a first-come-first-served queue; `use()`
 * records when a send really happened and `useWait()` keeps real sends ≥ spacing apart: a loaded
 * event loop fires many workers' timers at once, and reserved slots already in the past would
 * otherwise all be spent in one bunch (audit-002 LOW 8; FAQ "~30 messages per second").
 */
export class RateLimiter implements BotLimiter {
  private nextSlot = -Infinity;
  /** When the units of the last real send are used up: one spacing per message after it. */
  private usedUntil = -Infinity;
  /** Spacing between two slots, ms. */
  readonly spacingMs: number;

  /** @param perSecond slots per second (> 0). */
  constructor(perSecond: number) {
    if (!(perSecond > 0)) throw new RangeError("RateLimiter perSecond must be > 0");
    this.spacingMs = 1000 / perSecond;
  }

  /**
   * Reserve `weight` consecutive slots (an album of n documents takes n) at or after `now`; returns
   * the first one's time (== now when free). The slots are consumed.
   */
  reserve(now: number, weight = 1): number {
    const slot = Math.max(now, this.nextSlot);
    this.nextSlot = slot + this.spacingMs * weight;
    return slot;
  }

  /** ms to wait at `now` before a send keeps one spacing per message after the last real send (0 = send now). */
  useWait(now: number): number {
    return Math.max(0, this.usedUntil - now);
  }

  /** Record a real send of `weight` messages at `now` (call right before the API call). */
  use(now: number, weight = 1): void {
    this.usedUntil = Math.max(this.usedUntil, now + this.spacingMs * weight);
  }
}

/**
 * The bot-wide budget as the worker sees it: slot reservation (first come, first served) and the
 * check on real send times. {@link RateLimiter} keeps it in memory; a limiter shared by processes
 * (issue 14 item 5) implements the same three calls, `reserve` possibly asynchronous.
 */
export interface BotLimiter {
  /** Reserve `weight` slots at or after `now` (ms); resolves the first slot's time. */
  reserve(now: number, weight: number): number | Promise<number>;
  /** ms to wait at `now` so real sends stay one spacing per message apart (0 = go). */
  useWait(now: number): number;
  /** A send of `weight` messages starts now. */
  use(now: number, weight: number): void;
}
