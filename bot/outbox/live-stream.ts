/**
 * LiveStream: what a caller holds. update() sets the desired state (synchronous, cheap, wakes
 * the worker); finish() resolves with the delivered message ids; `await using` / close() finish
 * for you and never mask the caller's own exception.
 *
 * Source: seed 002 "ScopedSender и LiveStream". JS cannot tell a disposer whether its block
 * threw, so [Symbol.asyncDispose] never throws (the seed's finish(raise_on_failure=False) on
 * the error path); call finish() yourself, or use Outbox.run(), to get StreamFailedError.
 */
import { toChunk, type Chunk, type ChunkInput } from "./chunk.ts";
import { StreamFailedError, type Outcome } from "./outcome.ts";
import { splitText } from "./split.ts";
import type { StreamState } from "./stream-state.ts";
import type { MessageEntity } from "grammy/types";

/** What a LiveStream needs from its worker. */
export interface StreamLink {
  wake(): void;
  /** Settles when the worker's loop has ended (for whatever reason); finish() races it. */
  readonly done: Promise<void>;
}

/** Extra fields for {@link LiveStream.updateText}: they go on every part, reply_markup on the last. */
export type TextExtras = Omit<ChunkInput, "text" | "entities">;

/** A live, diff-driven stream of one or more chat messages. */
export class LiveStream implements AsyncDisposable {
  private finished = false;
  private result: Outcome | null = null;
  private readonly settledPromise: Promise<Outcome>;
  private resolveSettled!: (o: Outcome) => void;

  constructor(
    private readonly state: StreamState,
    private readonly link: StreamLink,
    readonly chatId: number,
    private readonly raiseOnFailure: boolean,
    /** Default reply_to for the first chunk when it names none. */
    private readonly replyTo: number | undefined,
  ) {
    this.settledPromise = new Promise<Outcome>((r) => (this.resolveSettled = r));
  }

  /** Process-wide stream id. */
  get id(): number {
    return this.state.id;
  }

  /** Called once by the worker with the snapshot outcome. */
  settle(outcome: Outcome): void {
    this.result ??= outcome;
    this.resolveSettled(outcome);
  }

  /**
   * Set the desired messages: one chunk per message (a string means `{ text }`). Synchronous;
   * sends nothing itself. Calls after the stream was killed are ignored.
   * @throws Error after finish(), close() or Outbox.close().
   */
  update(chunks: readonly (ChunkInput | string)[] | ChunkInput | string): void {
    if (this.finished || this.state.isFinal) throw new Error(`outbox stream ${this.id}: update() after finish() or Outbox.close()`);
    const list = Array.isArray(chunks) ? chunks : [chunks as ChunkInput | string];
    const out: Chunk[] = new Array(list.length);
    for (let i = 0; i < list.length; i++) {
      const raw = list[i]!;
      const c = typeof raw === "string" ? { text: raw } : raw;
      out[i] = toChunk(i === 0 && this.replyTo !== undefined && c.reply_to === undefined ? { ...c, reply_to: this.replyTo } : c);
    }
    this.state.update(out);
    this.link.wake();
  }

  /**
   * Set one long text, split into ≤ 4096-unit messages by {@link splitText}. `extra` goes on
   * every part except reply_markup, which goes on the last part only.
   */
  updateText(text: string, entities: readonly MessageEntity[] = [], extra: TextExtras = {}): void {
    const parts = splitText(text, entities);
    const { reply_markup, ...rest } = extra;
    this.update(parts.map((p, i) => ({ ...rest, text: p.text, entities: p.entities, ...(reply_markup && i === parts.length - 1 ? { reply_markup } : {}) })));
  }

  /**
   * Say "that is all" and wait until the chat shows it. Returns the delivered message ids.
   * Idempotent. @throws StreamFailedError when the stream failed and raiseOnFailure applies.
   */
  async finish(opts: { raiseOnFailure?: boolean } = {}): Promise<number[]> {
    if (!this.finished) {
      this.finished = true;
      this.state.finalize();
      this.link.wake();
    }
    // Seed: waiting is a race of the stream's settlement and the worker task itself, so a worker
    // that died without answering (a bug on its way out) cannot leave finish() hanging.
    const o = await Promise.race([this.settledPromise, this.link.done.then(() => this.workerGone(), (err: unknown) => this.workerGone(err))]);
    if (o.status === "failed" && (opts.raiseOnFailure ?? this.raiseOnFailure)) throw new StreamFailedError(this.id, this.chatId, o);
    return [...o.messageIds];
  }

  /**
   * Finish; pass the caller's own error (if any) and delivery failures are not thrown, so the
   * caller's exception keeps priority (seed: __aexit__ → finish(raise_on_failure=False)).
   */
  async close(callerError?: unknown): Promise<number[]> {
    return this.finish(callerError !== undefined ? { raiseOnFailure: false } : {});
  }

  /** `await using`: finishes quietly (never throws, so it cannot mask the block's exception). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.finish({ raiseOnFailure: false });
  }

  /** The outcome when the worker ended without settling this stream: failed, with what was delivered. */
  private workerGone(error?: unknown): Outcome {
    this.settle(Object.freeze({ status: "failed", messageIds: Object.freeze(this.state.deliveredIds()), reason: "worker stopped", error }));
    return this.result!;
  }

  /** The outcome once settled, else null (seed: outcome()). */
  outcome(): Outcome | null {
    return this.result;
  }
}
