/**
 * `botApiDir` (local mode only, `/readyz`): the bot's user can reach LOCAL_BOT_API_DIR, the local Bot
 * API server's `--dir`, where every local-mode source is read in place (issue 16). Without it every
 * local job ends `file_not_readable`; this check says so before the first user sends a file, with the
 * cause and the fix in one line (the readiness monitor writes it once to the journal, and once more
 * when it is ok again):
 * - the directory does not exist on this host: LOCAL_BOT_API_DIR is not the server's `--dir` as the host
 *   sees it;
 * - a directory on the way (the dir itself, 0750 `docket-botapi`, or one above it) that the bot's user
 *   may not enter: its owner, mode and the group to add (docs/local-mode.md, Permissions);
 * - a call past its deadline: a hung mount.
 * An ACL granted meanwhile is seen at the next run (cached 60 s); a new supplementary group needs a
 * restart of docket, as the line says.
 */
import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { FsDeadlineError, withDeadline } from "../fetch/deadline.ts";
import { findAccessBlock } from "../fetch/in-place.ts";
import type { CheckSpec } from "./check.ts";

/** Deadline of each filesystem call of the check, ms. */
export const BOT_API_DIR_CALL_MS = 3000;

function errno(err: unknown): string | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === "string" ? code : undefined;
}

/**
 * The `botApiDir` readiness check.
 * @param dir LOCAL_BOT_API_DIR (absolute)
 * @param callMs deadline of each filesystem call, ms
 */
export function botApiDirCheck(dir: string, callMs = BOT_API_DIR_CALL_MS): CheckSpec {
  const setIt = "set LOCAL_BOT_API_DIR to the server's --dir, bind-mounted at the same absolute path in its container (DOCKET_BOT_API_DIR in compose.env), then restart docket";
  return {
    name: "botApiDir",
    ttlMs: 60_000,
    // Up to one walk from / down to the dir, each call with its own deadline; the check's own deadline is a backstop.
    deadlineMs: callMs * 2 + 500,
    async run(signal) {
      try {
        const s = await withDeadline(stat(dir), callMs, `stat ${dir}`, signal);
        if (!s.isDirectory()) return { ok: false, detail: `LOCAL_BOT_API_DIR ${dir} is not a directory; ${setIt}` };
        await withDeadline(access(dir, constants.X_OK), callMs, `access ${dir}`, signal);
        return { ok: true, detail: `the bot's user may enter ${dir}` };
      } catch (err) {
        if (err instanceof FsDeadlineError) return { ok: false, detail: `${err.message}: is LOCAL_BOT_API_DIR on a hung or slow mount?` };
        const code = errno(err);
        if (code === "ENOENT" || code === "ENOTDIR") return { ok: false, detail: `LOCAL_BOT_API_DIR ${dir} does not exist on this host; ${setIt}` };
        if (code !== "EACCES" && code !== "EPERM") throw err;
        const who = `uid ${process.getuid?.()}, groups [${(process.getgroups?.() ?? []).join(", ")}]`;
        const block = await findAccessBlock("/", dir, callMs, { lastIsFile: false }).catch(() => null);
        if (!block) return { ok: false, detail: `the bot's user (${who}) may not enter LOCAL_BOT_API_DIR ${dir} (${code}); give it the server's group or an ACL, then restart docket (docs/local-mode.md, Permissions)` };
        const owner = `(owner ${block.uid}:${block.gid}, mode ${block.mode})`;
        const where = block.at === dir ? `LOCAL_BOT_API_DIR ${dir} ${owner}` : `${block.at} ${owner} on the way to LOCAL_BOT_API_DIR ${dir}`;
        return {
          ok: false,
          detail: `the bot's user (${who}) may not enter ${where}; add the bot's user to group ${block.gid} (SupplementaryGroups= in docket.service; install.sh sets it up) or grant an ACL, then restart docket (docs/local-mode.md, Permissions)`,
        };
      }
    },
  };
}
