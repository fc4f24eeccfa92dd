/**
 * Where the operator commands find DATA_DIR: `--data-dir`, else `$DATA_DIR` (the units load
 * docket.env), else `DATA_DIR` of the env file when it is readable (root), else the installed
 * default /var/lib/docket — the same order as scripts/restore.sh.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseEnv } from "../env-file.ts";

/** The installed default of DATA_DIR (scripts/install.sh). */
export const DEFAULT_DATA_DIR = "/var/lib/docket";

/**
 * Resolve DATA_DIR for a command.
 * @param flag the `--data-dir` value, if given
 * @param envFile docket.env (default `$DOCKET_ENV_FILE`, else /etc/docket/docket.env)
 */
export function resolveDataDir(flag?: string, envFile = process.env.DOCKET_ENV_FILE ?? "/etc/docket/docket.env"): string {
  if (flag) return resolve(flag);
  if (process.env.DATA_DIR) return resolve(process.env.DATA_DIR);
  try {
    const fromFile = parseEnv(readFileSync(envFile, "utf8")).DATA_DIR;
    if (fromFile) return resolve(fromFile);
  } catch {
    // not readable (not root) or not installed: the default below
  }
  return DEFAULT_DATA_DIR;
}
