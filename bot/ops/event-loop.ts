/**
 * Event-loop lag for `/livez` (issue 10 item 1: "the process and its event loop answer"): a timer
 * scheduled every `intervalMs` records how late it fired, and the answer is the largest lateness of
 * the last window. Its own timer, not `perf_hooks.monitorEventLoopDelay`: on Bun 1.4.5 every
 * monitorEventLoopDelay instance shares one histogram (resetting one resets all; measured in
 * test/ops/process-metrics.test.ts), and prom-client resets its instance on every scrape for
 * `nodejs_eventloop_lag_*` — a liveness read from it would forget a block at the next scrape.
 */

/** A sample: when it was taken (epoch ms) and how late the timer fired (ms). */
interface Sample {
  readonly at: number;
  readonly lagMs: number;
}

/** Samples the event loop's lag until {@link stop}. */
export class EventLoopLag {
  private readonly samples: Sample[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;

  /**
   * @param windowMs how far back {@link maxLagMs} looks, ms (default 10 000)
   * @param intervalMs timer period, ms (default 100)
   */
  constructor(
    private readonly windowMs = 10_000,
    private readonly intervalMs = 100,
  ) {}

  /** Start sampling (idempotent); the timer never keeps the process alive. */
  start(): void {
    if (this.timer) return;
    let expected = Date.now() + this.intervalMs;
    const tick = () => {
      const now = Date.now();
      this.samples.push({ at: now, lagMs: Math.max(0, now - expected) });
      while (this.samples.length > 0 && this.samples[0]!.at < now - this.windowMs) this.samples.shift();
      expected = now + this.intervalMs;
      this.timer = setTimeout(tick, this.intervalMs);
      this.timer.unref?.();
    };
    this.timer = setTimeout(tick, this.intervalMs);
    this.timer.unref?.();
  }

  /** Stop sampling. */
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** The largest lag of the last window, ms (0 before the first sample). */
  maxLagMs(): number {
    return this.samples.reduce((m, s) => Math.max(m, s.lagMs), 0);
  }
}
