/**
 * Local-mode fetch: the local Bot API server (`--local`) answers getFile with an absolute
 * `file_path` under `<dir>/<token>/…` once the whole file is on its disk; it never serves
 * `/file/bot…` (botapi-facts.md §1; field case BR-03). That file becomes the job's source **in
 * place**, read-only: no copy, no link (issue 16). It must resolve inside LOCAL_BOT_API_DIR, be a
 * regular file whose size matches every size Telegram gave, and is read once while its SHA-256
 * is computed (bot/fetch/in-place.ts). A file gone before the read gets one more getFile (the
 * server keeps files only about an hour after getFile; seed 000: a new getFile, then again).
 * `FetchRequest.destPath` is not used: nothing is written to downloads/.
 */
import type { Api } from "grammy";
import type { Logger } from "../log.ts";
import { FetchError, classifyGetFileError } from "./errors.ts";
import { getFileThroughHolds } from "./get-file.ts";
import { resolve } from "node:path";
import { findAccessBlock, isInside, readInPlace, SourceError } from "./in-place.ts";
import { checkAgainst } from "./size-checks.ts";
import { downloadTimer, type DownloadTimer } from "./timeouts.ts";
import type { TryFailure } from "../jobs/retry.ts";
import type { FetchRequest, FetchedFile, Fetcher } from "./types.ts";

/** Deadline of one filesystem call on a Bot API path when the request sets no idle timeout, ms. */
export const DEFAULT_FS_CALL_MS = 30_000;

/**
 * Build the local-mode fetcher. Failures: `FetchError` with `file_not_readable` (final: outside
 * the dir, not a regular file, no permission, still missing after a second getFile),
 * `size_mismatch` / `too_big` (final), `download_failed` (retryable: a filesystem call past its
 * deadline, a file that changed while read, the try's deadline); getFile errors as in cloud mode.
 * When `req.signal` aborts, its error is rethrown unclassified.
 * @param api grammY Api pointed at the local server
 * @param botApiDir the server's `--dir` as this host sees it (LOCAL_BOT_API_DIR)
 * @param log operator log (one line per refused file, naming the cause and the fix)
 */
export function localFetcher(api: Api, botApiDir: string, log: Logger): Fetcher {
  return async (req: FetchRequest): Promise<FetchedFile> => {
    const timer = downloadTimer(req.signal, req.idleTimeoutMs, req.deadlineMs);
    try {
      return await fetchLocal(api, botApiDir, log, req, timer);
    } catch (err) {
      if (req.signal?.aborted || err instanceof FetchError) throw err;
      const failure = timer.failure();
      if (failure) throw new FetchError(failure);
      throw err;
    } finally {
      timer.stop();
    }
  };
}

async function fetchLocal(api: Api, botApiDir: string, log: Logger, req: FetchRequest, timer: DownloadTimer): Promise<FetchedFile> {
  const jlog = log.child({ job: req.jobId });
  const callMs = req.idleTimeoutMs ?? DEFAULT_FS_CALL_MS;

  const locate = async (): Promise<{ path: string; size: number | null }> => {
    let file;
    try {
      // A local server answers only once the whole file is on its disk: bounded by the deadline, not the idle timeout.
      file = await getFileThroughHolds(api, req.fileId, timer.signal);
    } catch (err) {
      if (timer.signal.aborted) throw err;
      throw new FetchError(classifyGetFileError(err, req.limit));
    }
    const p = file.file_path;
    if (!p || !p.startsWith("/")) {
      throw new FetchError({ reason: "download_failed", retryable: false, detail: `getFile returned a relative file_path; is the server running with --local? (BOT_API_MODE=local)` });
    }
    return { path: p, size: file.file_size ?? null };
  };

  const read = async (located: { path: string; size: number | null }): Promise<FetchedFile> => {
    const sizes = { declared: req.declaredSize, announced: located.size };
    // No idle timer here: every filesystem call has its own deadline of DOWNLOAD_IDLE_TIMEOUT, which names the call.
    return await readInPlace(located.path, {
      root: botApiDir,
      callMs,
      signal: timer.signal,
      // The size by fstat is checked before any byte is read: a lie or an oversize file costs nothing.
      opened: (size) => {
        const f = checkAgainst(size, sizes, req.limit, true);
        if (f) throw new FetchError(f);
      },
      onProgress: (n, size) => req.onProgress?.(n, size),
    });
  };

  let located = await locate();
  try {
    return await read(located);
  } catch (err) {
    if (!(err instanceof SourceError) || err.fault !== "missing") throw await classify(err, located, req, botApiDir, callMs, jlog);
  }
  // The server keeps files only ≥ 1 h after getFile: ask once more (BR-03 d; seed 000: a new getFile, then again).
  jlog.warn({ path: located.path }, "local file is gone; calling getFile once more");
  located = await locate();
  try {
    return await read(located);
  } catch (err) {
    throw await classify(err, located, req, botApiDir, callMs, jlog);
  }
}

