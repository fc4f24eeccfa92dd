/**
 * What runs (issue 10 item 2: `docket_build_info{version,commit,mode,store}`; `docket status`):
 * the version from package.json and the commit — the git commit of a checkout, else the content
 * hash of an installed release (`/opt/docket/releases/<version>-<hash>`, scripts/install.sh), else
 * `unknown`. Read once at start, without spawning git.
 */
import { readFileSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";

/** The repository (or release) root: two levels above this file. */
const ROOT = resolve(import.meta.dirname, "../..");

/** Version and commit of the running code. */
export interface BuildInfo {
  readonly version: string;
  readonly commit: string;
}

/** The git commit (12 hex) of the checkout at `root`, or null (not a checkout, unreadable). */
function gitCommit(root: string): string | null {
  try {
    let gitDir = join(root, ".git");
    if (statSync(gitDir).isFile()) {
      // A worktree: ".git" names the real git dir.
      const m = /^gitdir: (.+)$/m.exec(readFileSync(gitDir, "utf8"));
      if (!m) return null;
      gitDir = resolve(root, m[1]!.trim());
    }
    const head = readFileSync(join(gitDir, "HEAD"), "utf8").trim();
    const ref = /^ref: (.+)$/.exec(head)?.[1];
    if (!ref) return /^[0-9a-f]{40}$/.test(head) ? head.slice(0, 12) : null;
    const common = (() => {
      try {
        return resolve(gitDir, readFileSync(join(gitDir, "commondir"), "utf8").trim());
      } catch {
        return gitDir;
      }
    })();
    for (const dir of [gitDir, common]) {
      try {
        const sha = readFileSync(join(dir, ref), "utf8").trim();
        if (/^[0-9a-f]{40}$/.test(sha)) return sha.slice(0, 12);
      } catch {
        // not a loose ref here
      }
    }
    const packed = readFileSync(join(common, "packed-refs"), "utf8");
    const line = packed.split("\n").find((l) => l.endsWith(` ${ref}`));
    return line ? line.slice(0, 12) : null;
  } catch {
    return null;
  }
}

/** The content hash of an installed release directory `<version>-<hash>`, or null. */
function releaseHash(root: string, version: string): string | null {
  let dir: string;
  try {
    dir = realpathSync(root);
  } catch {
    return null;
  }
  const name = basename(dir);
  if (basename(dirname(dir)) !== "releases" || !name.startsWith(`${version}-`)) return null;
  return name.slice(version.length + 1) || null;
}

/** Version and commit of the code at `root` (default: this checkout or release). */
export function buildInfo(root = ROOT): BuildInfo {
  let version = "unknown";
  try {
    version = String((JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version?: unknown }).version ?? "unknown");
  } catch {
    // no package.json: unknown
  }
  return { version, commit: gitCommit(root) ?? releaseHash(root, version) ?? "unknown" };
}
