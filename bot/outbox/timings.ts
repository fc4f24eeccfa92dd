/**
 * Per-chat timings (last call of each kind, chat hold) and the LRU that keeps them past
 * machine eviction.
 *
 * Source: seed 002 "TimingsCache — LRU по чатам": knowing "we edited in this chat 0.9 s ago"
 * must survive the machine, or the first message after an eviction meets a 429.
 */
import { spendsMessageBudget } from "./action.ts";
import type { Kind } from "./message.ts";

/** Monotonic ms of the last call per kind in one chat; -Infinity = never. */
export interface Timings {
  send: number;
  edit: number;
  delete: number;
  action: number;
  draft: number;
  /** Last send or edit, for the shared message budget (Options.messageIntervalMs). */
  message: number;
  /** Messages that last send or edit put into the chat (an album of n: n); the next waits that many paces. */
  messageWeight: number;
  /** No call to this chat before this monotonic ms (429 retry_after; seed: hold_until). */
  holdUntil: number;
}

/** Fresh timings: nothing done yet, no hold. */
export function newTimings(): Timings {
  return { send: -Infinity, edit: -Infinity, delete: -Infinity, action: -Infinity, draft: -Infinity, message: -Infinity, messageWeight: 1, holdUntil: -Infinity };
}

/**
 * Record a call of `kind` at `now` (ms); sends and edits also spend the shared message budget,
 * `weight` times (an album of n documents is n messages).
 */
export function markCall(t: Timings, kind: Kind, now: number, weight = 1): void {
  t[kind] = now;
  if (spendsMessageBudget(kind)) {
    t.message = now;
    t.messageWeight = weight;
  }
}

/** Least-recently-used map of chat key → Timings (seed: TimingsCache, capacity timings_capacity). */
export class TimingsCache {
  private readonly map = new Map<string, Timings>();

  constructor(readonly capacity: number) {}

  /** Timings for `key`, created when missing; marks it most recently used. */
  get(key: string): Timings {
    let t = this.map.get(key);
    if (t) this.map.delete(key);
    else t = newTimings();
    this.map.set(key, t);
    this.evict();
    return t;
  }

  /** Re-insert a live machine's object so it stays the most recently used. */
  touch(key: string, t: Timings): void {
    this.map.delete(key);
    this.map.set(key, t);
    this.evict();
  }

  /** Number of chats remembered. */
  get size(): number {
    return this.map.size;
  }

  private evict(): void {
    while (this.map.size > this.capacity) {
      const oldest = this.map.keys().next().value as string;
      this.map.delete(oldest);
    }
  }
}
