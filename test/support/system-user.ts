/**
 * Real unprivileged system users for tests that must run something as "not root" (backups run by
 * `docket`, a file another user cannot delete). Created with useradd, removed with userdel.
 */
import { randomBytes } from "node:crypto";
import { runCmd } from "../bundle/helpers";

/** True when this process can create users (root with useradd). */
export function canCreateUsers(): boolean {
  return process.getuid?.() === 0 && Bun.which("useradd") !== null && Bun.which("setpriv") !== null;
}

/**
 * Create a system user (and its group of the same name) with no home and no login shell.
 * @param prefix start of the name; a random suffix keeps parallel runs apart (≤ 32 characters)
 * @returns the name, uid and gid
 * @throws Error when useradd fails
 */
export function createSystemUser(prefix: string): { name: string; uid: number; gid: number } {
  const name = `${prefix}-${randomBytes(3).toString("hex")}`;
  const r = runCmd(["useradd", "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", name]);
  if (r.status !== 0) throw new Error(`useradd ${name} failed: ${r.stderr.trim()}`);
  const id = (flag: string) => Number(runCmd(["id", flag, name]).stdout.trim());
  return { name, uid: id("-u"), gid: id("-g") };
}

/** Remove a user made by {@link createSystemUser} (and its group); a missing user is fine. */
export function removeSystemUser(name: string): void {
  runCmd(["userdel", name]);
  runCmd(["groupdel", name]);
}

/** argv prefix that runs a command as `user` (setpriv keeps the environment, as systemd's User= would not need). */
export function asUser(user: { uid: number; gid: number }): string[] {
  return ["setpriv", `--reuid=${user.uid}`, `--regid=${user.gid}`, "--clear-groups", "--"];
}
