/**
 * grammY middleware that puts a chat-bound outbox into every handler: `ctx.outbox.stream()`.
 *
 * Source: seed 002 "SenderMiddleware кладёт в хендлер ScopedSender, уже привязанный к боту, чату
 * и топику". The stream is opened inside the handler, so its calls run in the update's async
 * context; the chat's worker still belongs to no update.
 */
import type { Api, Context, MiddlewareFn } from "grammy";
import type { ChunkInput } from "./chunk.ts";
import type { LiveStream } from "./live-stream.ts";
import type { Outbox, StreamOptions } from "./runtime.ts";

/** An Outbox bound to one bot (Api), chat and forum topic. */
export class ScopedOutbox {
  constructor(
    private readonly outbox: Outbox,
    readonly api: Api,
    readonly chatId: number | undefined,
    readonly threadId: number | undefined,
  ) {}

  private chat(): number {
    if (this.chatId === undefined) throw new Error("outbox: this update has no chat");
    return this.chatId;
  }

  /** Open a stream in this chat/topic (see Outbox.stream). @throws Error when the update has no chat. */
  stream(opts: Omit<StreamOptions, "threadId"> = {}): LiveStream {
    return this.outbox.stream(this.api, this.chat(), { ...opts, threadId: this.threadId });
  }

  /** One-shot message(s) in this chat/topic (see Outbox.send). @throws Error when the update has no chat. */
  send(content: string | ChunkInput | readonly (string | ChunkInput)[], opts: { replyTo?: number } = {}): Promise<number[]> {
    return this.outbox.send(this.api, this.chat(), content, { ...opts, threadId: this.threadId });
  }
}

/** Context flavor added by {@link outboxMiddleware}. */
export interface OutboxFlavor {
  outbox: ScopedOutbox;
}

/** Middleware: `ctx.outbox` bound to ctx.api, ctx.chat.id and the topic of a topic message. */
export function outboxMiddleware<C extends Context>(outbox: Outbox): MiddlewareFn<C & OutboxFlavor> {
  return (ctx, next) => {
    const msg = ctx.msg;
    const threadId = msg?.is_topic_message ? msg.message_thread_id : undefined;
    ctx.outbox = new ScopedOutbox(outbox, ctx.api, ctx.chat?.id, threadId);
    return next();
  };
}
