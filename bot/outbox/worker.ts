/**
 * ChatWorker: the loop that turns one chat machine's plans into API calls. All the async of
 * the outbox lives here.
 *
 *   plan = machine.plan(now)
 *   action    → (bot-wide slots, and one spacing per message after the last real send) → execute
 *               in the stream's context, bounded by a per-call timeout → machine.apply → repeat
 *   no action → settle/sweep, check eviction, sleep until the deadline or a wake-up
 *
 * An upload (a long post) is started and not awaited: it runs beside the chat's text calls and its
 * result is applied when it arrives, so a 2000 MB result does not hold a chat's replies for minutes.
 *
 * Source: seed 002 "MachineWorker": no polling (update() wakes the worker at once); settled
 * streams get a snapshot of their outcome; a crashed or cancelled worker kills its streams and
 * answers every waiter instead of leaving finish() hanging; the worker belongs to no update.
 */
import type { Api } from "grammy";
import { spendsBotBudget, weightOf, type Action, type Result } from "./action.ts";
import type { Clock } from "./clock.ts";
import { deliverEvents, safeError, type EventSink, type OutboxLogger } from "./events.ts";
import type { Executor } from "./executor.ts";
import type { RateLedger } from "./ledger.ts";
import type { BotLimiter } from "./limiter.ts";
import type { ChatMachine, PostOutcome } from "./machine.ts";
import type { Outcome } from "./outcome.ts";

/** Runs `fn` inside a captured async context (AsyncLocalStorage.snapshot()). */
export type ContextRunner = <R>(fn: () => R) => R;

/** What the worker needs from a stream besides its state: where and in whose context to call. */
export interface StreamHandle {
  readonly api: Api;
  readonly run: ContextRunner;
  /** The caller's signal (posts): it also aborts the call in flight. */
  readonly signal?: AbortSignal | undefined;
  /** Called exactly once with the settled outcome (and, for a post, its result or error). */
  readonly onSettled: (outcome: Outcome, post?: PostOutcome) => void;
}

/** Shell dependencies. */
export interface WorkerDeps {
  readonly executor: Executor;
  readonly clock: Clock;
  /** Shared rate state (chat timings, bot-wide slots). */
  readonly ledger: RateLedger;
  /** This chat's ledger key (`<bot id>:<chat id>`). */
  readonly key: string;
  /** Bot-wide limiter shared by every chat of this bot; null = none. */
  readonly limiter: BotLimiter | null;
  /** Bound of one API call, ms (Options.callTimeoutMs; a post may bring its own). */
  readonly callTimeoutMs: number;
  readonly log: OutboxLogger;
  readonly sink?: EventSink | undefined;
}

/** A detached call's result, applied by the loop when it arrives. */
interface Completion {
  readonly action: Action;
  readonly result: Result;
}

/** Await only what is a promise: the in-memory ledger answers synchronously. */
async function settle<T>(v: T | Promise<T>): Promise<T> {
  return v instanceof Promise ? await v : v;
}

/** One worker per (bot, chat). Start with {@link ChatWorker.start}. */
export class ChatWorker {
  private readonly handles = new Map<number, StreamHandle>();
  private completions: Completion[] = [];
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
      h?.onSettled(s.outcome, s.post);
    }
  }

  /**
   * One API call for `a`, bounded by its timeout (seed 002 has none; grammY's default is 500 s, and
   * one stalled request would freeze the chat that long — issue 11 item 7) and aborted by cancel()
   * and by the caller's signal. A call that runs out of time is a transient failure.
   */
  private async call(a: Action, h: StreamHandle): Promise<Result> {
    const ms = a.type === "post" && a.timeoutMs !== null ? a.timeoutMs : this.deps.callTimeoutMs;
    const timer = new AbortController();
    const t = setTimeout(() => timer.abort(new Error(`no answer within ${ms} ms`)), ms);
    const signal = AbortSignal.any([this.cancelCtl.signal, timer.signal, ...(h.signal ? [h.signal] : [])]);
    try {
      const r = await h.run(() => this.deps.executor.execute(h.api, this.machine.chatId, a, signal));
      if (!r.ok && timer.signal.aborted && !this.cancelCtl.signal.aborted) return { ok: false, kind: "transient", reason: `no answer within ${ms} ms`, error: r.error };
      return r;
    } finally {
      clearTimeout(t);
    }
  }

  private async loop(): Promise<void> {
    const { machine: m, deps } = this;
    const { clock, limiter, ledger, key } = deps;
    let crash: unknown = null;
    /** The bot-wide slots this worker holds: the first one's time (monotonic ms) and how many, or null. */
    let slot: { at: number; weight: number } | null = null;
    try {
      while (!this.cancelCtl.signal.aborted) {
        await settle(ledger.refresh(key, m.timings));
        let now = clock.now();
        if (this.completions.length > 0) {
          for (const c of this.completions.splice(0)) m.apply(c.action, c.result, now);
          await settle(ledger.record(key, m.timings));
        }
        m.tick(now);
        this.flush();
        const p = m.plan(now);
        if (p.type === "act") {
          const a = p.action;
          const w = weightOf(a);
          if (limiter && spendsBotBudget(a.kind)) {
            // Wait for this worker's place in the bot-wide queue, and also for one spacing per message
            // after the last real send: a loaded event loop fires many workers' timers late and at
            // once, and their slots (by then in the past) must not all be spent in one bunch. A re-plan
            // that needs more slots (an album instead of an edit) reserves the rest behind the queue.
            if (slot === null) slot = { at: await settle(limiter.reserve(now, w)), weight: w };
            else if (w > slot.weight) slot = { at: Math.max(slot.at, await settle(limiter.reserve(now, w - slot.weight))), weight: w };
            now = clock.now();
            const wait = Math.max(slot.at - now, limiter.useWait(now));
            if (wait > 0) {
              await clock.sleep(wait, this.cancelCtl.signal); // then re-plan: the content may be fresher
              continue;
            }
            limiter.use(now, w);
          }
          slot = null;
          const h = this.handles.get(a.streamId);
          if (!h) throw new Error(`outbox: no handle for stream ${a.streamId}`);
          m.start(a, now);
          if (a.type === "post" && a.long) {
            void this.call(a, h).then((result) => {
              this.completions.push({ action: a, result });
              this.wake();
            });
            continue;
          }
          const r = await Promise.race([this.call(a, h), this.cancelled]);
          if (r === null) break; // cancelled mid-call: the result is unknown, the streams are killed below
          m.apply(a, r, clock.now());
          await settle(ledger.record(key, m.timings));
          continue;
        }
        slot = null;
        if (m.isEvictable(now) || (this.draining && this.handles.size === 0)) {
          this.stopping = true;
          break;
        }
        // An upload that ended during the awaits above woke nobody: apply it before sleeping.
        if (this.completions.length > 0) continue;
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
