/**
 * Outbox: the runtime. One per application; owns one worker per (bot, chat) and the rate ledger
 * (chat timings that outlive eviction, bot-wide limiters), and hands out streams and posts.
 *
 * Source: seed 002 "SenderRuntime — фабрика и владелец фоновых задач": a chat's streams share
 * one machine (and so one rate budget) even when opened from different handlers; a stopping
 * worker is replaced by a new one; the timings cache outlives eviction; close() finishes every
 * stream, waits up to shutdownTimeoutMs, then cancels the rest.
 * Context: each stream snapshots its opener's AsyncLocalStorage context and every API call of
 * that stream runs inside it; workers start from the context captured when this module loaded.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Api } from "grammy";
import { toChunk, type ChunkInput } from "./chunk.ts";
import { realClock, type Clock } from "./clock.ts";
import { consoleLogger, type EventSink, type OutboxLogger } from "./events.ts";
import { grammyExecutor, type Executor } from "./executor.ts";
import { MemoryLedger, type RateLedger } from "./ledger.ts";
import { LiveStream } from "./live-stream.ts";
import { ChatMachine } from "./machine.ts";
import { makeOptions, type Options } from "./options.ts";
import type { PostRequest, PostResult } from "./post.ts";
import { isPrivateChat } from "./scheduler.ts";
import { StreamState } from "./stream-state.ts";
import { ChatWorker, type ContextRunner } from "./worker.ts";

/** Stand-in content of adopted messages: unknown, so any real update differs from it. */
const ADOPTED = toChunk({ text: "\u0000outbox:adopted" });

/** The context of module load: belongs to no update. Workers run in it. */
const ROOT: ContextRunner = AsyncLocalStorage.snapshot();

/** Everything an Outbox can be built with; all optional. */
export interface OutboxInit {
  /** Overrides of the defaults (see Options; times in ms). */
  readonly options?: Partial<Options>;
  /** Synchronous event sink (MessageFailed, StreamFailed, ChatHold). */
  readonly events?: EventSink;
  /** pino-compatible logger; defaults to JSON lines on stderr. */
  readonly logger?: OutboxLogger;
  /** For tests: the executor (default: grammY). */
  readonly executor?: Executor;
  /** For tests: the clock (default: performance.now + setTimeout). */
  readonly clock?: Clock;
  /** For tests: randomness for backoff jitter (default Math.random). */
  readonly random?: () => number;
  /**
   * Where the shared rate state lives (default: in memory, {@link MemoryLedger}). A ledger shared by
   * several processes of one bot keeps their per-chat pacing, holds and bot-wide cap together.
   */
  readonly ledger?: RateLedger;
}

/** Per-post settings. */
export interface PostOptions {
  /** The caller gives up: a post still waiting is dropped, one in flight is aborted; the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /** Bound of each call of this post, ms (an upload's time depends on its size); default Options.callTimeoutMs. */
  readonly timeoutMs?: number;
}

/** Per-stream settings. */
export interface StreamOptions {
  /** Show "typing…" while this stream is being written (default true; false for long-lived status messages). */
  readonly typing?: boolean;
  /** Use sendMessageDraft while writing in a private chat (default Options.draftsEnabled). */
  readonly drafts?: boolean;
  /** Forum topic: Bot API message_thread_id. */
  readonly threadId?: number;
  /** Reply to this message_id with the first chunk, unless the chunk names its own reply_to. */
  readonly replyTo?: number;
  /**
   * message_ids already in the chat that this stream owns, in slot order (e.g. a job's status
   * message stored before a restart): later updates edit them instead of sending new ones.
   */
  readonly adopt?: readonly number[];
}

/** The bot id is the token's public prefix; the secret part never leaves this function. */
function botIdOf(api: Api): string {
  return api.token.split(":", 1)[0] ?? "";
}

