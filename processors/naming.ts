/**
 * Display names for results (DESIGN.md "Local names are generated; user strings never
 * reach a path"): the declared name only shapes the `fileName` shown in Telegram;
 * files on disk get fixed names inside the attempt's workDir.
 */
import { stat } from "node:fs/promises";
import { join } from "node:path";
import type { ProcessorOptions, ProcessorOutput } from "./types.ts";

/** Longest stem kept from a declared name, characters. */
const MAX_STEM = 64;

/**
 * Stem for result names: the declared name without directories and extension, with
 * control and path characters removed; `fallback` when nothing usable is left (BR-08: no file_name).
 */
export function displayStem(declaredName: string | null | undefined, fallback: string): string {
  const base = (declaredName ?? "").split(/[\\/]/).pop() ?? "";
  const dot = base.lastIndexOf(".");
  const stem = (dot > 0 ? base.slice(0, dot) : base)
    // eslint-disable-next-line no-control-regex
    .replace(/[\x00-\x1f\x7f<>:"|?*]/g, "")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, MAX_STEM)
    .trim();
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
