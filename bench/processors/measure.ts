/**
 * Measuring helpers of bench/processors: a whole process under GNU time (wall clock and peak
 * RSS), a job through a warm pool child, the machine's load average, and markdown cells.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { JobLimits, JobType, JobTypes, ProcessorPool } from "../../processors/pool/index.ts";

/** GNU time, for a process's peak RSS. */
export const TIME = "/usr/bin/time";

/** One measured process run: wall ms and peak RSS in MB (GNU time -v). */
export function measureProcess(cmd: readonly string[], scratch: string): { ms: number; rssMb: number } {
  // The report goes to a file (-o): reading it from a stderr pipe came back cut short under Bun.spawnSync.
  const report = join(scratch, "time.txt");
  const t0 = performance.now();
  const p = Bun.spawnSync([TIME, "-v", "-o", report, ...cmd], { stdout: "ignore", stderr: "pipe" });
  const ms = performance.now() - t0; // GNU time's own wall clock has 10 ms resolution
  const err = readFileSync(report, "utf8");
  if (p.exitCode !== 0) throw new Error(`${cmd.join(" ")} failed (${p.exitCode}): ${p.stderr.toString().slice(-500)} ${err.slice(-300)}`);
  const rssKb = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(err)![1]);
  return { ms, rssMb: rssKb / 1024 };
}

/** Limits of a bench job: the product's defaults (PROCESS_TIMEOUT 120 s, PROCESS_MEMORY_MB 1024). */
export const BENCH_LIMITS = { timeoutMs: 120_000, memoryMb: 1024 } as const satisfies JobLimits;

/** One job through a warm child, timed from the call to the reply (what the pipeline's `processed` line measures), ms. */
export async function timeJob<K extends JobType>(pool: ProcessorPool, type: K, payload: JobTypes[K]["payload"]): Promise<number> {
  const t0 = performance.now();
  await pool.run(type, payload, BENCH_LIMITS);
  return performance.now() - t0;
}

/** Start the pool's children and wait until every one is warm and idle. */
export async function warmUp(pool: ProcessorPool): Promise<void> {
  pool.warm();
  while (pool.snapshot().filter((c) => c.state === "idle").length < pool.settings.size) await Bun.sleep(20);
}

/** Wait until every child has reported `idle` after its last job. */
export async function settled(pool: ProcessorPool): Promise<void> {
  while (pool.snapshot().some((c) => c.state !== "idle")) await Bun.sleep(10);
}

/** The 1-, 5- and 15-minute load averages, as printed next to the numbers. */
export function load(): string {
  return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
}

/** CPU time (user + system) of a process so far, ms; 0 when it is gone. */
export function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return 0;
  }
}

/** Busy and total jiffies of the whole machine (/proc/stat `cpu` line). */
export function machineJiffies(): { busy: number; total: number } {
  const f = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = f[3]! + f[4]!; // idle + iowait
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

/** A number for a table cell with `d` decimals. */
export const fmt = (n: number, d = 0): string => (Number.isFinite(n) ? n.toFixed(d) : "n/a");
