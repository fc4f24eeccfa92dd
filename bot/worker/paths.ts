/**
 * The data layout (seed 000: "Организуйте каталоги по назначению"): `downloads/`
 * (`.part` files and sources), `work/` (intermediates), `results/` (kept until
 * `result_expires_at`), `db/`. Names are generated — job id plus a random part —
 * and no user string ever reaches a path.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";

/** Absolute directories under DATA_DIR. */
export interface DataPaths {
  readonly root: string;
  readonly db: string;
  readonly dbFile: string;
  readonly downloads: string;
  readonly work: string;
  readonly results: string;
}

/** Resolve (and create) the directories under `dataDir`. */
export function dataPaths(dataDir: string): DataPaths {
  const p = {
    root: dataDir,
    db: join(dataDir, "db"),
    dbFile: join(dataDir, "db", "docket.sqlite"),
    downloads: join(dataDir, "downloads"),
    work: join(dataDir, "work"),
    results: join(dataDir, "results"),
  };
  for (const d of [p.db, p.downloads, p.work, p.results]) mkdirSync(d, { recursive: true, mode: 0o750 });
  return p;
}

/** A generated name for job `jobId`: `<job>-<16 hex>`. */
export function generatedName(jobId: number): string {
  return `${jobId}-${randomBytes(8).toString("hex")}`;
}

/** The job id a generated name belongs to, or null for foreign files. */
export function jobIdOf(name: string): number | null {
  const m = /^(\d+)-[0-9a-f]{16}(?:\.part)?$/.exec(name);
  return m ? Number(m[1]) : null;
}

/** The entries of `dir` that belong to `jobId`, as full paths (none when `dir` cannot be read). */
export async function jobEntries(dir: string, jobId: number): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((n) => jobIdOf(n) === jobId).map((n) => join(dir, n));
  } catch {
    return [];
  }
}

/** Remove `entries` (files and folders; absent ones are fine). */
export async function removeEntries(entries: readonly string[]): Promise<void> {
  for (const p of entries) await rm(p, { recursive: true, force: true });
}

/** Remove every entry of `dir` that belongs to `jobId` (files and folders). Returns how many. */
export async function removeJobFiles(dir: string, jobId: number): Promise<number> {
  let n = 0;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  for (const name of names) {
    if (jobIdOf(name) !== jobId) continue;
    await rm(join(dir, name), { recursive: true, force: true });
    n++;
  }
  return n;
}
