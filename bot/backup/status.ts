/**
 * The backup status file (CONTRACTS.md §1): the result of the last backup and of the last restore
 * drill (`docket backup verify`), for `/readyz`, `/metrics` and `docket status` to read.
 *
 * File: `<DATA_DIR>/backups/status.json`, mode 0640, written atomically (temp file + rename):
 *   { "backup": { "ok": bool, "at": <epoch s>, "bytes": n, "where": "local"|"restic", "error"?: str },
 *     "verify": { "ok": bool, "at": <epoch s>, "error"?: str } }
 * Writers: scripts/backup.sh (through `docket backup-status`), `docket backup verify`. Either may run as
 * root or as the `docket` user: a file written by root is given the owner of the backups directory, so
 * the bot (user `docket`) can always read it and the next run as `docket` can replace it.
 */
import { chmodSync, chownSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as z from "zod";

/** Result of the last backup run. `at` is Unix seconds; `bytes` the size of what was written. */
export interface BackupRunStatus {
  readonly ok: boolean;
  readonly at: number;
  readonly bytes: number;
  readonly where: "local" | "restic";
  readonly error?: string;
}

/** Result of the last restore drill (`docket backup verify`). `at` is Unix seconds. */
export interface VerifyRunStatus {
  readonly ok: boolean;
  readonly at: number;
  readonly error?: string;
}

/** The whole status file; a part that was never written is absent. */
export interface BackupStatus {
  readonly backup?: BackupRunStatus;
  readonly verify?: VerifyRunStatus;
}

const backupSchema = z.object({
  ok: z.boolean(),
  at: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
  where: z.enum(["local", "restic"]),
  error: z.string().optional(),
});
const verifySchema = z.object({ ok: z.boolean(), at: z.number().int().nonnegative(), error: z.string().optional() });

/** Longest `error` text kept (one operator line, not a log dump). */
export const MAX_ERROR_CHARS = 500;

/** Path of the status file under `dataDir`. */
export function backupStatusPath(dataDir: string): string {
  return join(dataDir, "backups", "status.json");
}

/**
 * Read the status file. A missing file gives `{}`; a part that does not have the contract's shape
 * (hand-edited, written by a future version) is left out rather than failing the reader.
 * @throws only for I/O errors other than a missing file (e.g. EACCES: the reader lacks the group)
 */
export function readBackupStatus(dataDir: string): BackupStatus {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(backupStatusPath(dataDir), "utf8"));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT" || err instanceof SyntaxError) return {};
    throw err;
  }
  const obj = (raw ?? {}) as Record<string, unknown>;
  const backup = backupSchema.safeParse(obj.backup);
  const verify = verifySchema.safeParse(obj.verify);
  return { ...(backup.success ? { backup: backup.data } : {}), ...(verify.success ? { verify: verify.data } : {}) };
}

/**
 * Replace the `backup` and/or `verify` part of the status file (the other part is kept) and
 * return the new content. The write is atomic (temp file in the same directory, then rename), mode
 * 0640; when run as root the file gets the owner and group of the backups directory.
 * @param patch the parts to replace; `error` is cut to {@link MAX_ERROR_CHARS}
 * @throws when the backups directory cannot be created or written, or a part has the wrong shape
 */
export function writeBackupStatus(dataDir: string, patch: BackupStatus): BackupStatus {
  const dir = join(dataDir, "backups");
  mkdirSync(dir, { recursive: true, mode: 0o750 });
  const cut = <T extends { error?: string }>(p: T): T => (p.error === undefined ? p : { ...p, error: p.error.slice(0, MAX_ERROR_CHARS) });
  const next: BackupStatus = {
    ...readBackupStatus(dataDir),
    ...(patch.backup ? { backup: backupSchema.parse(cut(patch.backup)) } : {}),
    ...(patch.verify ? { verify: verifySchema.parse(cut(patch.verify)) } : {}),
  };
  const file = backupStatusPath(dataDir);
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, `${JSON.stringify(next)}\n`, { mode: 0o640 });
  chmodSync(tmp, 0o640);
  if (process.getuid?.() === 0) {
    const owner = statSync(dir);
    chownSync(tmp, owner.uid, owner.gid);
  }
  renameSync(tmp, file);
  return next;
}
