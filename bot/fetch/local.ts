/**
 * Local-mode fetch: the local Bot API server (`--local`) answers getFile with an
 * absolute `file_path` under `<dir>/<token>/…` once the whole file is on its disk;
 * it never serves `/file/bot…`, so the file is read from disk (botapi-facts.md §1;
 * field case BR-03). The path must resolve inside the configured Bot API dir;
 * the source is hard-linked (same filesystem) or copied to `<dest>.part`, hashed, its size
 * checked against the declared and getFile sizes, and only then renamed to its final name.
 */
import type { Api } from "grammy";
import { createReadStream } from "node:fs";
import { link, realpath, rename, rm, stat } from "node:fs/promises";
import { isAbsolute, sep } from "node:path";
import type { Logger } from "../log.ts";
import { FetchError, classifyGetFileError } from "./errors.ts";
import { getFileThroughHolds } from "./get-file.ts";
import { hashFile, partPath, writeStreamed } from "./hash-copy.ts";
import { checkAgainst } from "./size-checks.ts";
import { downloadTimer, type DownloadTimer } from "./timeouts.ts";
import type { FetchRequest, FetchedFile, Fetcher } from "./types.ts";

function errno(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * Build the local-mode fetcher.
 * @param api grammY Api pointed at the local server
 * @param botApiDir the server's `--dir` as this host sees it (LOCAL_BOT_API_DIR)
 * @param log operator log (names path, uid/gid on permission errors)
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
  const root = await realpath(botApiDir).catch(() => botApiDir);
  const jlog = log.child({ job: req.jobId });

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
    if (!p || !isAbsolute(p)) {
      throw new FetchError({ reason: "download_failed", retryable: false, detail: `getFile returned a relative file_path; is the server running with --local? (BOT_API_MODE=local)` });
    }
    return { path: p, size: file.file_size ?? null };
  };

  const open = async (p: string): Promise<{ real: string; size: number } | "missing"> => {
    let real: string;
    try {
      real = await realpath(p);
    } catch (err) {
      if (errno(err) === "ENOENT") return "missing";
      return denied(p, err);
    }
    if (real !== root && !real.startsWith(root + sep)) {
      jlog.error({ path: p, resolved: real, bot_api_dir: root }, "file_path resolves outside LOCAL_BOT_API_DIR; refusing to read it");
      throw new FetchError({ reason: "file_not_readable", retryable: false, detail: `file_path outside LOCAL_BOT_API_DIR` });
    }
    try {
      const s = await stat(real);
      // Probe read permission now: EACCES must be a clear failure, not a stream error later.
      await new Promise<void>((resolve, reject) => {
        const rs = createReadStream(real, { start: 0, end: 0 });
        rs.on("error", reject).on("open", () => (rs.destroy(), resolve()));
      });
      return { real, size: s.size };
    } catch (err) {
      if (errno(err) === "ENOENT") return "missing";
      return denied(real, err);
    }
  };

  const denied = (p: string, err: unknown): never => {
    jlog.error(
      { path: p, code: errno(err), uid: process.getuid?.(), gid: process.getgid?.(), groups: process.getgroups?.() },
      "cannot read the local Bot API file: the bot needs the server's group (gid 101 in the common image) and the same mount path",
    );
    throw new FetchError({ reason: "file_not_readable", retryable: false, detail: `cannot read local file (${errno(err) ?? "error"})` });
  };

  let located = await locate();
  let found = await open(located.path);
  if (found === "missing") {
    // The server keeps files only ≥ 1 h after getFile: ask once more (BR-03 d).
    jlog.warn("local file is gone; calling getFile once more");
    located = await locate();
    found = await open(located.path);
  }
  if (found === "missing") {
    throw new FetchError({ reason: "file_not_readable", retryable: false, detail: "local file missing after a second getFile" });
  }
  const source = found;
  const sizes = { declared: req.declaredSize, announced: located.size };
  const pre = checkAgainst(source.size, sizes, req.limit, true);
  if (pre) throw new FetchError(pre);
  const verify = (total: number) => {
    const f = checkAgainst(total, sizes, req.limit, true);
    if (f) throw new FetchError(f);
  };

  // Same rule as a cloud download: the source is `<dest>.part` until its size and SHA-256 are known.
  const part = partPath(req.destPath);
  try {
    await link(source.real, part);
  } catch (err) {
    if (errno(err) !== "EXDEV" && errno(err) !== "EPERM" && errno(err) !== "EACCES") throw err;
    timer.touch();
    return await writeStreamed(createReadStream(source.real, { signal: timer.signal }), req.destPath, {
      check: () => timer.touch(),
      verify,
      onProgress: (n) => req.onProgress?.(n, source.size),
    });
  }
  try {
    const { sha256, size } = await hashFile(part, timer.signal);
    verify(size);
    await rename(part, req.destPath);
    req.onProgress?.(size, size);
    return { path: req.destPath, size, sha256 };
  } catch (err) {
    await rm(part, { force: true });
    throw err;
  }
}
