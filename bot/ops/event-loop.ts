/**
 * Event-loop lag, measured (issue 10 item 2: "where Bun does not support them, measured
 * equivalents"). Bun's `perf_hooks.monitorEventLoopDelay` exists but does not see a blocked loop
 * (a 300 ms busy wait reads as a 0.2 ms maximum on Bun 1.4.5), so prom-client's
 * `nodejs_eventloop_lag_*` would always say "fine". This sampler schedules a timer every
 * `intervalMs` and records how late it fired: the time the loop could not run timers.
 */

/** A lag sample: when it was taken (epoch ms) and how late the timer fired (ms). */
interface Sample {
  readonly at: number;
  readonly lagMs: number;
}

/** Samples the event loop's lag until {@link stop}. */
export class EventLoopLag {
  private readonly samples: Sample[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** Epoch ms of the last sample (the loop ran a timer then). */
  lastSampleAt = 0;

  /**
   * @param onSample called with each sample's lag in seconds (the histogram)
   * @param intervalMs timer period, ms (default 100)
   * @param windowMs how far back {@link maxLagMs} looks, ms (default 10 000)
   */
  constructor(
    private readonly onSample: (seconds: number) => void = () => {},
    private readonly intervalMs = 100,
    private readonly windowMs = 10_000,
  ) {}

  /** Start sampling (idempotent); the timer never keeps the process alive. */
  start(): void {
    if (this.timer) return;
    let expected = Date.now() + this.intervalMs;
    const tick = () => {
      const now = Date.now();
      const lagMs = Math.max(0, now - expected);
      this.lastSampleAt = now;
      this.samples.push({ at: now, lagMs });
      while (this.samples.length > 0 && this.samples[0]!.at < now - this.windowMs) this.samples.shift();
      this.onSample(lagMs / 1000);
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

  /** The largest lag seen in the last window, ms (0 before the first sample). */
  maxLagMs(): number {
    return this.samples.reduce((m, s) => Math.max(m, s.lagMs), 0);
  }
}
