/**
 * ChatMachine: the dispatcher of one chat. Knows nothing about the network and never sleeps:
 * plan(now) → one action or "sleep until", apply(action, result, now) → new state.
 *
 * Source: seed 002 "SenderMachine — диспетчер одного чата": state on four horizons (streams,
 * retry_at, done_at, idle_since) and apply()'s branch order, which is semantics:
 * 1. retry_after (429): hold the whole chat, emit ChatHold, return — not an attempt, last_at untouched;
 * 2. typing: update last_at, nothing else;
 * 3. success: clear backoff, record the delivered state;
 * 4. STREAM_DEAD: kill the stream, emit StreamFailed;
 * 5. MESSAGE_DEAD: kill the slot, emit MessageFailed (the stream ends "partial");
 * 6. anything else: transient — count an attempt, back off, kill the stream at max_attempts.
 * Docket addition between 4 and 5: a failed sendMessageDraft switches the stream to real
 * messages (no attempt, no event). Posts (post.ts) follow the same order: 429 → hold, the post
 * waits and goes again (not an attempt); success → done with the result; dead → failed with the
 * error; transient → backoff, failed at max_attempts.
 */
import { weightOf, type Action, type PostAction, type Result } from "./action.ts";
import type { OutboxEvent } from "./events.ts";
import type { Options } from "./options.ts";
import { outcomeOf, type Outcome } from "./outcome.ts";
import { PostState, type PostRequest } from "./post.ts";
import { isPrivateChat, plan as schedule, slotKey, type Plan } from "./scheduler.ts";
import type { StreamState } from "./stream-state.ts";
import { markCall, type Timings } from "./timings.ts";

/**
 * Backoff after the n-th transient failure (n ≥ 1), ms: base·2^(n-1) capped at max, ±jitter, and the
 * jittered value capped too (issue 11 item 7: ±20 % on the seed's 30 s cap gave up to 36 s), so at the
 * cap the spread only goes down.
 */
export function backoffMs(attempt: number, o: Options, random: () => number): number {
  const raw = Math.min(o.backoffMaxMs, o.backoffBaseMs * 2 ** (attempt - 1));
  return Math.min(o.backoffMaxMs, raw * (1 + o.backoffJitter * (2 * random() - 1)));
}

/** What a post's caller gets: the Bot API result, or the error it failed with. */
export type PostOutcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly reason: string; readonly error: unknown };

/** A settled stream and its snapshot outcome, handed to the worker for finish() waiters. */
export interface Settled {
  readonly streamId: number;
  readonly outcome: Outcome;
  /** Set for a post: its result or error (outcome then only says ok / failed). */
  readonly post?: PostOutcome;
}

/** The pure per-chat state machine. All times are monotonic ms passed in by the caller. */
export class ChatMachine {
  /** Streams by id; insertion order is id order (ids only grow). */
  readonly streams = new Map<number, StreamState>();
  /** Posts by id, in id order, until they settle. */
  readonly posts = new Map<number, PostState>();
  readonly retryAt = new Map<string, number>();
  private readonly attempts = new Map<string, number>();
  private events: OutboxEvent[] = [];
  private served = 0;
  private settled: Settled[] = [];
  /** Monotonic ms since the machine has had no streams; null while it has some. */
  idleSince: number | null;

  constructor(
    readonly chatId: number,
    readonly timings: Timings,
    readonly options: Options,
    private readonly random: () => number = Math.random,
    now = 0,
  ) {
    this.idleSince = now;
  }

  /** Register a new stream (its id must exceed every earlier one). */
  addStream(s: StreamState): void {
    this.streams.set(s.id, s);
    this.idleSince = null;
  }

  /**
   * Queue a post (its id must exceed every earlier stream or post id). `timeoutMs` bounds each call
   * of it (null = Options.callTimeoutMs).
   */
  addPost(id: number, request: PostRequest, timeoutMs: number | null = null): PostState {
    const p = new PostState(id, request, this.served, timeoutMs);
    this.posts.set(id, p);
    this.idleSince = null;
    return p;
  }

  /**
   * The caller gave up on a post (its AbortSignal): a pending post fails at once with `reason`; one
   * at the executor fails when its call returns (the call itself is aborted by the same signal).
   */
  abandon(id: number, reason: unknown): void {
    const p = this.posts.get(id);
    if (!p || p.closed) return;
    p.abandoned = reason ?? new Error("post abandoned");
    if (!p.inFlight) this.failPost(p, "abandoned by its caller", p.abandoned);
  }

  /** The single next step. Pure: reads state and `now`, changes nothing. */
  plan(now: number): Plan {
    const p = schedule({ now, chatId: this.chatId, streams: this.streams.values(), posts: this.posts.values(), timings: this.timings, retryAt: this.retryAt, options: this.options });
    if (p.type === "act") return p;
    return { type: "sleep", until: Math.min(p.until, this.ttlDeadline()) };
  }

