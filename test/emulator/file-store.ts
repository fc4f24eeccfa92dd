/**
 * Files known to the emulated Bot API: bot uploads, user documents and photo sizes; file_id /
 * file_unique_id issuing; getFile paths for cloud (relative, expiring links) and local mode
 * (absolute path under `<localDir>/<token>/`, file written at getFile time with mode 0640, dirs 0750).
 * Rules: botapi-facts.md §1 (getFile, layout, limits), field cases BR-01, BR-02, BR-03.
 */
import { createHash, randomBytes } from "node:crypto";
import { stat } from "node:fs/promises";
import { extname, resolve } from "node:path";
import { badRequest, E } from "./api-error.ts";
import { LocalDisk, exists, type LocalOwner } from "./local-files.ts";
import type { FileDownloadFault, LocalFileFault } from "./types.ts";

/** Cloud getFile limit: MAX_DOWNLOAD_FILE_SIZE = 20 << 20 bytes (TBA Client.h). */
export const CLOUD_DOWNLOAD_LIMIT = 20 << 20;
/** Cloud multipart upload limit for documents (50 MB, taken as MiB). */
export const CLOUD_UPLOAD_LIMIT = 50 << 20;
/** Local-server upload limit (2000 MB, taken as MiB). */
export const LOCAL_UPLOAD_LIMIT = 2000 * (1 << 20);

/** A file's content and metadata, keyed by file_unique_id. */
export interface StoredFile {
  uniqueId: string;
  kind: "document" | "photo";
  /** Content in memory, or … */
  bytes?: Uint8Array;
  /** … a file on disk (read lazily; may be sparse and large). */
  sourcePath?: string;
  /** Real byte size of the content. */
  realSize: number;
  /** Size Telegram believes (a user's declared file_size may lie); undefined = unknown. */
  knownSize?: number;
  /** Extension including the dot ("" if none), from the original file name. */
  ext: string;
  fileName?: string;
  mimeType?: string;
  /** Uploaded by the bot (uploaded() returns it). */
  fromBot: boolean;
  /** Cloud: current relative file_path and when it was issued (epoch ms). */
  link?: { path: string; issuedAt: number; generation: number };
  /** Local: absolute path written by getFile. */
  localPath?: string;
}

/** Options of the store (from EmulatorOptions). */
export interface FileStoreOptions {
  mode: "cloud" | "local";
  token: string;
  localDir?: string;
  /** Local: owner of the files and directories the server writes (default: whoever runs the emulator). */
  localOwner?: LocalOwner;
  fileLinkTtlMs: number;
}

function b64url(buf: Uint8Array): string {
  return Buffer.from(buf).toString("base64url");
}

/** File registry. */
export class FileStore {
  private readonly files = new Map<string, StoredFile>();
  private readonly ids = new Map<string, string>();
  private readonly links = new Map<string, { uniqueId: string; issuedAt: number; generation: number }>();
  private counter = 0;
  /** Bumped by expireLinks(): links of older generations are dead. */
  private generation = 0;
  private failDownloads = 0;
  /** Faults for the next served downloads, in order (each entry used `times` times). */
  private readonly faults: Array<{ fault: FileDownloadFault; times: number }> = [];
  /** Local faults for the next getFile answers, in order. */
  private readonly localFaults: Array<{ fault: LocalFileFault; times: number }> = [];
  /** Local: the server's disk (undefined in cloud mode). */
  private readonly disk?: LocalDisk;

  constructor(private readonly opts: FileStoreOptions) {
    if (opts.mode === "local") this.disk = new LocalDisk(resolve(opts.localDir!), opts.token, opts.localOwner);
  }

  /** A fresh file_id for a stored file (documents start "BQAC…", photos "AgAC…", like Telegram). */
  issueId(f: StoredFile): string {
    const prefix = f.kind === "photo" ? "AgACAgIAAxkBAAI" : "BQACAgIAAxkBAAI";
    const id = prefix + b64url(randomBytes(30));
    this.ids.set(id, f.uniqueId);
    return id;
  }

