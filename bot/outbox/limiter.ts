/**
 * Bot-wide limiter: spaces sends/edits/drafts of one bot across all its chats.
 *
 * Source: Telegram Bots FAQ "~30 messages per second" for bulk sends (botapi-facts §3). The
 * per-chat machines keep each chat under ~1/s (groups 20/min); with many chats at once this
 * limiter keeps the sum under the bot-wide cap. It is a pure GCRA reservation: reserve(now)
 * hands out slots `1000/perSecond` ms apart, first come first served, so no chat starves.
 */

/** Reservation-based rate limiter (GCRA with burst 1). Times are monotonic ms. */
export class RateLimiter {
  private nextSlot = -Infinity;
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
}
