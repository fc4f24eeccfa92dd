/**
 * ChatWorker: the loop that turns one chat machine's plans into API calls. All the async of
 * the outbox lives here.
 *
 *   plan = machine.plan(now)
 *   action    → (bot-wide slot, and one spacing after the last real send) → execute in the
 *               stream's context → machine.apply → repeat
 *   no action → settle/sweep, check eviction, sleep until the deadline or a wake-up
 *
 * Source: seed 002 "MachineWorker": no polling (update() wakes the worker at once); settled
 * streams get a snapshot of their outcome; a crashed or cancelled worker kills its streams and
 * answers every waiter instead of leaving finish() hanging; the worker belongs to no update.
 */
import type { Api } from "grammy";
import { spendsBotBudget } from "./action.ts";
import type { Clock } from "./clock.ts";
import { deliverEvents, safeError, type EventSink, type OutboxLogger } from "./events.ts";
import type { Executor } from "./executor.ts";
import type { RateLimiter } from "./limiter.ts";
import type { ChatMachine } from "./machine.ts";
import type { Outcome } from "./outcome.ts";

/** Runs `fn` inside a captured async context (AsyncLocalStorage.snapshot()). */
export type ContextRunner = <R>(fn: () => R) => R;

/** What the worker needs from a stream besides its state: where and in whose context to call. */
export interface StreamHandle {
  readonly api: Api;
  readonly run: ContextRunner;
  /** Called exactly once with the settled outcome. */
  readonly onSettled: (outcome: Outcome) => void;
}

/** Shell dependencies. */
export interface WorkerDeps {
  readonly executor: Executor;
  readonly clock: Clock;
  /** Bot-wide limiter shared by every chat of this bot; null = none. */
  readonly limiter: RateLimiter | null;
  readonly log: OutboxLogger;
  readonly sink?: EventSink | undefined;
  /** Called after each applied result (keeps the timings LRU fresh). */
  readonly onApplied?: (() => void) | undefined;
}

/** One worker per (bot, chat). Start with {@link ChatWorker.start}. */
export class ChatWorker {
  private readonly handles = new Map<number, StreamHandle>();
  private readonly cancelCtl = new AbortController();
  private sleepCtl: AbortController | null = null;
  private draining = false;
  /** Resolves when cancel() is called: an executor that ignores its AbortSignal cannot hold the loop. */
  private readonly cancelled: Promise<null>;
  /** True once the worker will take no new streams (evicting, crashed, cancelled). */
  stopping = false;
  /** Resolves when the loop has ended and every waiter was answered. */
  done: Promise<void> = Promise.resolve();

  constructor(
    readonly machine: ChatMachine,
    private readonly deps: WorkerDeps,
  ) {
    this.cancelled = new Promise<null>((resolve) => this.cancelCtl.signal.addEventListener("abort", () => resolve(null), { once: true }));
  }

  /** Start the loop inside `root` (a context that belongs to no update). */
  start(root: ContextRunner): void {
    this.done = root(() => this.loop());
  }

  /** Register a stream already added to the machine. */
  attach(streamId: number, handle: StreamHandle): void {
    this.handles.set(streamId, handle);
    this.wake();
  }

  /**
   * Wake the loop now (update(), finish(), close()). Cheap. A wake while the loop is busy needs no
   * flag: the loop re-plans from the current state before it sleeps again, with no await between.
   */
  wake(): void {
    this.sleepCtl?.abort();
  }

  /** Shutdown: end the loop as soon as every stream has settled (no TTL wait). */
  drain(): void {
    this.draining = true;
    this.wake();
  }

  /** Stop the loop: abort the call in flight, kill live streams, answer waiters. */
  cancel(): void {
    this.stopping = true;
    this.cancelCtl.abort();
    this.sleepCtl?.abort();
  }

  private async sleep(ms: number): Promise<void> {
    const ctl = new AbortController();
    this.sleepCtl = ctl;
    const onCancel = () => ctl.abort();
    this.cancelCtl.signal.addEventListener("abort", onCancel, { once: true });
    try {
      await this.deps.clock.sleep(ms, ctl.signal);
    } finally {
      this.cancelCtl.signal.removeEventListener("abort", onCancel);
      this.sleepCtl = null;
    }
  }

  private flush(): void {
    const m = this.machine;
    deliverEvents(m.drainEvents(), this.deps.sink, this.deps.log);
    for (const s of m.takeSettled()) {
      const h = this.handles.get(s.streamId);
      this.handles.delete(s.streamId);
      h?.onSettled(s.outcome);
    }
  }

  private async loop(): Promise<void> {
    const { machine: m, deps } = this;
    const { clock, executor, limiter } = deps;
    let crash: unknown = null;
    /** Time of the bot-wide slot this worker holds (monotonic ms), or null. */
    let slotAt: number | null = null;
    try {
      while (!this.cancelCtl.signal.aborted) {
        const now = clock.now();
        m.tick(now);
        this.flush();
        const p = m.plan(now);
        if (p.type === "act") {
          const a = p.action;
          if (limiter && spendsBotBudget(a.kind)) {
            // Wait for this worker's place in the bot-wide queue, and also for one spacing after the
            // last real send: a loaded event loop fires many workers' timers late and at once, and
            // their slots (by then in the past) must not all be spent in one bunch.
            slotAt ??= limiter.reserve(now);
            const wait = Math.max(slotAt - now, limiter.useWait(now));
            if (wait > 0) {
              await clock.sleep(wait, this.cancelCtl.signal); // then re-plan: the content may be fresher
              continue;
            }
            limiter.use(now);
          }
          slotAt = null;
          const h = this.handles.get(a.streamId);
          if (!h) throw new Error(`outbox: no handle for stream ${a.streamId}`);
          m.start(a);
          const signal = this.cancelCtl.signal;
          const r = await Promise.race([h.run(() => executor.execute(h.api, this.machine.chatId, a, signal)), this.cancelled]);
          if (r === null) break; // cancelled mid-call: the result is unknown, the streams are killed below
          m.apply(a, r, clock.now());
          deps.onApplied?.();
          continue;
        }
        slotAt = null;
        if (m.isEvictable(now) || (this.draining && this.handles.size === 0)) {
          this.stopping = true;
          break;
        }
        await this.sleep(p.until - now);
      }
    } catch (err) {
      crash = err;
      safeError(deps.log, { err, chatId: this.machine.chatId }, "outbox worker crashed");
    } finally {
      // Nothing here may throw past the waiters: every finish() must get an answer (seed: a dead
      // worker answers its waiters), and `done` must resolve, not reject unhandled.
      this.stopping = true;
      try {
        if (crash !== null) m.killAll("worker crashed", crash);
        else if (this.cancelCtl.signal.aborted) m.killAll("worker cancelled");
        m.tick(clock.now());
        this.flush();
      } catch (err) {
        crash ??= err;
        safeError(deps.log, { err, chatId: this.machine.chatId }, "outbox worker shutdown failed");
      }
      for (const [id, h] of this.handles) h.onSettled({ status: "failed", messageIds: m.stream(id)?.deliveredIds() ?? [], reason: "worker stopped", error: crash ?? undefined });
      this.handles.clear();
    }
  }
}
