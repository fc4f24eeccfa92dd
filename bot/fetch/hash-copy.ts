/**
 * Stream bytes into a `.part` file while counting and hashing them (constant
 * memory), then rename into place only after the checks pass (seed 000:
 * "Переименование в итоговое имя происходит только после проверки размера и
 * записи контрольной суммы. Так недокачанный файл никогда не выглядит готовым").
 */
import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { once } from "node:events";
import { finished } from "node:stream/promises";

/** Result of a streamed write. */
export interface WrittenFile {
  /** Final path (the `.part` suffix removed). */
  readonly path: string;
  /** Bytes written. */
  readonly size: number;
  /** Hex SHA-256 of the content. */
  readonly sha256: string;
}

/** Thrown from `check` / `verify` callbacks to stop the write; the `.part` file is removed. */
export class WriteAborted extends Error {}

/** Callbacks of {@link writeStreamed}. */
export interface WriteChecks {
  /** Runs after every chunk with the bytes so far; may throw (e.g. {@link WriteAborted}) to abort (limits). */
  readonly check?: (total: number) => void;
  /**
   * Runs once after the last byte is on disk and hashed, before the rename; may throw to keep the final
   * name from ever appearing (size against the declared and getFile sizes).
   */
  readonly verify?: (total: number) => void;
  /** Bytes written so far (throttle it yourself). */
  readonly onProgress?: (total: number) => void;
}

/** The `.part` path of a final path: where a file lives until it is verified. */
export function partPath(finalPath: string): string {
  return `${finalPath}.part`;
}

/**
 * Write an async iterable of chunks to `<finalPath>.part`, hashing as it goes; then
 * `verify(total)`, then rename to `finalPath`. On any error (including an aborted
 * source) removes the `.part` and rethrows; the final name never exists then.
 */
export async function writeStreamed(chunks: AsyncIterable<Uint8Array>, finalPath: string, checks: WriteChecks = {}): Promise<WrittenFile> {
  const part = partPath(finalPath);
  const hash = createHash("sha256");
  const out = createWriteStream(part, { flags: "w", mode: 0o640 });
  // A stream error with no listener is an uncaught exception that takes the whole bot down: a write
  // still in flight when a cancelled download destroys the stream ends in ERR_STREAM_DESTROYED
  // ("Cannot call write after a stream was destroyed", seen once in hostile-2's /cancel of a stalled
  // download). An error while writing is kept and rethrown below, so it still fails the download.
  let failed: unknown = null;
  out.on("error", (err) => {
    failed ??= err;
  });
  let total = 0;
  try {
    for await (const chunk of chunks) {
      total += chunk.byteLength;
      checks.check?.(total);
      hash.update(chunk);
      if (failed) throw failed;
      if (!out.write(chunk)) await once(out, "drain");
      checks.onProgress?.(total);
    }
    if (failed) throw failed;
    out.end();
    await finished(out);
    const sha256 = hash.digest("hex");
    checks.verify?.(total);
    await rename(part, finalPath);
    return { path: finalPath, size: total, sha256 };
  } catch (err) {
    out.destroy();
    await rm(part, { force: true });
    throw err;
  }
}