  /** Hand an action to the executor: its slot is in flight until apply(). */
  start(action: Action, now?: number): void {
    if (action.type === "post") {
      const p = this.posts.get(action.streamId);
      if (p) p.inFlight = true;
      // An upload runs beside the chat's text calls: the pace counts from its start too (and again from its end).
      if (action.long && now !== undefined) markCall(this.timings, action.kind, now, action.weight);
      return;
    }
    if (action.kind === "action") return;
    const s = this.streams.get(action.streamId);
    if (s) s.servedSeq = ++this.served;
    const m = s?.messages[action.index];
    if (m) m.inFlight = true;
  }

  /** Fold an executor result into the state, in the seed's branch order (see the file header). */
  apply(action: Action, r: Result, now: number): void {
    if (action.type === "post") return this.applyPost(action, r, now);
    const s = this.streams.get(action.streamId);
    const m = action.kind === "action" ? undefined : s?.messages[action.index];
    if (m) m.inFlight = false;
    const key = slotKey(action.streamId, action.kind === "action" ? -1 : action.index);

    // 1. 429: the whole chat waits; not an attempt, last_at untouched.
    if (!r.ok && r.retryAfterMs !== undefined) return this.hold(r.retryAfterMs, now);
    markCall(this.timings, action.kind, now);
    // 2. typing: no success, no failure.
    if (action.kind === "action") return;
    if (!s || !m || s.closed) {
      s?.trimTail();
      return;
    }
    // 3. success.
    if (r.ok) {
      this.retryAt.delete(key);
      this.attempts.delete(key);
      const c = action.chunk;
      switch (action.type) {
        case "send":
          m.messageId = r.messageId ?? null;
          m.sentHash = c!.hash;
          m.sentKey = c!.key;
          m.draftHash = null;
          break;
        case "edit":
          m.sentHash = c!.hash;
          break;
        case "draft":
          m.draftHash = c!.hash;
          break;
        case "drop":
        case "delete":
          m.messageId = null;
          m.sentHash = null;
          m.sentKey = null;
          break;
      }
      s.trimTail();
      return;
    }
    // 4. the whole stream is dead.
    if (r.kind === "stream_dead") {
      this.kill(s, r.reason, r.error);
      return;
    }
    // Drafts refused (e.g. TEXTDRAFT_PEER_INVALID): fall back to real messages.
    if (action.type === "draft") {
      s.drafts = false;
      return;
    }
    // 5. one message is dead.
    if (r.kind === "message_dead") {
      this.retryAt.delete(key);
      this.attempts.delete(key);
      if (action.type === "drop" && m.desired !== null && m.messageId === action.messageId) {
        // A key move whose delete is refused ("message can't be deleted"): sending the new message now
        // would leave two copies. The old one takes the new identity and is edited in place (issue 11
        // item 7); nothing died, so no MessageFailed.
        m.sentKey = m.desired.key;
        return;
      }
      s.partial = true;
      this.events.push({ type: "MessageFailed", chatId: this.chatId, streamId: s.id, index: action.index, messageId: action.messageId ?? m.messageId, reason: r.reason, error: r.error });
      if (action.type === "send" || action.type === "edit") m.deadKey = action.chunk!.key;
      else {
        // A delete that cannot happen: forget the old message and go on (a key move then re-sends).
        m.messageId = null;
        m.sentHash = null;
        m.sentKey = null;
        s.trimTail();
      }
      return;
    }
    // 6. transient: count the attempt, back off, give up at max_attempts.
    const n = (this.attempts.get(key) ?? 0) + 1;
    if (n >= this.options.maxAttempts) {
      this.kill(s, `max attempts (${n}): ${r.reason}`, r.error);
      return;
    }
    this.attempts.set(key, n);
    this.retryAt.set(key, now + backoffMs(n, this.options, this.random));
  }

  /**
   * Put the whole chat on hold for `retryAfterMs` from `now` (a 429, seen by this machine or by a call
   * outside it) and emit ChatHold. A hold never shortens an earlier one.
   */
  hold(retryAfterMs: number, now: number): void {
    const until = now + retryAfterMs;
    const fresh = this.timings.holdUntil <= now;
    this.timings.holdUntil = Math.max(this.timings.holdUntil, until);
    this.events.push({ type: "ChatHold", chatId: this.chatId, retryAfterMs, untilMs: until, fresh });
  }

