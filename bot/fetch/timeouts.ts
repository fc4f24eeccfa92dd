/**
 * Time bounds of one download try: an idle timeout (no bytes for too long) and a deadline for the whole
 * try (getFile + body). Without them a body that stalls or trickles holds the lease, the download slot and
 * the byte budget forever while the lease keeper renews (audit M3). A try that runs out of time is a
 * retryable `download_failed`: the next try calls getFile again and starts over (seed 000: "шаг
 * повторяется целиком: новый getFile, новая ссылка, скачивание с начала").
 */
import type { TryFailure } from "../jobs/retry.ts";

/**
 * The whole-try deadline for a file of `expectedBytes`, ms: `baseMs` (getFile, connecting, a slow start)
 * plus the time the file takes at `minBytesPerSecond`. Scaled by size so one setting fits a 20 MB cloud file
 * and a 2000 MB local one (DOWNLOAD_TIMEOUT + size / DOWNLOAD_MIN_SPEED).
 * @param expectedBytes declared size, or the mode's limit when unknown (bytes)
 */
export function downloadDeadlineMs(expectedBytes: number, baseMs: number, minBytesPerSecond: number): number {
  return Math.round(baseMs + (Math.max(0, expectedBytes) / Math.max(1, minBytesPerSecond)) * 1000);
}

/** `90 s` for whole seconds, else `1500 ms` (operator detail). */
const human = (ms: number): string => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);

/** The timers of one try; `signal` aborts when the caller's signal does or a bound runs out. */
export interface DownloadTimer {
  /** The caller's signal combined with this try's bounds: pass it to getFile, fetch and the read loop. */
  readonly signal: AbortSignal;
  /** Bytes arrived (or a request starts): restart the idle timeout. */
  touch(): void;
  /** The failure to report when a bound (not the caller) aborted the try; null otherwise. */
  failure(): TryFailure | null;
  /** Clear the timers (always call it when the try ends). */
  stop(): void;
}

/**
 * Start the deadline of one try now; the idle timeout starts at the first `touch()` (so a local server's
 * getFile, which answers only once the whole file is on its disk, is bounded by the deadline alone).
 * @param outer the step's signal (lease lost, /cancel, shutdown); its abort is not a timeout
 * @param idleMs DOWNLOAD_IDLE_TIMEOUT in ms; undefined = none
 * @param deadlineMs whole-try bound in ms (see {@link downloadDeadlineMs}); undefined = none
 */
export function downloadTimer(outer: AbortSignal | undefined, idleMs: number | undefined, deadlineMs: number | undefined): DownloadTimer {
  const own = new AbortController();
  let fired: TryFailure | null = null;
  let idle: ReturnType<typeof setTimeout> | null = null;
  const fire = (detail: string) => {
    if (fired || own.signal.aborted || outer?.aborted) return;
    fired = { reason: "download_failed", retryable: true, detail };
    own.abort(new Error(detail));
  };
  const deadline = deadlineMs === undefined ? null : setTimeout(() => fire(`download took longer than its deadline of ${human(deadlineMs)}`), deadlineMs);
  return {
    signal: outer ? AbortSignal.any([outer, own.signal]) : own.signal,
    touch() {
      if (idleMs === undefined || fired) return;
      if (idle) clearTimeout(idle);
      idle = setTimeout(() => fire(`download stalled: no data for ${human(idleMs)}`), idleMs);
    },
    failure: () => fired,
    stop() {
      if (idle) clearTimeout(idle);
      if (deadline) clearTimeout(deadline);
    },
  };
}
