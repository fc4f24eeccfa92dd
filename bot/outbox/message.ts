/**
 * OutMessage: one slot of a stream — what the chat should show vs what it shows — and the
 * single next step that closes the gap.
 *
 * Source: seed 002 "SenderMessage.intent()": key is asked before the hash (a new identity
 * means there is nothing to edit); the same hash means nothing to do.
 */
import type { Chunk } from "./chunk.ts";

/** The kind of an API call; each kind has its own per-chat interval (seed: send/edit/delete/action). */
export type Kind = "send" | "edit" | "delete" | "action" | "draft";

/** The next step for one message. `drop` is the delete half of a key move (seed: DropIntent). */
export type Intent =
  | { readonly type: "send" }
  | { readonly type: "edit"; readonly messageId: number }
  | { readonly type: "drop"; readonly messageId: number }
  | { readonly type: "delete"; readonly messageId: number }
  | { readonly type: "draft" };

/** Map an intent to its rate-limit kind (drop and delete are both deleteMessage). */
export function kindOf(intent: Intent): Kind {
  return intent.type === "drop" ? "delete" : intent.type;
}

/** Mutable state of one message slot. Owned by its StreamState; mutated only by the machine. */
export class OutMessage {
  /** Desired content; null once the slot fell off the end of the chunk list (to be deleted). */
  desired: Chunk | null;
  /** Telegram message_id once sent; null before the send succeeds or after a drop. */
  messageId: number | null = null;
  /** Hash of the content Telegram shows (after the last successful send/edit). */
  sentHash: string | null = null;
  /** Key the delivered message was sent with. */
  sentKey: string | null = null;
  /** Hash last shown as a draft (sendMessageDraft), so an unchanged draft is not re-sent. */
  draftHash: string | null = null;
  /** Set while an action for this slot is at the executor (seed: in_flight). Such a slot is never dropped. */
  inFlight = false;
  /** Key the slot died with (MESSAGE_DEAD); a new key revives it as a fresh send. */
  deadKey: string | null = null;

  constructor(desired: Chunk) {
    this.desired = desired;
  }

  /** True when the slot is dead for its current key. */
  get dead(): boolean {
    return this.deadKey !== null && this.desired !== null && this.desired.key === this.deadKey;
  }

  /**
   * The next step, or null when the chat already matches. Pure: reads state, changes nothing.
   * @param draftable this slot may be shown as a sendMessageDraft instead of a real send
   *   (private chat, drafts on, last slot of a stream still being written, no keyboard).
   */
  intent(draftable: boolean): Intent | null {
    const d = this.desired;
    if (d === null) return this.messageId !== null ? { type: "delete", messageId: this.messageId } : null;
    if (this.deadKey !== null && d.key === this.deadKey) return null; // a new key revives the slot
    if (this.messageId !== null && this.sentKey !== d.key) return { type: "drop", messageId: this.messageId };
    if (this.messageId === null) {
      if (draftable) return this.draftHash === d.hash ? null : { type: "draft" };
      return { type: "send" };
    }
    if (this.sentHash !== d.hash) return { type: "edit", messageId: this.messageId };
    return null;
  }
}
