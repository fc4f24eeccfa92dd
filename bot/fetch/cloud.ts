/**
 * Cloud-mode download (Bot API: getFile, then GET `<apiRoot>/file/bot<token>/<file_path>`).
 * getFile is called immediately before the download, inside the same step, and a
 * failed download repeats the whole step (seed 000: "Ссылка, которая не будет ждать");
 * the body is streamed to a `.part` file with constant memory.
 */
import type { Api } from "grammy";
import { redactSecrets } from "../log.ts";
import { FetchError, classifyGetFileError } from "./errors.ts";
import { WriteAborted, writeStreamed } from "./hash-copy.ts";
import { checkSize } from "./size-checks.ts";
import type { FetchRequest, FetchedFile, Fetcher } from "./types.ts";

/**
 * Build the cloud fetcher.
 * @param api grammY Api (its apiRoot is the Bot API server)
 * @param apiRoot same root, used for the file route
 * @param token bot token (only ever inside the URL; never logged)
 */
export function cloudFetcher(api: Api, apiRoot: string, token: string): Fetcher {
  return async (req: FetchRequest): Promise<FetchedFile> => {
    let file;
    try {
      file = await api.getFile(req.fileId, req.signal as never);
    } catch (err) {
      throw new FetchError(classifyGetFileError(err, req.limit));
    }
    const expected = file.file_size ?? req.declaredSize;
    if (file.file_size !== undefined) {
      const early = checkSize(file.file_size, null, req.limit, false);
      if (early) throw new FetchError(early);
    }
    if (!file.file_path) {
      throw new FetchError({ reason: "file_unavailable", retryable: true, detail: "getFile returned no file_path" });
    }
    const url = `${apiRoot}/file/bot${token}/${file.file_path}`;
    let res: Response;
    try {
      res = await fetch(url, { signal: req.signal });
    } catch (err) {
      throw new FetchError({ reason: "download_failed", retryable: true, detail: `download: ${redactSecrets(String(err), token)}` });
    }
    if (!res.ok || !res.body) {
      // 404: the link expired or the path is gone — the next try calls getFile again.
      await res.body?.cancel();
      throw new FetchError({ reason: "download_failed", retryable: true, detail: `download: HTTP ${res.status} for file_path of getFile` });
    }
    let failure = null as ReturnType<typeof checkSize>;
    try {
      const written = await writeStreamed(
        res.body as unknown as AsyncIterable<Uint8Array>,
        req.destPath,
        (total) => {
          failure = checkSize(total, req.declaredSize, req.limit, false);
          if (failure) throw new WriteAborted(failure.detail);
        },
        (total) => req.onProgress?.(total, expected),
      );
      const final = checkSize(written.size, req.declaredSize, req.limit, true);
      if (final) throw new FetchError(final);
      return written;
    } catch (err) {
      if (err instanceof FetchError) throw err;
      if (err instanceof WriteAborted && failure) throw new FetchError(failure);
      if (req.signal?.aborted) throw err;
      throw new FetchError({ reason: "download_failed", retryable: true, detail: `download: ${redactSecrets(String(err), token)}` });
    }
  };
}
