/**
 * Small formatting helpers for chat text: megabytes, UTC times, safe display names.
 */
import { cutChars, stripUnsafeChars } from "../../processors/naming.ts";

const MB = 1024 * 1024;

/**
 * Bytes → MB (binary) rounded to at most one decimal (e.g. `25`, `20`, `0.4`). A number, not a
 * string, so Fluent prints it by the chat's locale: `3,3 МБ` in Russian, `3.3 MB` in English.
 */
export function mb(bytes: number): number {
  const v = bytes / MB;
  if (bytes > 0 && v < 0.1) return 0.1; // never claim a non-empty file is 0 MB
  if (v >= 10) return Math.round(v);
  return Math.round(v * 10) / 10;
}

/** Bytes as a short size for chat text: `4 KB` under 1 MB (at least 1 for a non-empty size, `0 KB` for none), else `12.5 MB` (binary units); `n` is a number for Fluent. */
export function sizeParts(bytes: number): { key: "size-kb" | "size-mb"; n: number } {
  if (bytes < MB) return { key: "size-kb", n: bytes === 0 ? 0 : Math.max(1, Math.ceil(bytes / 1024)) };
  return { key: "size-mb", n: mb(bytes) };
}

/** Epoch ms or ISO → `YYYY-MM-DD HH:MM` in UTC. */
export function utcMinute(time: number | string): string {
  const d = new Date(time);
  return d.toISOString().slice(0, 16).replace("T", " ");
}

/**
 * A display name for a job: the declared name with control characters removed
 * and cut to 64 characters, or a generated `file-<job>` (never used in a path).
 */
export function displayName(declaredName: string | null | undefined, jobId: number, source: string): string {
  const cleaned = stripUnsafeChars(declaredName ?? "").trim();
  if (cleaned) return Array.from(cleaned).length > 64 ? `${cutChars(cleaned, 61)}…` : cleaned;
  return source === "photo" ? `photo-${jobId}.jpg` : `file-${jobId}`;
}
