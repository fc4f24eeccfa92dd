/**
 * Reading a file in place, read-only, hashing as it goes (issue 16: local mode uses the Bot API
 * server's file as the job's source, no copy). The rules, in order:
 * - the path resolves (realpath, so no symlink escapes) inside `root`;
 * - it is opened with O_NONBLOCK | O_NOFOLLOW | O_NOCTTY, so a FIFO or a device never blocks the
 *   open, and `fstat` on the open descriptor must show a regular file (a FIFO, device or socket is
 *   refused before one byte is read: issue 11, hostile inputs);
 * - the descriptor's own path (`/proc/self/fd/N`) is the resolved one, so nothing was swapped in
 *   between the realpath and the open;
 * - the bytes are read once, two buffers in flight (the next read runs while the current chunk is
 *   hashed), never more than the size found at open plus one byte (the caller checks that size
 *   against its limits in `opened`, before the first read);
 * - after the last byte, `fstat` again: a size, mtime or inode that moved, or a byte count that
 *   differs from the size at open, means the file changed while it was read;
 * - every filesystem call has a deadline (bot/fetch/deadline.ts).
 * Failures are {@link SourceError}s with a {@link SourceFault}; the caller maps them to reason codes.
 */
import { constants } from "node:fs";
import { access, lstat, open, readlink, realpath, type FileHandle } from "node:fs/promises";
import { relative, resolve, sep } from "node:path";
import type { Stats } from "node:fs";
import { FsDeadlineError, withDeadline } from "./deadline.ts";

/** Bytes per read; two buffers of this size are in flight per file. */
export const READ_CHUNK = 1 << 20;

/** O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY: an open that never blocks and never follows a last symlink. */
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW | constants.O_NOCTTY;

/**
 * Why a file could not be read in place:
 * - `missing`: no such file (ENOENT/ENOTDIR) — the server may have removed it;
 * - `outside`: it resolves outside the root (a `..` path, a symlink out, something swapped in);
 * - `not_regular`: a FIFO, device, socket or directory;
 * - `denied`: the bot's user may not read it (EACCES/EPERM), or another I/O error;
 * - `stalled`: a filesystem call did not return within its deadline;
 * - `changed`: its size, mtime or inode moved while it was read.
 */
export type SourceFault = "missing" | "outside" | "not_regular" | "denied" | "stalled" | "changed";

/** Sizes seen by a read that found the file `changed`, bytes. */
export interface ChangedSizes {
  /** Size by fstat right after the open. */
  readonly atOpen: number;
  /** Bytes actually read (at most `atOpen + 1`). */
  readonly read: number;
  /** Size by fstat after the read. */
  readonly now: number;
}

/** A file that could not be read in place; `detail` is for the operator (English, names the path). */
export class SourceError extends Error {
  /**
   * @param fault the classification
   * @param detail operator text
   * @param code the errno code when a call failed (EACCES, ENOENT…)
   * @param sizes for `changed`: the sizes seen
   */
  constructor(
    readonly fault: SourceFault,
    readonly detail: string,
    readonly code?: string,
    readonly sizes?: ChangedSizes,
  ) {
    super(detail);
    this.name = "SourceError";
  }
}

/** Options of {@link readInPlace}. */
export interface InPlaceOptions {
  /** The directory the file must resolve inside (LOCAL_BOT_API_DIR, or docket's downloads/). */
  readonly root: string;
  /** Deadline of each filesystem call, ms (DOWNLOAD_IDLE_TIMEOUT: no progress for that long is a stall). */
  readonly callMs: number;
  /** Stops the read at once (lease lost, /cancel, shutdown, the try's deadline); rejects with its reason. */
  readonly signal?: AbortSignal;
  /** Runs after the open with the size by fstat, before any byte is read; may throw to stop (size checks). */
  readonly opened?: (size: number) => void;
  /** Bytes hashed so far and the size at open. */
  readonly onProgress?: (total: number, size: number) => void;
}

