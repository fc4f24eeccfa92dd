/**
 * Real system accounts for the tests that run docket as it runs on a host (issue 16, issue 9 item 7):
 * the local Bot API server's user (owns the server's files, 0640 / dirs 0750, like
 * `telegram-bot-api`, uid/gid 101 in the aiogram image) and the bot's user (like `docket`), which
 * reads those files only through the server's group. Created with `useradd --system` when missing
 * (root only), reused otherwise; parallel test files may race to create them, which is handled.
 */
import { join } from "node:path";
import { toolReady } from "./tools.ts";
import { canRead, reachableRepoRoot } from "./unprivileged.ts";

/** A system account: its name, uid and primary gid. */
export interface Account {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
}

/** The server's account (files and directories of the emulated local Bot API server). */
export const SERVER_ACCOUNT = "docket-t-botapi";
/** The bot's account (runs `bun bot/main.ts`). */
export const BOT_ACCOUNT = "docket-t-bot";

function lookup(name: string): Account | null {
  const r = Bun.spawnSync(["getent", "passwd", name]);
  if (r.exitCode !== 0) return null;
  const [, , uid, gid] = r.stdout.toString().trim().split(":");
  return { name, uid: Number(uid), gid: Number(gid) };
}

/**
 * The account `name`, created as a system user with its own group when it does not exist.
 * @throws Error when useradd keeps failing (not root, no shadow tools)
 */
export function ensureAccount(name: string): Account {
  for (let i = 0; i < 20; i++) {
    const found = lookup(name);
    if (found) return found;
    const r = Bun.spawnSync(["useradd", "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", name], { stderr: "pipe" });
    if (r.exitCode === 0) continue;
    // 9: created meanwhile by a parallel test file; 10: /etc/passwd locked by it. Both: look again.
    if (r.exitCode !== 9 && r.exitCode !== 10) throw new Error(`useradd ${name} failed (${r.exitCode}): ${r.stderr.toString().trim()}`);
    Bun.sleepSync(100);
  }
  throw new Error(`useradd ${name}: the account database stayed locked`);
}

/** The two accounts of a service test, and the checkout as the bot's user reads it. */
export interface ServiceAccounts {
  readonly server: Account;
  readonly bot: Account;
  /** The checkout, or a bind mount of it an unprivileged user can enter (test/support/unprivileged.ts). */
  readonly repoRoot: string;
}

/**
 * The accounts, or null after printing why the suite is skipped: it needs root (to create users
 * and switch to them with setpriv) and a path to the checkout the bot's user can read (the
 * checkout itself, or the bind mount vitest's global setup makes of a private clone).
 * @param suite the suite's name for the skip line
 */
export function serviceAccounts(suite: string): ServiceAccounts | null {
  if (process.getuid?.() !== 0) {
    console.warn(`skipped: ${suite}: needs root (creates system users and runs the bot as one of them)`);
    return null;
  }
  if (!toolReady("useradd") || !toolReady("setpriv")) return null;
  const server = ensureAccount(SERVER_ACCOUNT);
  const bot = ensureAccount(BOT_ACCOUNT);
  const root = reachableRepoRoot();
  if (root === null || !canRead(join(root, "package.json"), bot.uid, bot.gid)) {
    console.warn(`skipped: ${suite}: no path to this checkout that an unprivileged user can read (test/support/unprivileged.ts)`);
    return null;
  }
  return { server, bot, repoRoot: root };
}
