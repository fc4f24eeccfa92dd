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
export class RateLimiter {
  private nextSlot = -Infinity;
  private lastUse = -Infinity;
  /** Spacing between two slots, ms. */
  readonly spacingMs: number;

  /** @param perSecond slots per second (> 0). */
  constructor(perSecond: number) {
    if (!(perSecond > 0)) throw new RangeError("RateLimiter perSecond must be > 0");
    this.spacingMs = 1000 / perSecond;
  }

  /** Reserve the next slot at or after `now`; returns its time (== now when free). The slot is consumed. */
  reserve(now: number): number {
    const slot = Math.max(now, this.nextSlot);
    this.nextSlot = slot + this.spacingMs;
    return slot;
  }

  /** ms to wait at `now` before a send keeps one spacing after the last real send (0 = send now). */
  useWait(now: number): number {
    return Math.max(0, this.lastUse + this.spacingMs - now);
  }

  /** Record a real send at `now` (call right before the API call). */
  use(now: number): void {
    this.lastUse = Math.max(this.lastUse, now);
  }
}
