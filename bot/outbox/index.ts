/**
 * bot/outbox — rate-limited, diff-driven chat delivery for grammY (seed 002 rebuilt).
 *
 * Usage:
 *   const outbox = new Outbox({ events: (e) => metrics.count(e.type) });
 *   const status = outbox.stream(bot.api, chatId, { typing: false, replyTo: msgId });
 *   status.update([{ text: "Downloading… 40%" }]);   // as often as you like
 *   const ids = await status.finish();                 // delivered message ids
 *   await outbox.send(bot.api, chatId, "Done");        // one-shot through the same chat machine
 *   await outbox.close();                              // graceful shutdown
 */
export { Outbox, type OutboxInit, type PostOptions, type StreamOptions } from "./runtime.ts";
export type { DocumentInput, PostRequest, PostResult } from "./post.ts";
export { MemoryLedger, type RateLedger } from "./ledger.ts";
export { chatHoldsTransformer } from "./holds.ts";
export { LiveStream, type TextExtras } from "./live-stream.ts";
export { makeOptions, DEFAULT_OPTIONS, type Options } from "./options.ts";
export { toChunk, type Chunk, type ChunkInput } from "./chunk.ts";
export { splitText, MESSAGE_LIMIT, type TextPart } from "./split.ts";
export { StreamFailedError, type Outcome, type OutcomeStatus } from "./outcome.ts";
export type { OutboxEvent, MessageFailed, StreamFailed, ChatHold, EventSink, OutboxLogger } from "./events.ts";
export { classify, isNotModified } from "./classify.ts";
export { grammyExecutor, type Executor } from "./executor.ts";
export type { Action, Result, FailureKind } from "./action.ts";
export { ChatMachine } from "./machine.ts";
export { RateLimiter, type BotLimiter } from "./limiter.ts";
export type { Clock } from "./clock.ts";
export { outboxMiddleware, ScopedOutbox, type OutboxFlavor } from "./middleware.ts";
