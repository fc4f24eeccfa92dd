/**
 * `docket backup-status`: the shell scripts' way to write the backup status file (CONTRACTS.md §1,
 * bot/backup/status.ts), and `show` to print it.
 *
 *   docket backup-status backup --ok|--failed --where local|restic [--bytes N] [--error TEXT]
 *   docket backup-status verify --ok|--failed [--error TEXT]
 *   docket backup-status show
 * Common: [--at EPOCH_SECONDS] (default now) [--data-dir DIR]. Exit 0 when written, 1 when the file
 * cannot be written (the sentence names it), 2 on bad usage.
 */
import { backupStatusPath, readBackupStatus, writeBackupStatus } from "../backup/status.ts";
import { parseOptions, usageError, type Command } from "./command.ts";
import { resolveDataDir } from "./data-dir.ts";

/** `docket backup-status …` */
export const backupStatusCommand: Command = {
  usage: "docket backup-status backup|verify --ok|--failed [--where local|restic] [--bytes N] [--error TEXT] [--at EPOCH_S] [--data-dir DIR] | show",
  async run(argv) {
    const parsed = parseOptions(argv, {
      ok: { type: "boolean", default: false },
      failed: { type: "boolean", default: false },
      where: { type: "string" },
      bytes: { type: "string" },
      error: { type: "string" },
      at: { type: "string" },
      "data-dir": { type: "string" },
    });
    if (typeof parsed === "string") return usageError(this, parsed);
    const { values: v, positionals } = parsed;
    const [part, ...rest] = positionals;
    if (rest.length > 0 || (part !== "backup" && part !== "verify" && part !== "show")) return usageError(this);
    const dataDir = resolveDataDir(v["data-dir"]);
    if (part === "show") {
      console.log(JSON.stringify(readBackupStatus(dataDir), null, 2));
      return 0;
    }
    if (v.ok === v.failed) return usageError(this, "give exactly one of --ok and --failed");
    const at = v.at === undefined ? Math.floor(Date.now() / 1000) : Number(v.at);
    if (!Number.isSafeInteger(at) || at < 0) return usageError(this, `--at must be Unix seconds, not ${JSON.stringify(v.at)}`);
    const error = v.error ? { error: v.error } : {};
    try {
      if (part === "backup") {
        if (v.where !== "local" && v.where !== "restic") return usageError(this, "backup needs --where local|restic");
        const bytes = Number(v.bytes ?? 0);
        if (!Number.isSafeInteger(bytes) || bytes < 0) return usageError(this, `--bytes must be a byte count, not ${JSON.stringify(v.bytes)}`);
        writeBackupStatus(dataDir, { backup: { ok: v.ok, at, bytes, where: v.where, ...error } });
      } else {
        writeBackupStatus(dataDir, { verify: { ok: v.ok, at, ...error } });
      }
      return 0;
    } catch (err) {
      console.error(`docket backup-status: cannot write ${backupStatusPath(dataDir)}: ${(err as Error).message}`);
      return 1;
    }
  },
};