/** The outbox runtime. */
export class Outbox {
  readonly options: Options;
  private readonly workers = new Map<string, ChatWorker>();
  private readonly ledger: RateLedger;
  private readonly log: OutboxLogger;
  private readonly clock: Clock;
  private readonly executor: Executor;
  private nextStreamId = 1;
  private closing: Promise<void> | null = null;

  constructor(private readonly init: OutboxInit = {}) {
    this.options = makeOptions(init.options);
    this.ledger = init.ledger ?? new MemoryLedger(this.options.timingsCapacity, this.options.globalPerSecond);
    this.log = init.logger ?? consoleLogger;
    this.clock = init.clock ?? realClock;
    this.executor = init.executor ?? grammyExecutor;
  }

  /**
   * Open a live stream in `chatId` through `api` (a bot's grammY Api, e.g. ctx.api or bot.api).
   * Captures the caller's async context for every API call of this stream.
   * @throws Error after close().
   */
  stream(api: Api, chatId: number, opts: StreamOptions = {}): LiveStream {
    if (this.closing) throw new Error("outbox is closed");
    const worker = this.workerFor(api, chatId);
    const state = new StreamState(this.nextStreamId++, {
      typing: opts.typing ?? true,
      drafts: opts.drafts ?? this.options.draftsEnabled,
      threadId: opts.threadId,
    });
    if (opts.adopt?.length) state.adopt(opts.adopt, ADOPTED);
    const live = new LiveStream(state, worker, chatId, this.options.raiseOnFailure, opts.replyTo);
    worker.machine.addStream(state);
    worker.attach(state.id, { api, run: AsyncLocalStorage.snapshot(), onSettled: (o) => live.settle(o) });
    return live;
  }

  /**
   * Send one message (or several chunks) through the chat's machine and wait for delivery.
   * No "typing…". Returns the message ids. @throws StreamFailedError per raiseOnFailure.
   */
  async send(api: Api, chatId: number, content: string | ChunkInput | readonly (string | ChunkInput)[], opts: Omit<StreamOptions, "typing" | "drafts"> = {}): Promise<number[]> {
    const s = this.stream(api, chatId, { ...opts, typing: false, drafts: false });
    s.update(content);
    return s.finish();
  }

  /**
   * Run `fn` with a stream and finish it afterwards — the seed's `async with`: if `fn` throws,
   * the stream is finished quietly and `fn`'s error is rethrown; otherwise finish() may throw
   * StreamFailedError. Returns fn's value and the delivered ids.
   */
  async run<T>(api: Api, chatId: number, fn: (s: LiveStream) => Promise<T> | T, opts: StreamOptions = {}): Promise<{ value: T; messageIds: number[] }> {
    const s = this.stream(api, chatId, opts);
    let value: T;
    try {
      value = await fn(s);
    } catch (err) {
      await s.finish({ raiseOnFailure: false });
      throw err;
    }
    return { value, messageIds: await s.finish() };
  }

  /** True until close() was called: the outbox takes messages (liveness, issue 10 item 1). */
  get isOpen(): boolean {
    return this.closing === null;
  }

  /**
   * Make one chat-bound call that is not a text stream — a result upload (sendDocument), an album
   * (sendMediaGroup), a keyboard edit (editMessageReplyMarkup) — through the chat's machine: the
   * same per-chat pace, 429 hold and bot-wide cap as every message. Posts of a chat go one at a
   * time, in order, before the chat's text (results first). A 429 holds the chat and the post goes
   * again after it (never an attempt); a network error or 5xx is retried with backoff up to
   * Options.maxAttempts; any other refusal is final.
   * @returns the Bot API result (e.g. the sent Message, or Message[] of an album)
   * @throws the Bot API error (GrammyError, HttpError) the post finally failed with; the signal's
   *   reason when the caller aborted; Error after close()
   */
  post<R extends PostRequest>(api: Api, chatId: number, request: R, opts: PostOptions = {}): Promise<PostResult<R>> {
    if (this.closing) return Promise.reject(new Error("outbox is closed"));
    if (opts.signal?.aborted) return Promise.reject(opts.signal.reason);
    const worker = this.workerFor(api, chatId);
    const id = this.nextStreamId++;
    return new Promise<PostResult<R>>((resolve, reject) => {
      const signal = opts.signal;
      const onAbort = () => {
        worker.machine.abandon(id, signal?.reason);
        worker.wake();
      };
      worker.machine.addPost(id, request, opts.timeoutMs ?? null);
      signal?.addEventListener("abort", onAbort, { once: true });
      worker.attach(id, {
        api,
        run: AsyncLocalStorage.snapshot(),
        signal,
        onSettled: (_outcome, post) => {
          signal?.removeEventListener("abort", onAbort);
          if (post?.ok) resolve(post.value as PostResult<R>);
          else reject(post?.error ?? new Error("outbox: worker stopped before the post was sent"));
        },
      });
    });
  }

