/**
 * Operator commands run as root (the OnFailure= hook, an operator's shell) must not leave root-owned
 * files where the bot (user `docket`) writes: SQLite creates `-wal` and `-shm` beside the database
 * when none exist, and a root-owned `-wal` would make the bot's database read-only for it.
 */
import { statSync } from "node:fs";

/**
 * When root, become the owner of `path` — its uid and gid, no other groups — for the rest of the
 * process. No-op when not root or when root owns it.
 * @throws when `path` cannot be stat'ed or the switch is refused
 */
export function becomeOwnerOf(path: string): void {
  if (process.getuid?.() !== 0) return;
  const s = statSync(path);
  if (s.uid === 0) return;
  process.setgroups?.([s.gid]);
  process.setgid?.(s.gid);
  process.setuid?.(s.uid);
}
