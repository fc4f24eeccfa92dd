/**
 * Stream bytes into a `.part` file while counting and hashing them (constant
 * memory), then rename into place only after the checks pass (seed 000:
 * "Переименование в итоговое имя происходит только после проверки размера и
 * записи контрольной суммы").
 */
import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { once } from "node:events";

/** Result of a streamed write. */
export interface WrittenFile {
  /** Final path (the `.part` suffix removed). */
  readonly path: string;
  /** Bytes written. */
  readonly size: number;
  /** Hex SHA-256 of the content. */
  readonly sha256: string;
}

/** Thrown from `onChunk` checks to stop the write; the `.part` file is removed. */
export class WriteAborted extends Error {}

/**
 * Write an async iterable of chunks to `<finalPath>.part`, hashing as it goes;
 * `check(total)` runs after every chunk and may throw to abort (limits).
 * On success renames to `finalPath`; on any error removes the `.part` and rethrows.
 * @param onProgress called with bytes written so far (throttle it yourself)
 */
export async function writeStreamed(
  chunks: AsyncIterable<Uint8Array>,
  finalPath: string,
  check: (total: number) => void,
  onProgress?: (total: number) => void,
): Promise<WrittenFile> {
  const part = `${finalPath}.part`;
  const hash = createHash("sha256");
  const out = createWriteStream(part, { flags: "w", mode: 0o640 });
  let total = 0;
  try {
    for await (const chunk of chunks) {
      total += chunk.byteLength;
      check(total);
      hash.update(chunk);
      if (!out.write(chunk)) await once(out, "drain");
      onProgress?.(total);
    }
    out.end();
    await once(out, "finish");
    await rename(part, finalPath);
    return { path: finalPath, size: total, sha256: hash.digest("hex") };
  } catch (err) {
    out.destroy();
    await rm(part, { force: true });
    throw err;
  }
}

/** Hex SHA-256 of a file on disk, streamed. */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of Bun.file(path).stream()) hash.update(chunk);
  return hash.digest("hex");
}
