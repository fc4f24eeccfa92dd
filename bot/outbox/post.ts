/**
 * Posts: one-shot chat-bound calls that are not text streams — result uploads (sendDocument), albums
 * of documents (sendMediaGroup) and keyboard edits (editMessageReplyMarkup). They go through the
 * same chat machine as the streams, so one per-chat pacing, one 429 hold and the bot-wide limit
 * cover every call a chat gets (issue 11 item 1; contract 7: chat-bound calls go through the outbox).
 *
 * Source: seed 002 "TelegramExecutor": one action → exactly one API call → one Result; the same
 * apply() branch order as messages (429 → chat hold, not an attempt; transient → backoff up to
 * max_attempts). A post is settled once: its caller gets the Bot API result or the error.
 */
import type { Api } from "grammy";
import type { InputMediaDocument } from "grammy/types";
import type { Kind } from "./message.ts";

/** grammY's optional parameters of a method (the `other` argument). */
type OtherOf<M extends "sendDocument" | "sendMediaGroup" | "editMessageReplyMarkup"> = NonNullable<Parameters<Api[M]>[2]>;

/** A document as sendDocument takes it: an InputFile to upload, or a file_id string. */
export type DocumentInput = Parameters<Api["sendDocument"]>[1];

/** What a post asks for. Field names follow the Bot API; `other` is grammY's optional-parameters object. */
export type PostRequest =
  | { readonly method: "sendDocument"; readonly document: DocumentInput; readonly other?: OtherOf<"sendDocument"> }
  | { readonly method: "sendMediaGroup"; readonly media: readonly InputMediaDocument[]; readonly other?: OtherOf<"sendMediaGroup"> }
  | { readonly method: "editMessageReplyMarkup"; readonly messageId: number; readonly other?: OtherOf<"editMessageReplyMarkup"> };

/** The Bot API result of each post method (what {@link PostRequest} resolves with). */
export type PostResult<R extends PostRequest> = Awaited<ReturnType<Api[R["method"]]>>;

/** Lifecycle of a post: pending (waiting for its turn) → done | failed. */
export type PostStatus = "pending" | "done" | "failed";

/** True for a value that is uploaded with the request (not a file_id or URL string). */
function isUpload(media: unknown): boolean {
  return typeof media !== "string";
}

/**
 * How many messages a post puts into the chat: an album of n documents is n messages (the
 * emulator, like Telegram's "messages per second" limits, counts each one; UNCONFIRMED whether
 * Telegram counts an album as one). The per-chat pace and the bot-wide limiter are spent n times.
 */
export function postWeight(r: PostRequest): number {
  return r.method === "sendMediaGroup" ? Math.max(1, r.media.length) : 1;
}

/** The rate kind of a post: uploads and albums are sends, a keyboard edit is an edit. */
export function postKind(r: PostRequest): Extract<Kind, "send" | "edit"> {
  return r.method === "editMessageReplyMarkup" ? "edit" : "send";
}

/**
 * True when the request uploads file bytes: such a call may take minutes (a 2000 MB result in
 * local mode), so the worker runs it beside the chat's text calls instead of before them.
 */
export function isLongPost(r: PostRequest): boolean {
  if (r.method === "sendDocument") return isUpload(r.document);
  if (r.method === "sendMediaGroup") return r.media.some((m) => isUpload(m.media));
  return false;
}

/** The forum topic of a post (Bot API message_thread_id), if any. */
export function postThread(r: PostRequest): number | undefined {
  const other = r.other as { message_thread_id?: number } | undefined;
  return other?.message_thread_id;
}

/** State of one post inside a chat machine. Mutated only by the machine. */
export class PostState {
  status: PostStatus = "pending";
  /** Set while the call is at the executor. */
  inFlight = false;
  /** The Bot API result once done. */
  value: unknown = undefined;
  /** Why it failed, with the error the caller gets. */
  failure: { reason: string; error?: unknown } | null = null;
  /** The caller's abort reason once it gave up (AbortSignal); the post then fails instead of going again. */
  abandoned: unknown = null;
  readonly kind: Extract<Kind, "send" | "edit">;
  readonly weight: number;
  readonly long: boolean;

  constructor(
    /** Process-wide id, drawn from the same sequence as stream ids (chat order = id order). */
    readonly id: number,
    readonly request: PostRequest,
    /** Machine sequence at creation: the fairness tie-break against streams (least recently served first). */
    readonly servedSeq: number,
    /** Bound of one call of this post, ms (null = the outbox's callTimeoutMs). */
    readonly timeoutMs: number | null,
  ) {
    this.kind = postKind(request);
    this.weight = postWeight(request);
    this.long = isLongPost(request);
  }

  /** True once done or failed. */
  get closed(): boolean {
    return this.status !== "pending";
  }
}
