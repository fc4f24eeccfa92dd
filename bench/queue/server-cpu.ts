/**
 * CPU of a PostgreSQL server's processes, read from /proc (Linux): the postmaster named in the data
 * directory's postmaster.pid and its children (backends, autovacuum, WAL writer, …). Used by the
 * PostgreSQL benchmarks (bench/queue/pg.ts, pg-diagnose.ts) to charge the server's share to each job.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

/** Clock ticks → ms (USER_HZ 100 on Linux). */
const TICK_MS = 10;

/** One server process: its pid, its title (`postgres: walwriter`, `postgres: user db host idle`, …) and its user + system CPU, ms. */
export interface ServerProcess {
  readonly pid: number;
  readonly title: string;
  readonly cpuMs: number;
}

/** Every process of the server whose data directory is `dataDir`, now (a process gone meanwhile is left out). */
export function serverProcesses(dataDir: string): ServerProcess[] {
  const postmaster = Number(readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
  const out: ServerProcess[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const pid = Number(name);
      if (pid !== postmaster && Number(f[1]) !== postmaster) continue;
      out.push({ pid, title: readFileSync(`/proc/${name}/cmdline`, "utf8").replaceAll("\0", " ").trim(), cpuMs: (Number(f[11]) + Number(f[12])) * TICK_MS });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}