  /** The file a file_id names, if any. */
  byId(fileId: string): StoredFile | undefined {
    const u = this.ids.get(fileId);
    return u === undefined ? undefined : this.files.get(u);
  }

  /**
   * Registers content (same kind + same bytes → same file_unique_id, like Telegram) and returns the record.
   * Files on disk over 64 MiB are keyed by path, size and mtime instead of their bytes (no full read).
   */
  async register(input: {
    kind: "document" | "photo";
    bytes?: Uint8Array;
    path?: string;
    fileName?: string;
    mimeType?: string;
    knownSize?: number | null;
    fromBot: boolean;
  }): Promise<StoredFile> {
    const h = createHash("sha256").update(input.kind);
    let realSize: number;
    if (input.bytes) {
      h.update(input.bytes);
      realSize = input.bytes.byteLength;
    } else if (input.path) {
      const st = await stat(input.path);
      realSize = st.size;
      if (st.size <= 64 << 20) h.update(new Uint8Array(await Bun.file(input.path).arrayBuffer()));
      else h.update(`${resolve(input.path)}:${st.size}:${st.mtimeMs}`);
    } else throw new Error("emulator: a file needs bytes or path");
    const uniqueId = (input.kind === "photo" ? "AQAD" : "AgAD") + h.digest("base64url").slice(0, 12);
    const existing = this.files.get(uniqueId);
    const f: StoredFile = {
      uniqueId,
      kind: input.kind,
      realSize,
      ext: input.kind === "photo" ? ".jpg" : input.fileName ? extname(input.fileName) : "",
      fromBot: input.fromBot || (existing?.fromBot ?? false),
      ...(input.bytes ? { bytes: input.bytes } : { sourcePath: resolve(input.path!) }),
      ...(input.knownSize === null ? {} : { knownSize: input.knownSize ?? realSize }),
      ...(input.fileName !== undefined ? { fileName: input.fileName } : {}),
      ...(input.mimeType !== undefined ? { mimeType: input.mimeType } : {}),
      ...(existing?.link ? { link: existing.link } : {}),
      ...(existing?.localPath ? { localPath: existing.localPath } : {}),
    };
    this.files.set(uniqueId, f);
    return f;
  }

  /** Content of a bot upload by any of its file_ids. */
  uploaded(fileId: string): Uint8Array | undefined {
    const f = this.byId(fileId);
    return f?.fromBot ? f.bytes : undefined;
  }

  /** Every link issued so far answers 404 (BR-02 b). */
  expireLinks(): void {
    this.generation++;
    for (const f of this.files.values()) delete f.link;
  }

  /** The next `times` downloads answer 404. */
  failNextDownloads(times: number): void {
    this.failDownloads += times;
  }

  /** The next `times` downloads that would be served whole get `fault` instead (see download-faults.ts). */
  addDownloadFault(fault: FileDownloadFault, times: number): void {
    if (times > 0) this.faults.push({ fault, times });
  }

  /** Holds for the next getFile calls of known files, in order ({@link holdGetFile}). */
  private readonly holds: Array<{ arrived: () => void; released: Promise<void> }> = [];

  /**
   * The next getFile of a known file waits until `release()` (a local server still downloading a big file);
   * `arrived` resolves when that call is in.
   */
  holdGetFile(): { arrived: Promise<void>; release: () => void } {
    let arrived!: () => void;
    let release!: () => void;
    const seen = new Promise<void>((r) => (arrived = r));
    const released = new Promise<void>((r) => (release = r));
    this.holds.push({ arrived, released });
    return { arrived: seen, release };
  }

  /** Called by getFile before it answers: waits out the oldest hold, if any. */
  async passHold(): Promise<void> {
    const hold = this.holds.shift();
    if (!hold) return;
    hold.arrived();
    await hold.released;
  }