/** A file read in place: its resolved path, the bytes read and their SHA-256 (hex). */
export interface InPlaceFile {
  readonly path: string;
  readonly size: number;
  readonly sha256: string;
}

function errno(err: unknown): string | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === "string" ? code : undefined;
}

/** Whether `p` is `root` or below it (both absolute and resolved). */
export function isInside(root: string, p: string): boolean {
  return p === root || p.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** The kind of a non-regular file, for the operator. */
function kindOf(s: Stats): string {
  if (s.isFIFO()) return "a FIFO";
  if (s.isCharacterDevice()) return "a character device";
  if (s.isBlockDevice()) return "a block device";
  if (s.isSocket()) return "a socket";
  if (s.isDirectory()) return "a directory";
  return "not a regular file";
}

/** Map a failed call's errno to a fault. */
function faultOf(err: unknown, what: string): SourceError {
  if (err instanceof SourceError) return err;
  if (err instanceof FsDeadlineError) return new SourceError("stalled", err.message);
  const code = errno(err);
  switch (code) {
    case "ENOENT":
    case "ENOTDIR":
      return new SourceError("missing", `${what}: no such file (${code})`, code);
    case "ELOOP":
      return new SourceError("outside", `${what}: a symlink where a file was expected (ELOOP)`, code);
    case "ENXIO":
    case "EOPNOTSUPP":
      return new SourceError("not_regular", `${what}: not a regular file (${code})`, code);
    default:
      return new SourceError("denied", `${what}: ${code ?? String(err)}`, code);
  }
}

/**
 * The real path of `root` (or `root` itself, resolved, when it does not exist: then every file is outside it).
 * @throws SourceError `stalled` when realpath passes its deadline
 */
async function realRoot(root: string, callMs: number, signal?: AbortSignal): Promise<string> {
  try {
    return await withDeadline(realpath(root), callMs, `realpath ${root}`, signal);
  } catch (err) {
    if (err instanceof FsDeadlineError) throw faultOf(err, root);
    if (signal?.aborted) throw err;
    return resolve(root);
  }
}

/**
 * Read `path` in place (see the module doc), hashing as it goes.
 * @returns the resolved path, the byte count and the SHA-256
 * @throws SourceError (classified); whatever `opened` throws; the signal's reason when it aborts
 */
export async function readInPlace(path: string, opts: InPlaceOptions): Promise<InPlaceFile> {
  const { callMs, signal } = opts;
  const call = <T>(op: Promise<T>, what: string, onLate?: (v: T) => void) => withDeadline(op, callMs, what, signal, onLate);
  const root = await realRoot(opts.root, callMs, signal);
  let real: string;
  try {
    real = await call(realpath(path), `realpath ${path}`);
  } catch (err) {
    if (signal?.aborted) throw err;
    throw faultOf(err, path);
  }
  if (!isInside(root, real)) throw new SourceError("outside", `${path} resolves to ${real}, outside ${root}`);

  let fh: FileHandle;
  try {
    fh = await call(open(real, OPEN_FLAGS), `open ${real}`, (late) => void late.close().catch(() => {}));
  } catch (err) {
    if (signal?.aborted) throw err;
    throw faultOf(err, real);
  }
  try {
    return await readOpened(fh, real, root, opts, call);
  } catch (err) {
    if (signal?.aborted) throw err;
    if (err instanceof Error && !(err instanceof SourceError) && (errno(err) || err instanceof FsDeadlineError)) throw faultOf(err, real);
    throw err;
  } finally {
    await call(fh.close(), `close ${real}`).catch(() => {});
  }
}

type Call = <T>(op: Promise<T>, what: string, onLate?: (v: T) => void) => Promise<T>;

async function readOpened(fh: FileHandle, real: string, root: string, opts: InPlaceOptions, call: Call): Promise<InPlaceFile> {
  const first = await call(fh.stat(), `fstat ${real}`);
  if (!first.isFile()) throw new SourceError("not_regular", `${real} is ${kindOf(first)}, not a regular file`);
  await checkDescriptor(fh.fd, real, root, call);
  opts.opened?.(first.size);

  // Read at most one byte past the size at open: a file that keeps growing cannot keep us reading.
  const cap = first.size + 1;
  const hash = new Bun.CryptoHasher("sha256");
  const bufs = [Buffer.allocUnsafe(READ_CHUNK), Buffer.allocUnsafe(READ_CHUNK)] as const;
  let which: 0 | 1 = 0;
  let total = 0;
  const readAt = (buf: Buffer, pos: number) => call(fh.read(buf, 0, Math.min(READ_CHUNK, cap - pos), pos), `read ${real}`);
  let pending = cap > 0 ? readAt(bufs[0], 0) : Promise.resolve({ bytesRead: 0 });
  for (;;) {
    const { bytesRead } = await pending;
    if (bytesRead === 0) break;
    const chunk = bufs[which];
    total += bytesRead;
    which = which === 0 ? 1 : 0;
    pending = total < cap ? readAt(bufs[which], total) : Promise.resolve({ bytesRead: 0 });
    hash.update(chunk.subarray(0, bytesRead));
    opts.onProgress?.(total, first.size);
  }
  const last = await call(fh.stat(), `fstat ${real}`);
  if (total !== first.size || last.size !== first.size || last.mtimeMs !== first.mtimeMs || last.ino !== first.ino) {
    throw new SourceError("changed", `${real} changed while it was read (${first.size} B at open, ${total} B read, ${last.size} B now)`, undefined, {
      atOpen: first.size,
      read: total,
      now: last.size,
    });
  }
  return { path: real, size: total, sha256: hash.digest("hex") };
}

/**
 * The open descriptor names the resolved path (Linux `/proc/self/fd`): nothing was swapped in
 * between the realpath and the open. Skipped where `/proc` is not mounted; a file removed since
 * the open (" (deleted)") is still the file that was checked.
 */
async function checkDescriptor(fd: number, real: string, root: string, call: Call): Promise<void> {
  let named: string;
  try {
    named = await call(readlink(`/proc/self/fd/${fd}`), `readlink /proc/self/fd/${fd}`);
  } catch (err) {
    if (err instanceof FsDeadlineError) throw err;
    return;
  }
  const path = named.endsWith(" (deleted)") ? named.slice(0, -" (deleted)".length) : named;
  if (path !== real || !isInside(root, path)) throw new SourceError("outside", `${real} was replaced by ${named} while it was opened`);
}

/** Where the bot's user is stopped on the way to a file, for the operator's permission line. */
export interface AccessBlock {
  /** The first path (a directory of the way, or the file) the bot may not enter or read. */
  readonly at: string;
  readonly uid: number;
  readonly gid: number;
  /** Permission bits, octal string ("750"). */
  readonly mode: string;
}

/**
 * Find the first directory below `root` (or `root` itself, or the file) that the bot's user may
 * not enter (directories) or read (the file), with its owner and mode. Null when every step is
 * allowed or the owner cannot be read either. Each call has the same deadline.
 * @param opts.lastIsFile whether `path` is a file to read (default) or a directory to enter
 */
export async function findAccessBlock(root: string, path: string, callMs: number, opts: { readonly lastIsFile?: boolean } = {}): Promise<AccessBlock | null> {
  const rel = relative(root, path);
  const steps = [root];
  if (rel && !rel.startsWith("..")) for (const part of rel.split(sep)) steps.push(resolve(steps.at(-1)!, part));
  const fileLast = (opts.lastIsFile ?? true) && steps.length > 1;
  for (const [i, p] of steps.entries()) {
    const mode = i === steps.length - 1 && fileLast ? constants.R_OK : constants.X_OK;
    try {
      await withDeadline(access(p, mode), callMs, `access ${p}`);
    } catch (err) {
      if (errno(err) !== "EACCES" && errno(err) !== "EPERM") return null;
      const s = await withDeadline(lstat(p), callMs, `lstat ${p}`).catch(() => null);
      return s ? { at: p, uid: s.uid, gid: s.gid, mode: (s.mode & 0o777).toString(8) } : null;
    }
  }
  return null;
}
