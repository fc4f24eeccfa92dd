/**
 * Moving a processing output from `work/` into `results/`. Under the unit's sandbox each
 * `ReadWritePaths=` entry is its own bind mount (systemd/docket.service), so a `rename()` between
 * them fails with EXDEV even on one file system; the file is then copied (copy_file_range, in the
 * kernel) and the original removed. Found by test/e2e/local-sandbox.test.ts.
 */
import { copyFile, rename, rm } from "node:fs/promises";
import { constants } from "node:fs";

/**
 * Move `from` to `to` (a new name): rename, or copy then remove across mounts.
 * @throws what rename/copyFile throw other than EXDEV (an existing `to` makes the copy fail: COPYFILE_EXCL)
 */
export async function moveFile(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EXDEV") throw err;
    await copyFile(from, to, constants.COPYFILE_EXCL);
    await rm(from, { force: true });
  }
}
