/**
 * StreamState: the diff engine of one stream — a list of message slots plus final/state flags.
 *
 * Source: seed 002 "SenderStream и SenderMessage — diff-движок": update() aligns lists by index,
 * tails never sent are thrown away, tails already in the chat wait for their delete, a slot in
 * flight is never dropped; pending() gives sends/edits left to right, then deletes from the end.
 */
import type { Chunk } from "./chunk.ts";
import { OutMessage, type Intent } from "./message.ts";

/** Per-stream settings fixed at open. */
export interface StreamConfig {
  /** Takes part in "typing…" while not final (seed: stream(typing=...)). */
  readonly typing: boolean;
  /** May use sendMessageDraft in private chats (docket addition, botapi-facts §6). */
  readonly drafts: boolean;
  /** Forum topic (Bot API message_thread_id), if any. */
  readonly threadId?: number | undefined;
}

/** Lifecycle: live (writing or finishing) → done (settled) | failed (killed). */
export type StreamStatus = "live" | "done" | "failed";

/** A pending step of a stream: which slot and what to do. */
export interface PendingStep {
  readonly index: number;
  readonly intent: Intent;
}

/** State of one stream inside a chat machine. Mutated only by the machine and by update()/finalize(). */
export class StreamState {
  readonly messages: OutMessage[] = [];
  isFinal = false;
  status: StreamStatus = "live";
  /** Set when any slot died (MESSAGE_DEAD): the outcome becomes "partial". */
  partial = false;
  /** Why the stream was killed (STREAM_DEAD, max attempts, worker crash). */
  failure: { reason: string; error?: unknown } | null = null;
  /** Drafts may be switched off at runtime when the chat refuses them. */
  drafts: boolean;
  /** Machine-local sequence number of this stream's last action (0 = never served); fairness tie-break. */
  servedSeq = 0;
  /** Monotonic ms when the stream settled; swept streamTtlMs later. */
  settledAt: number | null = null;

  constructor(
    /** Process-wide stream id; the scheduler's tie-break (seed: stream_id). */
    readonly id: number,
    readonly config: StreamConfig,
  ) {
    this.drafts = config.drafts;
  }

  /**
   * Take over messages already in the chat (e.g. a job's status message after a restart), in slot
   * order. They count as delivered with unknown content: nothing is sent until update() asks for
   * different content, which then edits them in place (or deletes them when the list is shorter).
   */
  adopt(messageIds: readonly number[], placeholder: Chunk): void {
    for (const id of messageIds) {
      const m = new OutMessage(placeholder);
      m.messageId = id;
      m.sentHash = placeholder.hash;
      m.sentKey = placeholder.key;
      this.messages.push(m);
    }
  }

  /** True once the stream is killed or finished and fully delivered. */
  get closed(): boolean {
    return this.status !== "live";
  }

  /**
   * Set the desired chunk list (seed: SenderStream.update). O(n) in the number of chunks; no I/O.
   * Ignored once the stream is closed.
   */
  update(chunks: readonly Chunk[]): void {
    if (this.closed) return;
    const msgs = this.messages;
    for (let i = 0; i < chunks.length; i++) {
      const c = chunks[i]!;
      const m = msgs[i];
      if (m) m.desired = c;
      else msgs.push(new OutMessage(c));
    }
    for (let i = chunks.length; i < msgs.length; i++) msgs[i]!.desired = null;
    this.trimTail();
  }

  /** Drop trailing slots that have nothing left in the chat and nothing in flight. */
  trimTail(): void {
    const msgs = this.messages;
    for (let last = msgs.at(-1); last; last = msgs.at(-1)) {
      if (last.desired !== null || last.inFlight || last.messageId !== null) break;
      msgs.pop();
    }
  }

  /** Mark the stream final: no more updates; drafts give way to real messages. */
  finalize(): void {
    this.isFinal = true;
  }

  /**
   * The first pending step: sends/edits/drops/drafts left to right, then deletes from the end.
   * Slots in flight are skipped. Pure.
   * @param privateChat drafts are allowed only in private chats (Bot API: sendMessageDraft).
   */
  pending(privateChat: boolean): PendingStep | null {
    if (this.closed) return null;
    const msgs = this.messages;
    const canDraft = this.drafts && privateChat && !this.isFinal;
    let lastDesired = -1;
    for (let i = msgs.length - 1; i >= 0; i--) {
      if (msgs[i]!.desired !== null) {
        lastDesired = i;
        break;
      }
    }
    for (let i = 0; i <= lastDesired; i++) {
      const m = msgs[i]!;
      if (m.inFlight || m.desired === null) continue;
      const draftable = canDraft && i === lastDesired && m.desired.reply_markup === undefined;
      const intent = m.intent(draftable);
      if (intent) return { index: i, intent };
      // Keep chat order: a later slot is never sent before an earlier one that has no message yet.
      if (m.messageId === null && !m.dead && !draftable) return null;
    }
    for (let i = msgs.length - 1; i > lastDesired; i--) {
      const m = msgs[i]!;
      if (m.inFlight) continue;
      const intent = m.intent(false);
      if (intent) return { index: i, intent };
    }
    return null;
  }

  /** True while any slot is at the executor. */
  get inFlight(): boolean {
    return this.messages.some((m) => m.inFlight);
  }

  /** message_ids the chat shows for this stream, in slot order (dead and deleted slots excluded). */
  deliveredIds(): number[] {
    const ids: number[] = [];
    for (const m of this.messages) if (m.messageId !== null && m.desired !== null && !m.dead) ids.push(m.messageId);
    return ids;
  }
}