  /** apply() for a post, in the seed's branch order. */
  private applyPost(action: PostAction, r: Result, now: number): void {
    const p = this.posts.get(action.streamId);
    if (p) p.inFlight = false;
    const key = slotKey(action.streamId, -1);
    if (!r.ok && r.retryAfterMs !== undefined && !p?.abandoned) {
      this.hold(r.retryAfterMs, now);
      return;
    }
    markCall(this.timings, action.kind, now, weightOf(action));
    if (!p || p.closed) return;
    if (p.abandoned) return this.failPost(p, "abandoned by its caller", p.abandoned);
    if (r.ok) {
      this.retryAt.delete(key);
      this.attempts.delete(key);
      p.status = "done";
      p.value = r.value;
      return;
    }
    if (r.kind !== "transient") return this.failPost(p, r.reason, r.error);
    const n = (this.attempts.get(key) ?? 0) + 1;
    if (n >= this.options.maxAttempts) return this.failPost(p, `max attempts (${n}): ${r.reason}`, r.error);
    this.attempts.set(key, n);
    this.retryAt.set(key, now + backoffMs(n, this.options, this.random));
  }

  private failPost(p: PostState, reason: string, error: unknown): void {
    p.status = "failed";
    p.failure = { reason, error };
    this.retryAt.delete(slotKey(p.id, -1));
    this.attempts.delete(slotKey(p.id, -1));
  }

  /** Kill one stream: it stops sending and settles as failed. */
  kill(s: StreamState, reason: string, error?: unknown): void {
    if (s.closed) return;
    s.status = "failed";
    s.failure = { reason, error };
    for (const m of s.messages) m.inFlight = false;
    this.events.push({ type: "StreamFailed", chatId: this.chatId, streamId: s.id, reason, error });
  }

  /** Kill every live stream and fail every post (seed: kill_all on worker crash / cancel). */
  killAll(reason: string, error?: unknown): void {
    for (const s of this.streams.values()) this.kill(s, reason, error);
    for (const p of this.posts.values()) {
      if (p.closed) continue;
      p.inFlight = false;
      this.failPost(p, reason, error ?? new Error(`outbox: ${reason}`));
    }
  }

  /**
   * Housekeeping at `now`: settle finished streams (snapshot their outcome), sweep those settled
   * more than streamTtlMs ago, track idleness. Call before plan().
   */
  tick(now: number): void {
    for (const s of this.streams.values()) {
      if (s.settledAt === null && (s.status === "failed" || (s.isFinal && !s.inFlight && s.pending(isPrivateChat(this.chatId)) === null))) {
        if (s.status === "live") s.status = "done";
        s.settledAt = now;
        this.settled.push({ streamId: s.id, outcome: outcomeOf(s) });
      }
      if (s.settledAt !== null && now - s.settledAt >= this.options.streamTtlMs) this.removeStream(s);
    }
    for (const p of this.posts.values()) {
      if (!p.closed || p.inFlight) continue;
      // A post's caller holds the result itself (its promise): nothing to keep for a TTL.
      const post: PostOutcome = p.status === "done" ? { ok: true, value: p.value } : { ok: false, reason: p.failure?.reason ?? "failed", error: p.failure?.error };
      this.settled.push({ streamId: p.id, outcome: Object.freeze({ status: p.status === "done" ? "ok" : "failed", messageIds: [] }), post });
      this.posts.delete(p.id);
    }
    if (this.streams.size === 0 && this.posts.size === 0 && this.idleSince === null) this.idleSince = now;
  }

  /** The stream, while it is still remembered. */
  stream(id: number): StreamState | undefined {
    return this.streams.get(id);
  }

  /** True when the machine has had no streams for machineTtlMs (seed: is_evictable). */
  isEvictable(now: number): boolean {
    return this.idleSince !== null && now - this.idleSince >= this.options.machineTtlMs;
  }

  /** Events since the last call (for the sink). */
  drainEvents(): OutboxEvent[] {
    const e = this.events;
    this.events = [];
    return e;
  }

  /** Streams settled since the last call (for finish() waiters). */
  takeSettled(): Settled[] {
    const s = this.settled;
    this.settled = [];
    return s;
  }

  /** Nearest TTL expiry (stream sweep or machine eviction), so an idle worker still wakes for it. */
  private ttlDeadline(): number {
    let d = this.idleSince !== null ? this.idleSince + this.options.machineTtlMs : Infinity;
    for (const s of this.streams.values()) if (s.settledAt !== null) d = Math.min(d, s.settledAt + this.options.streamTtlMs);
    return d;
  }

  private removeStream(s: StreamState): void {
    this.streams.delete(s.id);
    for (const k of [...this.retryAt.keys()]) if (k.startsWith(`${s.id}:`)) this.retryAt.delete(k);
    for (const k of [...this.attempts.keys()]) if (k.startsWith(`${s.id}:`)) this.attempts.delete(k);
  }
}