/** Map a failed in-place read to a FetchError (logging one operator line for a refused file), or rethrow. */
async function classify(
  err: unknown,
  located: { path: string; size: number | null },
  req: FetchRequest,
  botApiDir: string,
  callMs: number,
  jlog: Logger,
): Promise<unknown> {
  if (!(err instanceof SourceError)) return err;
  const final = (detail: string): FetchError => new FetchError({ reason: "file_not_readable", retryable: false, detail });
  const retry = (detail: string): FetchError => new FetchError({ reason: "download_failed", retryable: true, detail });
  switch (err.fault) {
    case "missing":
      // Only after the second getFile: the first miss asks again.
      jlog.error({ path: located.path, bot_api_dir: botApiDir }, "the local Bot API file is missing after a second getFile; is LOCAL_BOT_API_DIR the server's --dir, mounted at the same path?");
      return final("local file missing after a second getFile");
    case "outside":
      jlog.error({ path: located.path, bot_api_dir: botApiDir, detail: err.detail }, outsideLine(located.path, botApiDir));
      return final("file_path outside LOCAL_BOT_API_DIR");
    case "not_regular":
      jlog.error({ path: located.path, detail: err.detail }, "the local Bot API file is not a regular file (FIFO, device or socket); refusing to read it");
      return final(`not a regular file: ${err.detail}`);
    case "denied":
      return final(await deniedLine(err, located.path, botApiDir, callMs, jlog));
    case "stalled":
      jlog.error({ path: located.path, detail: err.detail }, "a filesystem call on the Bot API directory did not return in time; is LOCAL_BOT_API_DIR on a hung or slow mount? The download will be retried");
      return retry(err.detail);
    case "changed":
      return new FetchError(changedFailure(err, { declared: req.declaredSize, announced: located.size }, req.limit));
  }
}

/**
 * The operator line of a file_path that resolves outside LOCAL_BOT_API_DIR, naming the likely cause and
 * its fix: a plain absolute path outside the dir means the server's `--dir` is not LOCAL_BOT_API_DIR as
 * this host sees it (a configuration fault: every local job fails the same way); a path inside it that
 * leads out through `..` or a symlink, or a file swapped while opened, is something in the server's dir
 * that should not be there. Both start with "file_path resolves outside LOCAL_BOT_API_DIR".
 */
export function outsideLine(filePath: string, botApiDir: string): string {
  const head = `file_path resolves outside LOCAL_BOT_API_DIR (${botApiDir})`;
  const lexical = resolve(filePath);
  if (!isInside(resolve(botApiDir), lexical) && !filePath.split("/").includes("..")) {
    return `${head}: the server's --dir is not LOCAL_BOT_API_DIR as this host sees it; set LOCAL_BOT_API_DIR to the server's --dir, bind-mounted at the same absolute path in its container (DOCKET_BOT_API_DIR in compose.env), then restart docket (docs/local-mode.md)`;
  }
  return `${head} through a symlink, ".." or a file swapped in; refusing to read it. Find out what wrote it into the server's dir and remove it`;
}

/**
 * A file that changed while it was read: when its size now contradicts Telegram's sizes, that is
 * `size_mismatch` with the real numbers (final); otherwise (rewritten at the same size) the try is
 * repeated with a fresh getFile (seed 000: the step repeats whole).
 */
function changedFailure(err: SourceError, sizes: { declared: number | null; announced: number | null }, limit: number): TryFailure {
  const seen = err.sizes!;
  // The size it has now tells the user what happened; a file that shrank and grew back is named by the bytes read.
  const moved = seen.now !== seen.atOpen ? seen.now : seen.read;
  const mismatch = checkAgainst(moved, sizes.declared === null && sizes.announced === null ? { declared: seen.atOpen, announced: null } : sizes, limit, true);
  return mismatch ?? { reason: "download_failed", retryable: true, detail: err.detail };
}

/** Log the one operator line of a permission error (cause and fix), and return the job's detail. */
async function deniedLine(err: SourceError, path: string, botApiDir: string, callMs: number, jlog: Logger): Promise<string> {
  const block = await findAccessBlock(botApiDir, path, callMs).catch(() => null);
  const who = { uid: process.getuid?.(), gid: process.getgid?.(), groups: process.getgroups?.() };
  const where = block ? `${block.at} (owner ${block.uid}:${block.gid}, mode ${block.mode})` : path;
  const fix = block
    ? `add the bot's user to group ${block.gid} (SupplementaryGroups= in docket.service; install.sh sets it up) or grant an ACL, then restart docket`
    : "give the bot's user read access through the server's group, then restart docket";
  jlog.error({ path, code: err.code, blocked_at: block?.at, owner_uid: block?.uid, owner_gid: block?.gid, mode: block?.mode, ...who }, `cannot read the local Bot API file: ${err.code ?? "error"} at ${where}; ${fix} (docs/local-mode.md, Permissions)`);
  return `cannot read local file (${err.code ?? "error"})`;
}
