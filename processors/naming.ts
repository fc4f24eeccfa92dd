/**
 * Display names for results (DESIGN.md "Local names are generated; user strings never
 * reach a path"): the declared name only shapes the `fileName` shown in Telegram;
 * files on disk get fixed names inside the attempt's workDir.
 */
import { stat } from "node:fs/promises";
import { join } from "node:path";
import type { ProcessorOptions, ProcessorOutput } from "./types.ts";

/** Longest stem kept from a declared name, characters (code points). */
const MAX_STEM = 64;

/**
 * Remove characters that make a user-supplied name misleading or unsafe to show: C0/C1
 * controls, DEL, zero-width characters and bidi controls (U+202A–U+202E, U+2066–U+2069:
 * "invoice\u202Efdp.exe" would display as "invoiceexe.pdf").
 */
export function stripUnsafeChars(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]/g, "");
}

/** Cut `text` to at most `max` characters without splitting a surrogate pair (emoji stay whole). */
export function cutChars(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : chars.slice(0, max).join("");
}

/**
 * Stem for result names: the declared name without directories and extension, with
 * control and path characters removed; `fallback` when nothing usable is left (BR-08: no file_name).
 */
export function displayStem(declaredName: string | null | undefined, fallback: string): string {
  const base = (declaredName ?? "").split(/[\\/]/).pop() ?? "";
  const dot = base.lastIndexOf(".");
  const stem = cutChars(stripUnsafeChars(dot > 0 ? base.slice(0, dot) : base).replace(/[<>:"|?*]/g, "").replace(/\s+/g, " ").trim(), MAX_STEM).trim();
  return stem.length > 0 && !/^\.+$/.test(stem) ? stem : fallback;
}

/**
 * Describe a file already written in workDir as a {@link ProcessorOutput}.
 * @param options the processor options (workDir, declaredName)
 * @param diskName fixed file name inside workDir (never user-derived)
 * @param suffix what follows the display stem, e.g. `.txt`, `-page1.jpg`
 * @param mime the output's MIME type
 * @param fallback display stem when the declared name is unusable
 */
export async function outputFile(
  options: ProcessorOptions,
  diskName: string,
  suffix: string,
  mime: string,
  fallback: string,
): Promise<ProcessorOutput> {
  const path = join(options.workDir, diskName);
  const { size } = await stat(path);
  return { path, fileName: `${displayStem(options.declaredName, fallback)}${suffix}`, mime, size };
}
