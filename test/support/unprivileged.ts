/**
 * Running test processes as an unprivileged user, as the product runs (the bot as `docket`, not
 * root), from wherever the checkout lives.
 *
 * A clone in a private directory (`git clone . "$(mktemp -d)"` makes a 0700 parent) cannot be
 * entered by another user, so a process dropped to `nobody` there cannot even read the code it
 * should run. {@link reachableRepoRoot} then bind-mounts the checkout at a world-traversable path
 * under /tmp (root only; unmounted when the test process exits) instead of loosening the modes of
 * the user's own directories. The mount is made once per vitest run by the global setup.
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

/** The env var through which vitest's global setup hands the reachable root to the test workers. */
export const REACHABLE_ROOT_ENV = "DOCKET_TEST_REACHABLE_ROOT";

/**
 * Find or make a root an unprivileged user can read: the checkout itself when reachable, else a
 * bind mount of it at `/tmp/docket-repo-*`. Called once per run by vitest's global setup
 * (test/support/global-setup.ts), which unmounts it at teardown.
 * @returns the root, the mount to remove afterwards (or null), or root null when neither works
 */
export function makeReachableRoot(): { root: string | null; mount: string | null } {
  if (canRead(join(repoRoot, "package.json"))) return { root: repoRoot, mount: null };
  if (process.getuid?.() !== 0) return { root: null, mount: null };
  const dir = mkdtempSync("/tmp/docket-repo-");
  chmodSync(dir, 0o755);
  if (Bun.spawnSync(["mount", "--bind", repoRoot, dir], { stdout: "ignore", stderr: "ignore" }).exitCode !== 0) {
    rmdirSync(dir);
    return { root: null, mount: null };
  }
  return { root: dir, mount: dir };
}

/** Remove a mount made by {@link makeReachableRoot}. */
export function removeReachableRoot(mount: string): void {
  Bun.spawnSync(["umount", "-l", mount]);
  try {
    rmdirSync(mount);
  } catch {
    // still busy: the lazy unmount ends when its last user leaves; an empty dir in /tmp stays
  }
}

/**
 * A path through which an unprivileged user reads this checkout (see {@link makeReachableRoot}),
 * or null when there is none (not root, or mounts are not allowed): callers skip then, saying so.
 */
export function reachableRepoRoot(): string | null {
  const handed = process.env[REACHABLE_ROOT_ENV];
  if (handed !== undefined) return handed === "" ? null : handed;
  return canRead(join(repoRoot, "package.json")) ? repoRoot : null;
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
