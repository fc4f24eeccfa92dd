/**
 * Local-mode fetch: the local Bot API server (`--local`) answers getFile with an
 * absolute `file_path` under `<dir>/<token>/…` once the whole file is on its disk;
 * it never serves `/file/bot…`, so the file is read from disk (botapi-facts.md §1;
 * field case BR-03). The path must resolve inside the configured Bot API dir;
 * the source is hard-linked (same filesystem) or copied, and hashed.
 */
import type { Api } from "grammy";
import { createReadStream } from "node:fs";
import { link, realpath, stat } from "node:fs/promises";
import { isAbsolute, sep } from "node:path";
import type { Logger } from "../log.ts";
import { FetchError, classifyGetFileError } from "./errors.ts";
import { sha256File, writeStreamed } from "./hash-copy.ts";
import { checkSize } from "./size-checks.ts";
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
    const root = await realpath(botApiDir).catch(() => botApiDir);
    const jlog = log.child({ job: req.jobId });

    const locate = async (): Promise<string> => {
      let file;
      try {
        file = await api.getFile(req.fileId, req.signal as never);
      } catch (err) {
        throw new FetchError(classifyGetFileError(err, req.limit));
      }
      const p = file.file_path;
      if (!p || !isAbsolute(p)) {
        throw new FetchError({ reason: "download_failed", retryable: false, detail: `getFile returned a relative file_path; is the server running with --local? (BOT_API_MODE=local)` });
      }
      return p;
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

    let found = await open(await locate());
    if (found === "missing") {
      // The server keeps files only ≥ 1 h after getFile: ask once more (BR-03 d).
      jlog.warn("local file is gone; calling getFile once more");
      found = await open(await locate());
    }
    if (found === "missing") {
      throw new FetchError({ reason: "file_not_readable", retryable: false, detail: "local file missing after a second getFile" });
    }
    const pre = checkSize(found.size, req.declaredSize, req.limit, true);
    if (pre) throw new FetchError(pre);

    try {
      await link(found.real, req.destPath);
      req.onProgress?.(found.size, found.size);
      return { path: req.destPath, size: found.size, sha256: await sha256File(req.destPath) };
    } catch (err) {
      if (errno(err) !== "EXDEV" && errno(err) !== "EPERM" && errno(err) !== "EACCES") throw err;
    }
    const written = await writeStreamed(createReadStream(found.real), req.destPath, () => {}, (n) => req.onProgress?.(n, found.size));
    const post = checkSize(written.size, req.declaredSize, req.limit, true);
    if (post) throw new FetchError(post);
    return written;
  };
}
