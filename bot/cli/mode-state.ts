/**
 * The record `docket mode` keeps of the bot's Telegram sessions (./mode-windows.ts ModeState): when
 * it logged the bot out of the cloud and when it launched the bot on a local server. It lives next
 * to docket.env (`/etc/docket/mode-state.json`, mode 0644, nothing secret) because it belongs to
 * the bot's token, and moves with /etc/docket when the bot moves to another host.
 */
import { chmodSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import * as z from "zod";
import type { ModeState } from "./mode-windows.ts";

const entry = z.object({ at: z.number(), root: z.string() });
const stateSchema = z.object({ logOut: entry.optional(), launch: entry.optional() });

/** Default path of the record: `mode-state.json` in the env file's directory. */
export function modeStatePath(envFile: string): string {
  return join(dirname(envFile), "mode-state.json");
}

/** Read the record; missing or unreadable gives `{}` (nothing known: no window is assumed). */
export function readModeState(path: string): ModeState {
  try {
    const parsed = stateSchema.safeParse(JSON.parse(readFileSync(path, "utf8")));
    return parsed.success ? parsed.data : {};
  } catch {
    return {};
  }
}

/** Write the record atomically (temp file + rename, mode 0644). @throws on I/O errors */
export function writeModeState(path: string, state: ModeState): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, `${JSON.stringify(state)}\n`, { mode: 0o644 });
  chmodSync(tmp, 0o644);
  renameSync(tmp, path);
}
