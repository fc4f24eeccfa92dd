/**
 * The bot watching itself: every `intervalMs` it asks the readiness checks (their caches keep the
 * Bot API calls to their own pace) and reports changes — one journal line when a check starts
 * failing (at the check's level: `error` for a webhook Telegram cannot deliver to, issue 9 item 3),
 * one when it is ok again, nothing while it stays the same. `onChange` lets alerts follow the same
 * transitions. Runs without any scraper, so a broken webhook is reported even on a box nobody watches.
 */
import type { Logger } from "../log.ts";
import { runChecks, type CachedCheck, type Check } from "./check.ts";

/** Journal level of a failing check. */
export type FailLevel = "error" | "warn";

/** Options of {@link ReadinessMonitor}. */
export interface MonitorOptions {
  /** How often the checks are asked, ms (default 15 000; each check's ttl bounds its real runs). */
  readonly intervalMs?: number;
  /** Level of the "failing" line per check name (default `warn`). */
  readonly levels?: Readonly<Record<string, FailLevel>>;
  /** Called on every transition (a check's first verdict counts when it fails). */
  readonly onChange?: (name: string, check: Check) => void;
  /** Called after every round (watchers that share the monitor's pace); its failure is logged. */
  readonly onRound?: () => Promise<void> | void;
}

/** Periodic readiness checks with change reporting. */
export class ReadinessMonitor {
  private readonly state = new Map<string, boolean>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private ticking: Promise<void> | null = null;

  constructor(
    private readonly checks: readonly CachedCheck[],
    private readonly log: Logger,
    private readonly opts: MonitorOptions = {},
  ) {}

  /** Start watching (first round at once); the timer never keeps the process alive. */
  start(): void {
    if (this.timer) return;
    void this.tick();
    this.timer = setInterval(() => void this.tick(), this.opts.intervalMs ?? 15_000);
    this.timer.unref?.();
  }

  /** Stop watching; resolves when a round in progress has ended. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.ticking;
  }

  /** One round: ask every check, report transitions (one at a time: a slow round is not stacked). */
  tick(): Promise<void> {
    this.ticking ??= this.round().finally(() => (this.ticking = null));
    return this.ticking;
  }

  private async round(): Promise<void> {
    let checks: Record<string, Check>;
    try {
      checks = await runChecks(this.checks);
    } catch (err) {
      this.log.error({ err }, "readiness monitor round failed");
      return;
    }
    for (const [name, check] of Object.entries(checks)) {
      const before = this.state.get(name);
      this.state.set(name, check.ok);
      if (before === check.ok || (before === undefined && check.ok)) continue;
      if (check.ok) this.log.info({ check: name, detail: check.detail }, `readiness check ${name} is ok again: ${check.detail}`);
      else this.log[this.opts.levels?.[name] ?? "warn"]({ check: name, detail: check.detail }, `readiness check ${name} failing: ${check.detail}`);
      try {
        this.opts.onChange?.(name, check);
      } catch (err) {
        this.log.error({ err, check: name }, "readiness change handler failed");
      }
    }
    try {
      await this.opts.onRound?.();
    } catch (err) {
      this.log.error({ err }, "readiness monitor watcher failed");
    }
  }
}
