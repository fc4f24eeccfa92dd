/**
 * Reading and rewriting an env file (`/etc/docket/docket.env`) in place: known
 * keys are replaced on their line, new keys appended; comments, order and other
 * lines are kept. Written atomically (temp file + rename) with mode 0600. Below the CLI (its commands)
 * and bot/backup (the restore check reads restic.env and a backup's MANIFEST), which both use it.
 */
import { chmodSync, readFileSync, renameSync, writeFileSync } from "node:fs";

/** Parse `KEY=value` lines (quotes stripped; comments and blanks ignored). */
export function parseEnv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!m) continue;
    let v = m[2]!;
    if ((v.startsWith('"') && v.endsWith('"')) || (v.startsWith("'") && v.endsWith("'"))) v = v.slice(1, -1);
    out[m[1]!] = v;
  }
  return out;
}

/** Return `text` with `changes` applied (replace in place or append). */
export function applyEnv(text: string, changes: Record<string, string>): string {
  const seen = new Set<string>();
  const lines = text.split("\n").map((line) => {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=/.exec(line);
    if (m && m[1]! in changes) {
      seen.add(m[1]!);
      return `${m[1]}=${changes[m[1]!]}`;
    }
    return line;
  });
  const missing = Object.keys(changes).filter((k) => !seen.has(k));
  if (missing.length && lines.at(-1) === "") lines.pop();
  for (const k of missing) lines.push(`${k}=${changes[k]}`);
  return lines.join("\n") + (lines.at(-1) === "" ? "" : "\n");
}

/** Read an env file. @throws when missing or unreadable */
export function readEnvFile(path: string): { text: string; values: Record<string, string> } {
  const text = readFileSync(path, "utf8");
  return { text, values: parseEnv(text) };
}

/** Atomically write `changes` into the env file at `path` (mode 0600). */
export function writeEnvFile(path: string, text: string, changes: Record<string, string>): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, applyEnv(text, changes), { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}
