/**
 * The file-system sandbox of `systemd/docket.service`, reproduced in a mount namespace (`unshare -m`)
 * for tests that run the bot as the unit runs it (issue 16): `ProtectSystem=strict` (the whole tree
 * read-only), `PrivateTmp=yes` (a private /tmp), and each `ReadWritePaths=` / `ReadOnlyPaths=` entry
 * as its own bind mount, read from the unit file itself, so the test follows the unit when it
 * changes. The unit's absolute paths are moved under the test's root (`/var/lib/docket/downloads` →
 * `<root>/var/lib/docket/downloads`). Separate bind mounts are what make `link()` from the Bot API
 * directory into downloads/ fail with EXDEV even as root.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../../scripts/demo/bot-process.ts";

/** The sandbox paths of the unit (absolute, as written in it; an optional `-` prefix dropped). */
export interface UnitPaths {
  readonly readWrite: readonly string[];
  readonly readOnly: readonly string[];
}

/** `ReadWritePaths=` and `ReadOnlyPaths=` of `systemd/docket.service` (every such line, in order). */
export function unitPaths(unitFile = join(REPO_ROOT, "systemd", "docket.service")): UnitPaths {
  const lines = readFileSync(unitFile, "utf8").split("\n");
  const values = (key: string) =>
    lines
      .filter((l) => l.startsWith(`${key}=`))
      .flatMap((l) => l.slice(key.length + 1).trim().split(/\s+/))
      .filter(Boolean)
      .map((p) => p.replace(/^-/, ""));
  return { readWrite: values("ReadWritePaths"), readOnly: values("ReadOnlyPaths") };
}

/** Shell-quote one word. */
function q(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/**
 * argv that runs `argv` inside a new mount namespace laid out like the unit's sandbox, with every
 * unit path moved under `root`. `stage` is an empty directory outside /tmp (e.g. under /dev/shm),
 * used to carry `root` over the private /tmp when `root` lives in /tmp.
 * @param root the test's root: the unit's `/var/lib/docket` is `<root>/var/lib/docket`
 */
export function inUnitSandbox(argv: readonly string[], root: string, stage: string, paths: UnitPaths = unitPaths()): string[] {
  const moved = (p: string) => join(root, p);
  const script = [
    "set -eu",
    // PrivateTmp=yes: a private /tmp; the test's root (under /tmp) is carried over at the same path.
    ...(root.startsWith("/tmp/")
      ? [`mount --bind ${q(root)} ${q(stage)}`, "mount -t tmpfs -o mode=1777 tmpfs /tmp", `mkdir -p ${q(root)}`, `mount --bind ${q(stage)} ${q(root)}`, `umount ${q(stage)}`]
      : []),
    // ProtectSystem=strict: everything read-only (the carried-over root is a mount of its own).
    "mount -o remount,bind,ro /",
    ...(root.startsWith("/tmp/") ? [`mount -o remount,bind,ro ${q(root)}`] : []),
    // The ReadWritePaths= must exist (the caller lays them out, as disk-layout.sh does); a missing one stops here.
    ...paths.readWrite.flatMap((p) => [`mount --bind ${q(moved(p))} ${q(moved(p))}`, `mount -o remount,bind,rw ${q(moved(p))}`]),
    // ReadOnlyPaths=-…: skipped when missing, like systemd's "-" prefix.
    ...paths.readOnly.flatMap((p) => [`if [ -e ${q(moved(p))} ]; then mount --bind ${q(moved(p))} ${q(moved(p))}; mount -o remount,bind,ro ${q(moved(p))}; fi`]),
    'exec "$@"',
  ].join("\n");
  return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", ...argv];
}
