/**
 * The `botApiDir` readiness check of local mode (bot/ops/bot-api-dir-check.ts; issue 16): real
 * directories on disk; the permission cases run the check in a child process as "nobody", the way a
 * bot without the server's group sees LOCAL_BOT_API_DIR (end to end with the real bot:
 * test/e2e/local-service.test.ts).
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { botApiDirCheck } from "../../bot/ops/bot-api-dir-check.ts";
import { asUser, NOBODY, reachablePath, reachableRepoRoot } from "../support/unprivileged.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "docket-botapidir-"));
  chmodSync(dir, 0o755);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const run = (p: string) => Promise.resolve(botApiDirCheck(p).run(new AbortController().signal));
const setIt = "set LOCAL_BOT_API_DIR to the server's --dir, bind-mounted at the same absolute path in its container (DOCKET_BOT_API_DIR in compose.env), then restart docket";

/** The failing detail for nobody stopped at `where` (root's directories: group 0 is the one to add). */
const blocked = (where: string) =>
  `the bot's user (uid ${NOBODY}, groups []) may not enter ${where}; add the bot's user to group 0 (SupplementaryGroups= in docket.service; install.sh sets it up) or grant an ACL, then restart docket (docs/local-mode.md, Permissions)`;

/** The check's verdict on `p` as nobody, or null (with a printed line) when the checkout cannot be reached as nobody. */
function asNobody(p: string): { ok: boolean; detail: string } | null {
  if (reachableRepoRoot() === null) {
    console.warn("[bot-api-dir-check] skipped: the checkout is not reachable by nobody and cannot be bind-mounted (not root)");
    return null;
  }
  const r = Bun.spawnSync([...asUser(NOBODY), "bun", reachablePath("test/support/bot-api-dir-probe.ts"), p], { cwd: reachableRepoRoot()!, stderr: "pipe" });
  expect(r.exitCode, r.stderr.toString()).toBe(0);
  return JSON.parse(r.stdout.toString().trim().split("\n").pop()!);
}

describe("botApiDir: the bot's user can reach LOCAL_BOT_API_DIR", () => {
  test("a directory the bot may enter: ok", async () => {
    expect(await run(dir)).toEqual({ ok: true, detail: `the bot's user may enter ${dir}` });
  });

  test("missing, or a file: failing, naming the setting and the fix", async () => {
    expect(await run(join(dir, "bot-api"))).toEqual({ ok: false, detail: `LOCAL_BOT_API_DIR ${join(dir, "bot-api")} does not exist on this host; ${setIt}` });
    writeFileSync(join(dir, "file"), "x");
    expect(await run(join(dir, "file"))).toEqual({ ok: false, detail: `LOCAL_BOT_API_DIR ${join(dir, "file")} is not a directory; ${setIt}` });
  });

  test("as a user outside the server's group: the dir (0750) is the block, with its owner, mode and the group to add; an ACL-like grant makes it ok", () => {
    const botApi = join(dir, "bot-api");
    mkdirSync(botApi, { mode: 0o750 });
    chmodSync(botApi, 0o750);
    const out = asNobody(botApi);
    if (!out) return;
    expect(out).toEqual({ ok: false, detail: blocked(`LOCAL_BOT_API_DIR ${botApi} (owner 0:0, mode 750)`) });
    // The operator opens the way (here: the mode; an ACL works the same); the next run sees it.
    chmodSync(botApi, 0o751);
    expect(asNobody(botApi)).toEqual({ ok: true, detail: `the bot's user may enter ${botApi}` });
  });

  test("a directory above it the bot may not enter is named as the block", () => {
    const data = join(dir, "data");
    const botApi = join(data, "bot-api");
    mkdirSync(botApi, { recursive: true, mode: 0o755 });
    chmodSync(data, 0o700);
    const out = asNobody(botApi);
    if (!out) return;
    expect(out).toEqual({ ok: false, detail: blocked(`${data} (owner 0:0, mode 700) on the way to LOCAL_BOT_API_DIR ${botApi}`) });
  });
});
