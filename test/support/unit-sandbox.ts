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
 * used to carry `root` and `carry` over the private /tmp when they live in /tmp.
 * @param root the test's root: the unit's `/var/lib/docket` is `<root>/var/lib/docket`
 * @param carry more paths the process needs that may live in /tmp (read-only inside)
 */
export function inUnitSandbox(argv: readonly string[], root: string, stage: string, carry: readonly string[] = [], paths: UnitPaths = unitPaths()): string[] {
  const moved = (p: string) => join(root, p);
  // Under /tmp: the test's root, and e.g. the bind mount through which the bot's user reads the checkout.
  const kept = [root, ...carry].filter((p) => p.startsWith("/tmp/"));
  const script = [
    "set -eu",
    // PrivateTmp=yes: a private /tmp; what the test keeps under /tmp is carried over at the same paths.
    ...(kept.length
      ? [
          ...kept.flatMap((p, i) => [`mkdir -p ${q(`${stage}/${i}`)}`, `mount --bind ${q(p)} ${q(`${stage}/${i}`)}`]),
          "mount -t tmpfs -o mode=1777 tmpfs /tmp",
          ...kept.flatMap((p, i) => [`mkdir -p ${q(p)}`, `mount --bind ${q(`${stage}/${i}`)} ${q(p)}`, `umount ${q(`${stage}/${i}`)}`]),
        ]
      : []),
    // ProtectSystem=strict: everything read-only (each carried-over path is a mount of its own).
    "mount -o remount,bind,ro /",
    ...kept.map((p) => `mount -o remount,bind,ro ${q(p)}`),
    // The ReadWritePaths= must exist (the caller lays them out, as disk-layout.sh does); a missing one stops here.
    ...paths.readWrite.flatMap((p) => [`mount --bind ${q(moved(p))} ${q(moved(p))}`, `mount -o remount,bind,rw ${q(moved(p))}`]),
    // ReadOnlyPaths=-…: skipped when missing, like systemd's "-" prefix.
    ...paths.readOnly.flatMap((p) => [`if [ -e ${q(moved(p))} ]; then mount --bind ${q(moved(p))} ${q(moved(p))}; mount -o remount,bind,ro ${q(moved(p))}; fi`]),
    'exec "$@"',
  ].join("\n");
  return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", ...argv];
}
