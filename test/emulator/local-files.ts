/**
 * The local server's disk, as the emulator writes it (botapi-facts.md §1: files 0640, directories
 * 0750, owned by the server's user — uid/gid 101 in the aiogram image; names `file_<N>.<ext>`),
 * and the faults a test may put there instead of a file ({@link LocalFileFault}): what a hostile or
 * broken host shows the bot at a `file_path` (issue 11, hostile inputs; issue 16, bad input).
 */
import { randomBytes } from "node:crypto";
import { access, appendFile, chmod, copyFile, lchown, mkdir, symlink, truncate, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { LocalFileFault } from "./types.ts";

/** Owner of what the emulated server writes (uid, gid), like `--username/--groupname`. */
export interface LocalOwner {
  readonly uid: number;
  readonly gid: number;
}

/** Content of a file to write: bytes in memory, or a file on disk to copy. */
export type LocalContent = { readonly bytes: Uint8Array } | { readonly sourcePath: string };

/** Writes the emulated server's files under `<dir>/<token>/<kind>/`. */
export class LocalDisk {
  private counter = 0;
  private readonly sockets: Array<{ stop(): void }> = [];

  /**
   * @param dir the server's `--dir`
   * @param token the bot token (the per-bot folder's name)
   * @param owner when set, every directory and file is chowned to it (the server runs as its own user)
   */
  constructor(
    private readonly dir: string,
    private readonly token: string,
    private readonly owner?: LocalOwner,
  ) {}

  /** Create `<dir>/<token>/<sub>` (0750, the owner's) and return a fresh `file_<N><ext>` path in it (TDLib naming). */
  async nextPath(sub: "documents" | "photos", ext: string): Promise<string> {
    const botDir = join(this.dir, this.token);
    const folder = join(botDir, sub);
    for (const d of [this.dir, botDir, folder]) {
      await mkdir(d, { recursive: true, mode: 0o750 });
      await chmod(d, 0o750);
      await this.own(d);
    }
    let path = join(folder, `file_${this.counter++}${ext}`);
    if (await exists(path)) path = join(folder, `file_${this.counter - 1}_${randomBytes(3).toString("hex")}${ext}`);
    return path;
  }

  /** Write `content` at `path`, mode 0640, owned by the server's user. */
  async write(path: string, content: LocalContent): Promise<void> {
    if ("bytes" in content) await writeFile(path, content.bytes, { mode: 0o640 });
    else await copyFile(content.sourcePath, path);
    await chmod(path, 0o640);
    await this.own(path);
  }

  /**
   * Put `fault` at `path` instead of the file (the content is written first where the fault needs it):
   * a FIFO, a character device (1:3, like /dev/null; needs root), a listening Unix socket, a
   * directory, a symlink to `target`, the file removed right after getFile answers, or the file
   * `by` bytes longer (> 0) or shorter (< 0) than the size getFile announces.
   */
  async writeFault(path: string, fault: LocalFileFault, content: LocalContent): Promise<void> {
    switch (fault.kind) {
      case "fifo":
        run(["mkfifo", "-m", "0640", path]);
        break;
      case "device":
        run(["mknod", "-m", "0640", path, "c", "1", "3"]);
        break;
      case "socket":
        this.sockets.push(Bun.listen({ unix: path, socket: { data() {} } }));
        await chmod(path, 0o640);
        break;
      case "directory":
        await mkdir(path, { mode: 0o750 });
        break;
      case "symlink":
        await symlink(fault.target, path);
        break;
      case "deleted":
        await this.write(path, content);
        await unlink(path);
        return;
      case "resized":
        await this.write(path, content);
        if (fault.by > 0) await appendFile(path, new Uint8Array(fault.by).fill(0x20));
        else await truncate(path, Math.max(0, (await Bun.file(path).size) + fault.by));
        return;
    }
    await this.own(path);
  }

  /** Stop the listening sockets of `socket` faults. */
  async close(): Promise<void> {
    for (const s of this.sockets.splice(0)) s.stop();
  }

  private async own(p: string): Promise<void> {
    if (this.owner) await lchown(p, this.owner.uid, this.owner.gid);
  }
}

/** Whether `p` exists (the emulated server's own check before it reuses a file). */
export async function exists(p: string): Promise<boolean> {
  try {
    await access(p);
    return true;
  } catch {
    return false;
  }
}

function run(argv: string[]): void {
  const r = Bun.spawnSync(argv, { stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`emulator: ${argv.join(" ")} failed: ${r.stderr.toString().trim()}`);
}
