/**
 * Resident memory of a processing child and everything it started (a tool like Tesseract is a
 * grandchild), read from /proc. Address-space rlimits are not usable under Bun (JSC reserves
 * tens of GB of virtual memory at start), and cgroups need systemd delegation; the unit's
 * MemoryMax stays the outer backstop.
 */
import { readFile, readdir } from "node:fs/promises";

/** A `kB` field of /proc/<pid>/status in bytes, or null when the process has exited. */
async function statusBytes(pid: number, field: "VmRSS" | "VmHWM"): Promise<number | null> {
  try {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const kb = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m").exec(status)?.[1];
    return kb ? Number(kb) * 1024 : null;
  } catch {
    return null;
  }
}

/** Resident set size of one process in bytes (VmRSS), or null when it has exited. */
export function residentBytes(pid: number): Promise<number | null> {
  return statusBytes(pid, "VmRSS");
}

/** Peak resident set size of one process over its life in bytes (VmHWM), or null when it has exited. */
export function peakResidentBytes(pid: number): Promise<number | null> {
  return statusBytes(pid, "VmHWM");
}

/** Direct children of a process, from every thread's `children` list (Linux ≥ 3.5). */
async function childrenOf(pid: number): Promise<number[]> {
  let tasks: string[];
  try {
    tasks = await readdir(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const lists = await Promise.all(tasks.map((tid) => readFile(`/proc/${pid}/task/${tid}/children`, "utf8").catch(() => "")));
  return lists.flatMap((l) => l.split(" ").filter(Boolean).map(Number));
}

/**
 * Resident set of a process plus all its descendants, bytes; null when the process itself has
 * exited. Pages shared between them count once per process (an upper bound, as the cap wants).
 */
export async function treeResidentBytes(pid: number): Promise<number | null> {
  const own = await residentBytes(pid);
  if (own === null) return null;
  let total = own;
  const queue = await childrenOf(pid);
  for (let next = queue.shift(), seen = 0; next !== undefined && seen < 1000; next = queue.shift(), seen++) {
    total += (await residentBytes(next)) ?? 0;
    queue.push(...(await childrenOf(next)));
  }
  return total;
}
