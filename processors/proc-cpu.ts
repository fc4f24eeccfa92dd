/**
 * CPU time of another process and everything it started, read from Linux's `/proc` (proc(5)): for each
 * process of the tree `/proc/<pid>/stat` fields 14–17 — `utime`, `stime` (its own threads) and
 * `cutime`, `cstime` (its children it has already waited for) — in clock ticks, and its children from
 * `/proc/<pid>/task/<tid>/children`. Used for the time budget of a tool docket runs (Tesseract:
 * processors/ocr/run-budget.ts), which `process.cpuUsage()` of the processor child does not see.
 */
import { readdirSync, readFileSync } from "node:fs";

/** Clock ticks per second of `/proc`'s times (`getconf CLK_TCK`, read once; USER_HZ, 100 on x86 and arm64). */
let ticksPerSecond: number | undefined;

/** {@link ticksPerSecond}, asked for once. */
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    const out = Bun.spawnSync(["getconf", "CLK_TCK"], { stdout: "pipe", stderr: "ignore", env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } });
    const n = Number(out.stdout.toString().trim());
    ticksPerSecond = out.exitCode === 0 && Number.isInteger(n) && n > 0 ? n : 100;
  }
  return ticksPerSecond;
}

/**
 * One process's `utime + stime + cutime + cstime`, clock ticks; null when it is gone. The command name
 * (field 2) is in parentheses and may hold spaces or `)`: the fields are counted after the last `)`.
 */
function ownTicks(pid: number): number | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" "); // f[0] is field 3 (state)
  return Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
}

/** The children of every thread of `pid` (empty when it is gone). */
function childrenOf(pid: number): number[] {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  return tids.flatMap((tid) => {
    try {
      return readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").split(" ").filter(Boolean).map(Number);
    } catch {
      return [];
    }
  });
}

/**
 * CPU time (user + system) `pid` and its descendants have used, ms: the living ones' own times plus
 * what they have reaped of theirs, so a child that already exited still counts (in its parent's
 * `cutime`/`cstime`) and none counts twice.
 * @returns null when `pid` is gone or `/proc` cannot be read (not Linux): the caller falls back to wall time
 */
export function treeCpuMs(pid: number): number | null {
  const root = ownTicks(pid);
  if (root === null) return null;
  let ticks = root;
  const seen = new Set([pid]);
  const queue = childrenOf(pid);
  while (queue.length > 0) {
    const p = queue.shift()!;
    if (seen.has(p)) continue;
    seen.add(p);
    ticks += ownTicks(p) ?? 0; // exited meanwhile: its time is its parent's cutime once reaped
    queue.push(...childrenOf(p));
  }
  return (ticks * 1000) / clockTicks();
}

/** Whether this machine's `/proc` gives CPU times (Linux): this process's own tree read once. */
let readable: boolean | undefined;

/** {@link treeCpuMs} works here (checked once, on this process). */
export function canReadProcCpu(): boolean {
  readable ??= treeCpuMs(process.pid) !== null;
  return readable;
}
