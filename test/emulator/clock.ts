/**
 * A manual clock for the emulator (`EmulatorOptions.now`) and for the code under test: time moves
 * only when the test calls `advance`, so a window (rate-limit buckets, file-link expiry, the
 * 10-minute close and logOut windows) is crossed exactly where the test says, never by a slow
 * machine.
 */

/** A clock a test moves by hand. */
export interface ManualClock {
  /** Current time, epoch ms. */
  now(): number;
  /** Move the clock forward by `ms` milliseconds. */
  advance(ms: number): void;
}

/** A manual clock starting at `start` (epoch ms; default 2026-01-01T00:00:00Z). */
export function manualClock(start = Date.UTC(2026, 0, 1)): ManualClock {
  let t = start;
  return {
    now: () => t,
    advance: (ms) => {
      t += ms;
    },
  };
}
