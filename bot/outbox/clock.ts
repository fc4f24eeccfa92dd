/**
 * The worker's clock: monotonic milliseconds and an abortable sleep. The pure core never
 * touches it; it receives `now` as a number.
 */

/** Time source for the I/O shell. */
export interface Clock {
  /** Monotonic ms (performance.now() timeline). */
  now(): number;
  /** Resolve after `ms` (≤ 0 → next macrotask) or as soon as `signal` aborts; never rejects. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real clock. */
export const realClock: Clock = {
  now: () => performance.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, Math.min(ms, 2 ** 31 - 1)));
      signal?.addEventListener("abort", done, { once: true });
    }),
};
