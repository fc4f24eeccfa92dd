/**
 * A deadline on one filesystem call (issue 11, hostile inputs: "every filesystem call on a Bot API
 * path gets a deadline"). Bun runs `node:fs/promises` calls on a small thread pool (2 threads on a
 * 2-core host); a call that never returns (a FIFO opened without O_NONBLOCK, a hung mount) holds
 * its thread, and two of them freeze every other file operation of the process. The deadline
 * cannot free the thread, but the caller stops waiting: the job's step ends with a classified
 * failure, and /cancel and shutdown are not stuck behind it. A value that arrives after the
 * deadline is handed to `onLate` (close a late file handle, so nothing leaks).
 */

/** A filesystem call that did not return within its deadline. */
export class FsDeadlineError extends Error {
  /**
   * @param what the call and its path, for the operator ("open /var/lib/…/file_3.pdf")
   * @param ms the deadline that passed, ms
   */
  constructor(
    readonly what: string,
    readonly ms: number,
  ) {
    super(`${what} did not return within ${ms} ms`);
    this.name = "FsDeadlineError";
  }
}

/**
 * Await `op` for at most `ms`, or until `signal` aborts (then rejects with the signal's reason).
 * @param what names the call in the {@link FsDeadlineError}
 * @param onLate receives the value of an `op` that settles after the caller stopped waiting
 * @throws FsDeadlineError when `ms` passed first; the signal's reason when it aborted first; else what `op` throws
 */
export function withDeadline<T>(op: Promise<T>, ms: number, what: string, signal?: AbortSignal, onLate?: (value: T) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const finish = () => {
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", aborted);
    };
    const aborted = () => {
      if (settled) return;
      finish();
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      if (settled) return;
      finish();
      reject(new FsDeadlineError(what, ms));
    }, ms);
    op.then(
      (value) => {
        if (settled) return onLate?.(value);
        finish();
        resolve(value);
      },
      (err: unknown) => {
        if (settled) return;
        finish();
        reject(err);
      },
    );
    if (signal?.aborted) aborted();
    else signal?.addEventListener("abort", aborted, { once: true });
  });
}