  /**
   * A 429 seen outside the outbox (a plain Api call with a chat_id): hold the chat for
   * `retryAfterMs` — no call of any kind goes to it before then — and emit ChatHold.
   */
  hold(api: Api, chatId: number, retryAfterMs: number): void {
    if (this.closing) return;
    const w = this.workerFor(api, chatId);
    w.machine.hold(retryAfterMs, this.clock.now());
    void this.ledger.record(`${botIdOf(api)}:${chatId}`, w.machine.timings);
    w.wake();
  }

  /**
   * Streams with a message still to send, edit or delete or a call in flight, plus posts (uploads,
   * keyboard edits) not settled yet (metrics:
   * `docket_outbox_queue_depth`, issue 10 item 2). Read-only; walks the live workers.
   */
  get queueDepth(): number {
    let n = 0;
    for (const w of this.workers.values()) {
      const privateChat = isPrivateChat(w.machine.chatId);
      for (const s of w.machine.streams.values()) if (s.inFlight || (s.status !== "failed" && s.pending(privateChat) !== null)) n++;
      n += w.machine.posts.size;
    }
    return n;
  }

  /** Chats on hold right now after a 429 (metrics: `docket_chats_on_hold`). Read-only. */
  get heldChats(): number {
    const now = this.clock.now();
    let n = 0;
    for (const w of this.workers.values()) if (w.machine.timings.holdUntil > now) n++;
    return n;
  }

  /** Number of live chat workers (for metrics and tests). */
  get activeChats(): number {
    return this.workers.size;
  }

  /**
   * Graceful shutdown: finalize every stream, wait for delivery up to shutdownTimeoutMs,
   * cancel what is left (their finish() resolves as failed). Idempotent.
   */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    const workers = [...this.workers.values()];
    for (const w of workers) {
      for (const s of w.machine.streams.values()) s.finalize();
      w.drain();
    }
    const all = Promise.all(workers.map((w) => w.done));
    const ctl = new AbortController();
    const timedOut = await Promise.race([all.then(() => false), this.clock.sleep(this.options.shutdownTimeoutMs, ctl.signal).then(() => true)]);
    ctl.abort();
    if (timedOut) {
      for (const w of workers) w.cancel();
      await all;
    }
  }

  private workerFor(api: Api, chatId: number): ChatWorker {
    const botId = botIdOf(api);
    const key = `${botId}:${chatId}`;
    const existing = this.workers.get(key);
    if (existing && !existing.stopping) return existing;
    const machine = new ChatMachine(chatId, this.ledger.timings(key), this.options, this.init.random, this.clock.now());
    const worker = new ChatWorker(machine, {
      executor: this.executor,
      clock: this.clock,
      ledger: this.ledger,
      key,
      limiter: this.ledger.limiter(botId),
      callTimeoutMs: this.options.callTimeoutMs,
      log: this.log,
      sink: this.init.events,
    });
    this.workers.set(key, worker);
    worker.start(ROOT);
    const forget = () => {
      if (this.workers.get(key) === worker) this.workers.delete(key);
    };
    void worker.done.then(forget, forget);
    return worker;
  }
}
