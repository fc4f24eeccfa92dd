/**
 * Hold every thread of Bun's filesystem pool with real blocking calls: each is an `open()` of a
 * FIFO without O_NONBLOCK, which waits for a writer (what a hostile `file_path` did to the bot
 * before issue 11). Opens are added until a probe call no longer returns, so it works whatever the
 * pool's size. `release()` gives each FIFO a writer (a child process), which ends the opens.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { open, readdir, type FileHandle } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Blocked filesystem threads and how to free them. */
export interface HeldThreads {
  /** How many opens it took until the pool stopped answering. */
  readonly held: number;
  /** Give every FIFO a writer, wait for the opens to return, close them, remove the FIFOs. */
  release(): Promise<void>;
}

/** Whether a readdir answers within `ms`. */
async function poolAnswers(dir: string, ms: number): Promise<boolean> {
  return await Promise.race([readdir(dir).then(() => true), Bun.sleep(ms).then(() => false)]);
}

/**
 * Block the pool: open FIFOs (blocking) one more at a time until a readdir stays unanswered for
 * `probeMs`; at most `max` opens.
 * @throws Error when `max` opens did not block the pool
 */
export async function holdFsThreads(max = 32, probeMs = 400): Promise<HeldThreads> {
  const dir = mkdtempSync(join(tmpdir(), "docket-fs-threads-"));
  const fifos: string[] = [];
  const opens: Array<Promise<FileHandle>> = [];
  for (let i = 0; i < max; i++) {
    const fifo = join(dir, `fifo-${i}`);
    const made = Bun.spawnSync(["mkfifo", fifo]);
    if (made.exitCode !== 0) throw new Error(`mkfifo failed: ${made.stderr.toString()}`);
    fifos.push(fifo);
    opens.push(open(fifo, "r"));
    if (!(await poolAnswers(dir, probeMs))) {
      return {
        held: opens.length,
        async release() {
          // `: > fifo` opens the write side (a reader is waiting, so it does not block) and closes it.
          Bun.spawnSync(["sh", "-c", 'for f in "$@"; do : > "$f"; done', "sh", ...fifos]);
          for (const fh of await Promise.all(opens)) await fh.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
  }
  Bun.spawnSync(["sh", "-c", 'for f in "$@"; do : > "$f"; done', "sh", ...fifos]);
  for (const fh of await Promise.all(opens)) await fh.close();
  rmSync(dir, { recursive: true, force: true });
  throw new Error(`${max} blocking opens did not hold the filesystem pool`);
}
