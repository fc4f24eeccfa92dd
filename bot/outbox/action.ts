/**
 * Actions (what the machine asks the executor to do) and Results (what came back).
 *
 * Source: seed 002 "TelegramExecutor": one action → exactly one API call → one Result; the
 * Result carries the error object itself, not only its text.
 */
import type { Chunk } from "./chunk.ts";
import type { Intent, Kind } from "./message.ts";
import type { PostRequest } from "./post.ts";

/** One API call for one message slot of one stream. */
export interface MessageAction {
  readonly kind: Exclude<Kind, "action">;
  /** send → sendMessage, edit → editMessageText, drop/delete → deleteMessage, draft → sendMessageDraft. */
  readonly type: Intent["type"];
  readonly streamId: number;
  readonly index: number;
  /** Content snapshot taken at plan time (send/edit/draft); null for deletes. */
  readonly chunk: Chunk | null;
  /** Target message (edit/drop/delete). */
  readonly messageId: number | null;
  /** Non-zero draft id for sendMessageDraft (Bot API §6); null otherwise. */
  readonly draftId: number | null;
  readonly threadId: number | undefined;
}

/** sendChatAction("typing"), run in the context of the stream that keeps typing alive. */
export interface TypingAction {
  readonly kind: "action";
  readonly type: "typing";
  readonly streamId: number;
  readonly threadId: number | undefined;
}

/** One call of a post (an upload, an album, a keyboard edit): the request as its caller gave it. */
export interface PostAction {
  readonly kind: "send" | "edit";
  readonly type: "post";
  /** The post's id (same sequence as stream ids). */
  readonly streamId: number;
  readonly request: PostRequest;
  /** Messages it puts into the chat (an album of n documents: n). */
  readonly weight: number;
  /** Uploads file bytes: the worker runs it beside the chat's text calls (see post.ts isLongPost). */
  readonly long: boolean;
  /** Bound of this call, ms; null = Options.callTimeoutMs. */
  readonly timeoutMs: number | null;
  readonly threadId: number | undefined;
}

/** Anything the machine can plan. */
export type Action = MessageAction | TypingAction | PostAction;

/** How a failure is treated (seed: classify → TRANSIENT / MESSAGE_DEAD / STREAM_DEAD). */
export type FailureKind = "transient" | "message_dead" | "stream_dead";

/** The executor's answer. `retryAfterMs` is set only for 429 (then kind is "transient"). */
export type Result =
  | {
      readonly ok: true;
      readonly messageId?: number | undefined;
      /** The Bot API result of a post (a Message, Message[] or true). */
      readonly value?: unknown;
    }
  | {
      readonly ok: false;
      readonly kind: FailureKind;
      /** Short operator-facing cause, e.g. the Bot API description. Never contains the token. */
      readonly reason: string;
      /** The original error object (GrammyError, HttpError, …) for logs and traces. */
      readonly error: unknown;
      readonly retryAfterMs?: number | undefined;
    };

/** True for an action on a message slot of a stream (not typing, not a post). */
export function isMessageAction(a: Action): a is MessageAction {
  return a.kind !== "action" && a.type !== "post";
}

/** Messages an action puts into the chat: a post's weight (an album of n: n), else 1. */
export function weightOf(a: Action): number {
  return a.type === "post" ? a.weight : 1;
}

/** Kinds that spend the per-chat shared send/edit budget (Options.messageIntervalMs; tdlib/td#2592). */
export function spendsMessageBudget(kind: Kind): boolean {
  return kind === "send" || kind === "edit";
}

/** Kinds that take a slot from the bot-wide limiter (sends, edits, and drafts, whose limits are UNCONFIRMED). */
export function spendsBotBudget(kind: Kind): boolean {
  return kind === "send" || kind === "edit" || kind === "draft";
}
