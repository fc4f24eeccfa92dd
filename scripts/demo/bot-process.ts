/**
 * Start the real bot (`bun bot/main.ts`) as a child process against a Bot API
 * emulator, the way the systemd unit does (environment only). Used by the demo
 * and the kill test.
 */
import { resolve } from "node:path";
import type { Emulator } from "../../test/emulator/index.ts";

/** Repository root (cwd of the bot process). */
export const REPO_ROOT = resolve(import.meta.dirname, "../..");

/** The environment of a bot talking to `em` with its data under `dataDir`; `extra` overrides. */
export function botEnv(em: Pick<Emulator, "token" | "apiRoot" | "mode">, dataDir: string, extra: Record<string, string> = {}): Record<string, string | undefined> {
  return {
    ...process.env,
    BOT_TOKEN: em.token,
    BOT_API_MODE: em.mode,
    BOT_API_ROOT: em.apiRoot,
    DATA_DIR: dataDir,
    HTTP_PORT: "0",
    LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
    JOURNAL_STREAM: "", // plain JSON lines, not journald prefixes
    ...extra,
  };
}

/**
 * Spawn `bun bot/main.ts` with `env`; output inherited or dropped. `--no-env-file`: the demo's
 * environment is complete, and an operator's `.env` in the checkout (README: `cp .env.example .env`)
 * must not leak into it (e.g. ALLOWED_USER_IDS would refuse the demo's chat users).
 */
export function spawnBot(env: Record<string, string | undefined>, output: "inherit" | "ignore" = "inherit"): ReturnType<typeof Bun.spawn> {
  return Bun.spawn(["bun", "--no-env-file", "bot/main.ts"], { cwd: REPO_ROOT, env, stdout: output, stderr: output }); // a pipe nobody reads could fill and block the bot
}
