/**
 * Running test processes as an unprivileged user, as the product runs (the bot as `docket`, not
 * root), from wherever the checkout lives.
 *
 * A clone in a private directory (`git clone . "$(mktemp -d)"` makes a 0700 parent) cannot be
 * entered by another user, so a process dropped to `nobody` there cannot even read the code it
 * should run. {@link reachableRepoRoot} then bind-mounts the checkout at a world-traversable path
 * under /tmp (root only; unmounted when the test process exits) instead of loosening the modes of
 * the user's own directories.
 */
import { mkdtempSync, rmdirSync, chmodSync } from "node:fs";
import { join, relative, resolve } from "node:path";

/** The repository root of this checkout. */
export const repoRoot: string = resolve(import.meta.dirname, "../..");

/** uid and gid of `nobody` on Debian: neither owner nor group of anything the tests make. */
export const NOBODY = 65534;

/**
 * The argv prefix that runs a command as `uid`:`gid` with only `groups` as supplementary groups
 * (none by default), through util-linux `setpriv`.
 */
export function asUser(uid: number, gid: number = uid, groups: readonly number[] = []): string[] {
  return ["setpriv", `--reuid=${uid}`, `--regid=${gid}`, groups.length ? `--groups=${groups.join(",")}` : "--clear-groups"];
}

/** True when `uid` can read `path` (checked by running `test -r` as that user). */
export function canRead(path: string, uid: number = NOBODY, gid: number = uid): boolean {
  return Bun.spawnSync([...asUser(uid, gid), "test", "-r", path], { stdout: "ignore", stderr: "ignore" }).exitCode === 0;
}

let mounted: string | null | undefined;

/**
 * A path through which an unprivileged user reads this checkout: the checkout itself when it is
 * reachable, else a bind mount of it at `/tmp/docket-repo-*` (made once per process, removed at
 * exit). Null when neither works (not root, or mounts are not allowed); callers skip then, saying so.
 */
export function reachableRepoRoot(): string | null {
  if (canRead(join(repoRoot, "package.json"))) return repoRoot;
  if (mounted !== undefined) return mounted;
  mounted = null;
  if (process.getuid?.() !== 0) return null;
  const dir = mkdtempSync("/tmp/docket-repo-");
  chmodSync(dir, 0o755);
  if (Bun.spawnSync(["mount", "--bind", repoRoot, dir], { stdout: "ignore", stderr: "pipe" }).exitCode !== 0) {
    rmdirSync(dir);
    return null;
  }
  process.on("exit", () => {
    Bun.spawnSync(["umount", "-l", dir]);
    try {
      rmdirSync(dir);
    } catch {
      // still busy: the lazy unmount finishes when the last user leaves; an empty dir in /tmp stays
    }
  });
  mounted = dir;
  return dir;
}

/**
 * `path` inside this checkout, seen through {@link reachableRepoRoot} (unchanged when the checkout
 * is reachable as it is).
 * @throws Error when no reachable root exists (call reachableRepoRoot first and skip on null)
 */
export function reachablePath(path: string): string {
  const r = reachableRepoRoot();
  if (r === null) throw new Error("the checkout is not reachable by an unprivileged user (see reachableRepoRoot)");
  return join(r, relative(repoRoot, resolve(path)));
}
