/**
 * The bot's configuration as an operator command sees it (`docket notify`, `docket status`): the
 * environment first (a unit that loads docket.env, the backup service), filled from the env file
 * when it is readable (root, e.g. the OnFailure= hook). Read before a command drops root, because
 * the env file is root's alone (0600).
 */
import { readFileSync } from "node:fs";
import { ConfigError, loadConfig, type Config } from "../config.ts";
import { parseEnv } from "../env-file.ts";

/** The default env file (scripts/install.sh). */
export const DEFAULT_ENV_FILE = "/etc/docket/docket.env";

/**
 * Load the bot's configuration.
 * @param envFile the env file (default `$DOCKET_ENV_FILE`, else /etc/docket/docket.env)
 * @returns the config, or why there is none (one sentence naming the variable or the file)
 */
export function botConfig(envFile = process.env.DOCKET_ENV_FILE ?? DEFAULT_ENV_FILE): { readonly config: Config } | { readonly problem: string } {
  let fromFile: Record<string, string> = {};
  let fileProblem = "";
  try {
    fromFile = parseEnv(readFileSync(envFile, "utf8"));
  } catch (err) {
    fileProblem = ` (${envFile}: ${(err as NodeJS.ErrnoException).code === "EACCES" ? "not readable: run as root" : (err as Error).message})`;
  }
  try {
    return { config: loadConfig({ ...fromFile, ...process.env }) };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { problem: `${err.problems.join("; ")}${fileProblem}` };
  }
}
