/**
 * The scheduler: who goes next in one chat. A pure function of state and `now`.
 *
 * Source: seed 002 "scheduler.plan — кто ходит следующим": a chat hold stops everything;
 * ready = max(last_at[kind] + interval[kind], retry_at[(stream, index)]); the winner is the
 * minimum of (ready, 0 if finalized else 1, stream_id); typing only while a non-final typing
 * stream exists; exactly one action per plan.
 * Fairness (docket addition): between the finalized rank and the stream id sits "least recently
 * served first". With send and edit sharing one budget, all streams of a chat share one ready
 * time, and the seed's bare stream-id tie-break let a busy first stream starve every later one.
 * Docket additions: the shared send/edit budget and the group pace (Options.messageIntervalMs,
 * groupMessageIntervalMs), drafts in private chats, and posts (uploads, albums, keyboard edits) in
 * the same queue. Posts rank before every stream ("results first": a result is what the user is
 * waiting for, a reply or a progress edit can wait a second), and go one at a time in id order, so
 * a chat gets its documents in the order they were posted.
 */
import type { Action } from "./action.ts";
import { kindOf, type Kind } from "./message.ts";
import type { Options } from "./options.ts";
import { postThread, type PostState } from "./post.ts";
import type { StreamState } from "./stream-state.ts";
import type { Timings } from "./timings.ts";

/** One decision: do this now, or sleep until `until` (monotonic ms; Infinity = until woken). */
export type Plan = { readonly type: "act"; readonly action: Action } | { readonly type: "sleep"; readonly until: number };

/** Everything the scheduler reads. Streams must be in ascending id order. */
export interface SchedulerView {
  readonly now: number;
  readonly chatId: number;
  readonly streams: Iterable<StreamState>;
  /** Posts in ascending id order (settled ones may still be listed; they are skipped). */
  readonly posts: Iterable<PostState>;
  readonly timings: Timings;
  /** Per-slot backoff: key `${streamId}:${index}` → monotonic ms. */
  readonly retryAt: ReadonlyMap<string, number>;
  readonly options: Options;
}

/** Key of a slot in retry/attempt maps (a post is its own slot -1). */
export function slotKey(streamId: number, index: number): string {
  return `${streamId}:${index}`;
}

/** Ranks of the winner tuple: posts, then finalized streams, then streams still being written, then typing. */
const RANK_POST = 0;
const RANK_FINAL = 1;
const RANK_LIVE = 2;
const RANK_TYPING = 3;

/** Private chats have positive ids; groups, supergroups and channels negative (Bot API chat ids). */
export function isPrivateChat(chatId: number): boolean {
  return chatId > 0;
}

/**
 * Non-zero draft id for a stream slot: streamId·256 + index + 1 (index taken mod 256), kept within
 * 1…2^31−1 (Bot API sendMessageDraft: draft_id must be non-zero). Slots 0…255 of a stream get 256
 * distinct ids, disjoint from every other stream's (until 2^31/256 streams wrap around).
 */
export function draftIdOf(streamId: number, index: number): number {
  return ((streamId * 256 + (index % 256)) % 0x7fff_ff00) + 1;
}

/** Earliest monotonic ms at which a call of `kind` is allowed in this chat by the per-chat limits. */
export function kindReadyAt(kind: Kind, t: Timings, o: Options, chatId: number): number {
  switch (kind) {
    case "send":
    case "edit": {
      const own = kind === "send" ? t.send + o.sendIntervalMs : t.edit + o.editIntervalMs;
      const pace = isPrivateChat(chatId) ? o.messageIntervalMs : Math.max(o.messageIntervalMs, o.groupMessageIntervalMs);
      return Math.max(own, t.message + pace * t.messageWeight);
    }
    case "draft": // drafts are ephemeral previews with their own (UNCONFIRMED) limits, not messages
      return t.draft + o.draftIntervalMs;
    case "delete":
      return t.delete + o.deleteIntervalMs;
    case "action":
      return t.action + o.actionIntervalMs;
  }
}

/** Lexicographic (ready, rank, served, id) < best. */
function before(ready: number, rank: number, served: number, id: number, b: { ready: number; rank: number; served: number; id: number }): boolean {
  if (ready !== b.ready) return ready < b.ready;
  if (rank !== b.rank) return rank < b.rank;
  if (served !== b.served) return served < b.served;
  return id < b.id;
}

/**
 * Decide the single next step. Pure: no clock, no I/O, no mutation.
 * Candidates compare by (ready, rank, servedSeq, id) with rank post 0, finalized stream 1, live stream 2;
 * typing ranks after messages at equal readiness. Only the oldest unsettled post is a candidate, and
 * none while it is at the executor.
 */
export function plan(v: SchedulerView): Plan {
  const { now, timings: t, options: o, chatId } = v;
  if (now < t.holdUntil) return { type: "sleep", until: t.holdUntil };
  const priv = isPrivateChat(chatId);
  let best: { ready: number; rank: number; served: number; id: number; action: Action } | null = null;
  let typingOwner: StreamState | null = null;
  for (const s of v.streams) {
    if (s.closed) continue;
    if (typingOwner === null && o.typingEnabled && s.config.typing && !s.isFinal) typingOwner = s;
    const step = s.pending(priv);
    if (!step) continue;
    const kind = kindOf(step.intent);
    const ready = Math.max(kindReadyAt(kind, t, o, chatId), v.retryAt.get(slotKey(s.id, step.index)) ?? -Infinity);
    const rank = s.isFinal ? RANK_FINAL : RANK_LIVE;
    if (best && !before(ready, rank, s.servedSeq, s.id, best)) continue;
    const m = s.messages[step.index]!;
    const intent = step.intent;
    const action: Action = {
      kind: kind as Exclude<Kind, "action">,
      type: intent.type,
      streamId: s.id,
      index: step.index,
      chunk: intent.type === "delete" || intent.type === "drop" ? null : m.desired,
      messageId: intent.type === "send" || intent.type === "draft" ? null : intent.messageId,
      draftId: intent.type === "draft" ? draftIdOf(s.id, step.index) : null,
      threadId: s.config.threadId,
    };
    best = { ready, rank, served: s.servedSeq, id: s.id, action };
  }
  for (const p of v.posts) {
    if (p.closed) continue;
    if (p.inFlight) break; // posts go one at a time, in order
    const ready = Math.max(kindReadyAt(p.kind, t, o, chatId), v.retryAt.get(slotKey(p.id, -1)) ?? -Infinity);
    if (!best || before(ready, RANK_POST, p.servedSeq, p.id, best)) {
      const action: Action = { kind: p.kind, type: "post", streamId: p.id, request: p.request, weight: p.weight, long: p.long, timeoutMs: p.timeoutMs, threadId: postThread(p.request) };
      best = { ready, rank: RANK_POST, served: p.servedSeq, id: p.id, action };
    }
    break;
  }
  if (typingOwner) {
    const ready = kindReadyAt("action", t, o, chatId);
    if (!best || ready < best.ready) {
      best = { ready, rank: RANK_TYPING, served: 0, id: typingOwner.id, action: { kind: "action", type: "typing", streamId: typingOwner.id, threadId: typingOwner.config.threadId } };
    }
  }
  if (!best) return { type: "sleep", until: Infinity };
  if (best.ready <= now) return { type: "act", action: best.action };
  return { type: "sleep", until: best.ready };
}
