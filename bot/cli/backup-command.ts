/**
 * `docket backup verify`: the restore drill (bot/backup/verify.ts). Prints one verdict line and
 * records it in the status file; exit 0 when the latest backup restored and checked out, 1 when
 * not (the line says why; the admins get `verify_failed`), 2 on bad usage.
 *
 *   docket backup verify [--from local|restic] [--data-dir DIR] [--keep] [--root DIR]
 */
import { writeSync } from "node:fs";
import { verifyLatestBackup } from "../backup/verify.ts";
import { parseOptions, usageError, type Command } from "./command.ts";
import { resolveDataDir } from "./data-dir.ts";
import { parseEnv } from "../env-file.ts";
import { readFileSync } from "node:fs";

/** BACKUP_DIR from the environment, else from docket.env when readable. */
function backupDirFromEnv(envFile: string): string | undefined {
  if (process.env.BACKUP_DIR) return process.env.BACKUP_DIR;
  try {
    return parseEnv(readFileSync(envFile, "utf8")).BACKUP_DIR || undefined;
  } catch {
    return undefined;
  }
}

/** `docket backup …` */
export const backupCommand: Command = {
  usage: "docket backup verify [--from local|restic] [--data-dir DIR] [--keep] [--root DIR]",
  async run(argv) {
    const parsed = parseOptions(argv, {
      from: { type: "string" },
      "data-dir": { type: "string" },
      keep: { type: "boolean", default: false },
      root: { type: "string", default: "" },
    });
    if (typeof parsed === "string") return usageError(this, parsed);
    const { values: v, positionals } = parsed;
    if (positionals.length !== 1 || positionals[0] !== "verify") return usageError(this);
    if (v.from !== undefined && v.from !== "local" && v.from !== "restic") return usageError(this, `--from must be local or restic, not ${JSON.stringify(v.from)}`);
    const root = v.root!.replace(/\/+$/, "");
    const envFile = `${root}${process.env.DOCKET_ENV_FILE ?? "/etc/docket/docket.env"}`;
    const dataDir = v["data-dir"] ?? (root ? resolveDataDirIn(envFile) : resolveDataDir(undefined, envFile));
    const backupDir = backupDirFromEnv(envFile);
    try {
      const verdict = await verifyLatestBackup({
        dataDir,
        root,
        keep: v.keep,
        ...(v.from ? { from: v.from as "local" | "restic" } : {}),
        ...(backupDir ? { backupDir } : {}),
      });
      return verdict.ok ? 0 : 1;
    } catch (err) {
      writeSync(2, `docket backup verify: cannot record the result: ${(err as Error).message}\n`);
      return 1;
    }
  },
};

/** DATA_DIR of a throwaway root's docket.env (paths inside the root), default /var/lib/docket. */
function resolveDataDirIn(envFile: string): string {
  try {
    return parseEnv(readFileSync(envFile, "utf8")).DATA_DIR || "/var/lib/docket";
  } catch {
    return "/var/lib/docket";
  }
}
