/**
 * getFile that treats a 429 as a wait, not a failure (docs/architecture.md: "a 429 is a chat hold,
 * never an attempt"). auto-retry already waits out short holds; when it gives up (retry_after over
 * its cap, or its retries used), this waits `retry_after` and asks again, until `signal` (the
 * download's deadline, /cancel, shutdown) ends the wait.
 */
import { GrammyError, type Api } from "grammy";
import type { File } from "grammy/types";

/**
 * Bot API: getFile, retried after every 429 for as long as `signal` allows.
 * @throws the last error when it is not a 429, or when `signal` aborted (its reason)
 */
export async function getFileThroughHolds(api: Api, fileId: string, signal: AbortSignal): Promise<File> {
  for (;;) {
    try {
      return await api.getFile(fileId, signal as never);
    } catch (err) {
      if (!(err instanceof GrammyError) || err.error_code !== 429 || signal.aborted) throw err;
      const retryAfter = err.parameters.retry_after ?? 1;
      await abortableSleep(retryAfter * 1000, signal);
    }
  }
}

/** Sleep `ms`, ending early (with the signal's reason) when `signal` aborts. */
function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", stop);
    };
    const stop = () => {
      done();
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      done();
      resolve();
    }, ms);
    if (signal.aborted) stop();
    else signal.addEventListener("abort", stop, { once: true });
  });
}
