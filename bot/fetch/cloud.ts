/**
 * Cloud-mode download (Bot API: getFile, then GET `<apiRoot>/file/bot<token>/<file_path>`).
 * getFile is called immediately before the download, inside the same step, and a
 * failed download repeats the whole step (seed 000: "Ссылка, которая не будет ждать");
 * the body is streamed to a `.part` file with constant memory, bounded by an idle
 * timeout and a whole-try deadline, and gets its final name only after its size
 * matches every size Telegram gave (seed 000: "Так недокачанный файл никогда не
 * выглядит готовым").
 */
import type { Api } from "grammy";
import { validDeclaredSize } from "../jobs/intake-rules.ts";
import { redactSecrets } from "../log.ts";
import type { TryFailure } from "../jobs/retry.ts";
import { FetchError, classifyGetFileError } from "./errors.ts";
import { getFileThroughHolds } from "./get-file.ts";
import { WriteAborted, writeStreamed } from "./hash-copy.ts";
import { checkAgainst, checkSize } from "./size-checks.ts";
import { downloadTimer, type DownloadTimer } from "./timeouts.ts";
import type { FetchRequest, FetchedFile, Fetcher } from "./types.ts";

/**
 * Build the cloud fetcher. Failures: `FetchError` with `too_big` / `size_mismatch`
 * (final), `file_unavailable` / `download_failed` (retryable; a stall or an
 * exceeded deadline is `download_failed`); when `req.signal` aborts, its error is
 * rethrown unclassified (the caller decides: lease lost, /cancel, shutdown).
 * @param api grammY Api (its apiRoot is the Bot API server)
 * @param apiRoot same root, used for the file route
 * @param token bot token (only ever inside the URL; never logged)
 */
export function cloudFetcher(api: Api, apiRoot: string, token: string): Fetcher {
  return async (req: FetchRequest): Promise<FetchedFile> => {
    const timer = downloadTimer(req.signal, req.idleTimeoutMs, req.deadlineMs);
    try {
      return await download(api, apiRoot, token, req, timer);
    } catch (err) {
      if (req.signal?.aborted) throw err;
      if (err instanceof FetchError) throw err;
      const failure = timer.failure() ?? { reason: "download_failed" as const, retryable: true, detail: `download: ${redactSecrets(String(err), token)}` };
      throw new FetchError(failure);
    } finally {
      timer.stop();
    }
  };
}

async function download(api: Api, apiRoot: string, token: string, req: FetchRequest, timer: DownloadTimer): Promise<FetchedFile> {
  let file;
  try {
    file = await getFileThroughHolds(api, req.fileId, timer.signal);
  } catch (err) {
    if (timer.signal.aborted) throw err; // a timeout or the caller: classified above
    throw new FetchError(classifyGetFileError(err, req.limit));
  }
  // getFile's file_size is taken like a declared one: a non-negative safe integer, else unknown (issue 11 item 6).
  const sizes = { declared: req.declaredSize, announced: validDeclaredSize(file.file_size) };
  if (sizes.announced !== null) {
    const early = checkSize(sizes.announced, null, req.limit, false);
    if (early) throw new FetchError(early);
  }
  if (!file.file_path) {
    throw new FetchError({ reason: "file_unavailable", retryable: true, detail: "getFile returned no file_path" });
  }
  const url = `${apiRoot}/file/bot${token}/${file.file_path}`;
  timer.touch(); // waiting for the response head counts as idle too
  const res = await fetch(url, { signal: timer.signal });
  if (!res.ok || !res.body) {
    // 404: the link expired or the path is gone — the next try calls getFile again.
    await res.body?.cancel();
    throw new FetchError({ reason: "download_failed", retryable: true, detail: `download: HTTP ${res.status} for file_path of getFile` });
  }
  let failure = null as TryFailure | null;
  const stop = (f: TryFailure | null) => {
    failure = f;
    if (f) throw new WriteAborted(f.detail);
  };
  const expected = sizes.announced ?? sizes.declared;
  try {
    return await writeStreamed(res.body as unknown as AsyncIterable<Uint8Array>, req.destPath, {
      check: (total) => {
        timer.touch();
        stop(checkAgainst(total, sizes, req.limit, false));
      },
      // Before the rename: a short body (or one longer than announced) never gets the final name.
      verify: (total) => stop(checkAgainst(total, sizes, req.limit, true)),
      onProgress: (total) => req.onProgress?.(total, expected),
    });
  } catch (err) {
    if (err instanceof WriteAborted && failure) throw new FetchError(failure);
    throw err;
  }
}
