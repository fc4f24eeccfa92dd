/**
 * Who receives updates (issue 14 item 3): exactly one process across all hosts — long polling or the
 * webhook — elected by PostgreSQL's session advisory lock `intake` (bot/db/pg-session-lock.ts). The
 * others wait for the lock and never call getUpdates (Telegram answers a second poller with 409). When
 * the leader dies its connection closes, the server frees the lock and the next waiter's try (every
 * second) takes it: intake moves within seconds. A leader that cannot confirm it still holds the lock
 * (its connection failed) stops receiving at once and waits again, so two pollers never overlap for
 * longer than one check. With SQLite there is one process: it receives updates from the start.
 */
import type { LockHolder, SessionLock } from "../db/pg-session-lock.ts";
import type { Logger } from "../log.ts";

/** Intake started by the leader: long polling or the webhook listener. */
export interface RunningIntake {
  /** Stop receiving updates (bounded by the caller). */
  stop(): Promise<void>;
  /** Rejects when intake fails by itself (a revoked token, a fatal polling error); never resolves otherwise. */
  readonly failed: Promise<never>;
}

/** Options of {@link IntakeLeader}. */
export interface IntakeLeaderOptions {
  /** The election lock; null = the only process (SQLite): lead at once, forever. */
  readonly lock: SessionLock | null;
  readonly log: Logger;
  /** Start receiving updates (called each time this process becomes the leader). */
  start(): Promise<RunningIntake>;
  /** Told whenever this process starts or stops leading (readiness, metrics). */
  onLeading?(leading: boolean): void;
}

/** Runs intake while this process holds the intake lock. */
export class IntakeLeader {
  private readonly stopCtl = new AbortController();
  private holder: LockHolder | null = null;
  private intake: RunningIntake | null = null;
  private done: Promise<void> | null = null;
  /** Whether this process receives updates now. */
  leading = false;
  private signalFirst!: () => void;
  /** Resolves the first time this process starts receiving updates. */
  readonly firstLead = new Promise<void>((resolve) => (this.signalFirst = resolve));

  constructor(private readonly opts: IntakeLeaderOptions) {}

  /**
   * Start the election loop in the background; the promise it returns rejects with intake's own
   * failure (the caller ends the process), and resolves after {@link stop}.
   */
  run(): Promise<void> {
    this.done ??= this.loop();
    return this.done;
  }

  private async loop(): Promise<void> {
    const { lock, log } = this.opts;
    const signal = this.stopCtl.signal;
    let waitedLogged = false;
    while (!signal.aborted) {
      if (lock) {
        if (!waitedLogged) log.info("waiting for the intake lock: another process receives updates (or none yet)");
        waitedLogged = true;
        this.holder = await lock.take(signal, (err) => log.warn({ err: (err as Error).message }, "intake lock: the database did not answer; trying again"));
        if (!this.holder) return;
      }
      waitedLogged = false;
      log.info(lock ? "this process holds the intake lock: it receives updates" : "receiving updates");
      let intake: RunningIntake;
      try {
        intake = this.intake = await this.opts.start();
      } catch (err) {
        await this.holder?.release();
        this.holder = null;
        throw err;
      }
      this.leading = true;
      this.opts.onLeading?.(true);
      this.signalFirst();
      const lost = this.holder ? this.holder.lost : new Promise<string>(() => {});
      const stopped = new Promise<"stop">((resolve) => signal.addEventListener("abort", () => resolve("stop"), { once: true }));
      const why = await Promise.race([lost, stopped, intake.failed]);
      this.leading = false;
      this.opts.onLeading?.(false);
      this.intake = null;
      if (why === "stop") return; // stop() stops intake and gives the lock back
      log.error({ why }, "the intake lock may be lost: stopped receiving updates; waiting to be elected again");
      await intake.stop().catch(() => {});
      await this.holder?.release();
      this.holder = null;
    }
  }

  /** Stop receiving updates and give the lock back (shutdown). */
  async stop(): Promise<void> {
    this.stopCtl.abort();
    const intake = this.intake;
    this.intake = null;
    await intake?.stop().catch(() => {});
    await this.holder?.release();
    this.holder = null;
    await this.done?.catch(() => {});
  }
}