  /** Local mode: the next `times` getFile answers name `fault` at their `file_path` instead of the file. */
  addLocalFault(fault: LocalFileFault, times: number): void {
    if (times > 0) this.localFaults.push({ fault, times });
  }

  /** Stop what local faults left running (listening sockets). */
  async close(): Promise<void> {
    await this.disk?.close();
  }

  /** The fault for the download being served now, consuming one use; undefined when none is queued. */
  takeDownloadFault(): FileDownloadFault | undefined {
    const head = this.faults[0];
    if (!head) return undefined;
    if (--head.times <= 0) this.faults.shift();
    return head.fault;
  }

  /**
   * Bot API getFile. Cloud: relative `documents/file_N.ext` / `photos/file_N.jpg`, reused while its link is live,
   * a new one after expiry; 400 "file is too big" when max(known size, real size) > 20 MiB. Local: absolute
   * path, file (re)written if missing, no size limit.
   * @throws ApiError 400 "file_id not specified" | "invalid file_id" | "file is too big".
   */
  async getFile(fileId: string, now: number): Promise<Record<string, unknown>> {
    if (fileId === "") throw badRequest(E.fileIdNotSpecified);
    const f = this.byId(fileId);
    if (!f) throw badRequest(E.invalidFileId);
    const size = Math.max(f.knownSize ?? 0, f.realSize);
    const out: Record<string, unknown> = { file_id: fileId, file_unique_id: f.uniqueId };
    if (f.knownSize !== undefined || this.opts.mode === "local") out.file_size = f.knownSize ?? f.realSize;
    if (this.opts.mode === "cloud") {
      if (size > CLOUD_DOWNLOAD_LIMIT) throw badRequest(E.fileTooBig);
      if (!f.link || !this.linkLive(f.link, now)) {
        const path = `${f.kind === "photo" ? "photos" : "documents"}/file_${this.counter++}${f.ext}`;
        f.link = { path, issuedAt: now, generation: this.generation };
        this.links.set(path, { uniqueId: f.uniqueId, issuedAt: now, generation: this.generation });
      }
      out.file_size = f.knownSize ?? f.realSize;
      out.file_path = f.link.path;
      return out;
    }
    const fault = this.localFaults[0];
    if (fault) {
      if (--fault.times <= 0) this.localFaults.shift();
      const path = await this.disk!.nextPath(f.kind === "photo" ? "photos" : "documents", f.ext);
      await this.disk!.writeFault(path, fault.fault, contentOf(f));
      // A "deleted" file was written and removed, like the server's cleanup between getFile and the read.
      out.file_path = path;
      return out;
    }
    if (!f.localPath || !(await exists(f.localPath))) {
      const path = await this.disk!.nextPath(f.kind === "photo" ? "photos" : "documents", f.ext);
      await this.disk!.write(path, contentOf(f));
      f.localPath = path;
    }
    out.file_path = f.localPath;
    return out;
  }

  private linkLive(link: { issuedAt: number; generation: number }, now: number): boolean {
    return link.generation === this.generation && now - link.issuedAt < this.opts.fileLinkTtlMs;
  }

  /**
   * Cloud download of `/file/bot<token>/<file_path>`: the content, or undefined for 404
   * (unknown path, expired link, injected failure).
   */
  download(filePath: string, now: number): Blob | Uint8Array | undefined {
    if (this.failDownloads > 0) {
      this.failDownloads--;
      return undefined;
    }
    const link = this.links.get(filePath);
    if (!link || !this.linkLive(link, now)) return undefined;
    const f = this.files.get(link.uniqueId);
    if (!f) return undefined;
    return f.bytes ?? Bun.file(f.sourcePath!);
  }
}

/** What to write for a stored file: its bytes, or its file on disk. */
function contentOf(f: StoredFile): { bytes: Uint8Array } | { sourcePath: string } {
  return f.bytes ? { bytes: f.bytes } : { sourcePath: f.sourcePath! };
}
