/**
 * bench/queue/pg.ts — docket's PostgreSQL store next to pg-boss and graphile-worker on the same
 * PostgreSQL server, with docket's SQLite store as the reference (issue 14 item 8):
 *
 *   bun bench/queue/pg.ts            # 2000 jobs, 1/2/4 worker processes, 3 interleaved runs
 *   bun bench/queue/pg.ts --quick    # 300 jobs, 1 run (a smoke check of the script)
 *   bun bench/queue/pg.ts --only docket-pg,graphile-worker --workers 1 --runs 7   # one pair, one count
 *
 * Each run: a fresh database (or SQLite file), JOBS jobs enqueued one by one by the parent (timed),
 * then N worker processes, one loop each, drain the queue (timed from "go" to the last "done").
 * CPU per job = the workers' own user+system CPU during the drain, and separately the PostgreSQL
 * server's (every backend of the server, /proc utime+stime), divided by JOBS. The server is started
 * by the benchmark (Debian's postgresql, throwaway directory, fsync off as in the tests) and stopped
 * after. Nothing is asserted: numbers are printed as a markdown table (stdout), progress on stderr.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { startPgServer, type PgServer } from "../../test/support/pg-server.ts";
import { openBenchQueue, type PgImpl } from "./pg-impls.ts";
import { serverProcesses } from "./server-cpu.ts";
import { median, rate } from "./stats.ts";

const quick = process.argv.includes("--quick");
const JOBS = quick ? 300 : 2000;
const runsArg = process.argv.indexOf("--runs");
const RUNS = runsArg > 0 ? Math.max(1, Number(process.argv[runsArg + 1]) || 3) : quick ? 1 : 3;
const CHATS = 500;
const onlyArg = process.argv.indexOf("--only");
const ALL: PgImpl[] = ["docket-pg", "pg-boss", "graphile-worker", "docket-sqlite"];
/** `--only docket-pg,pg-boss`: a subset (a ratio needs its peer in the same run). */
const IMPLS: PgImpl[] = onlyArg > 0 ? ALL.filter((i) => (process.argv[onlyArg + 1] ?? "").split(",").includes(i)) : ALL;
const workersArg = process.argv.indexOf("--workers");
/** `--workers 1` or `--workers 1,4`: only those worker counts (default 1, 2 and 4). */
const WORKERS = workersArg > 0 ? (process.argv[workersArg + 1] ?? "").split(",").map(Number).filter((n) => Number.isInteger(n) && n > 0) : [1, 2, 4];
const WORKER = new URL("./pg-worker.ts", import.meta.url).pathname;
/** CPU ms of every process of the server (postmaster and its children), by pid. */
const serverCpu = (server: PgServer): Map<number, number> => new Map(serverProcesses(server.dataDir).map((p) => [p.pid, p.cpuMs]));

/** Server CPU used between two samples, ms (a process new since `before` counts whole). */
const cpuBetween = (before: Map<number, number>, after: Map<number, number>) => [...after].reduce((s, [pid, ms]) => s + ms - (before.get(pid) ?? 0), 0);

interface Run {
  enqueue: number;
  drain: number;
  /** Enqueue and drain of the run together (jobs / (enqueue time + drain time)). */
  total: number;
  workerCpuPerJob: number;
  serverCpuPerJob: number;
}

async function runOnce(server: PgServer, impl: PgImpl, workers: number): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), "docket-bench-pg-"));
  const db = impl === "docket-sqlite" ? null : await server.createDatabase("bench");
  const target = db ? server.url(db) : join(dir, "queue.sqlite");
  try {
    const q = await openBenchQueue(impl, target, true);
    const t0 = performance.now();
    for (let i = 0; i < JOBS; i++) await q.enqueue(i, CHATS);
    const enqueueMs = performance.now() - t0;
    await q.close();
    let ready = 0;
    let allReady!: () => void;
    const readyP = new Promise<void>((r) => (allReady = r));
    const dones: Promise<{ done: number; cpuMs: number }>[] = [];
    const children = Array.from({ length: workers }, (_, k) => {
      let resolve!: (v: { done: number; cpuMs: number }) => void;
      dones.push(new Promise((r) => (resolve = r)));
      return Bun.spawn([process.execPath, WORKER, impl, `bench/w${k}`], {
        env: { ...process.env, BENCH_TARGET: target },
        stdout: "inherit",
        stderr: "inherit",
        ipc(m: { ready?: boolean; done?: number; cpuMs?: number }) {
          if (m.ready && ++ready === workers) allReady();
          if (m.done !== undefined) resolve({ done: m.done, cpuMs: m.cpuMs ?? 0 });
        },
      });
    });
    await readyP;
    const before = serverCpu(server);
    const t1 = performance.now();
    for (const c of children) c.send({ go: true });
    const results = await Promise.all(dones);
    const drainMs = performance.now() - t1;
    const after = serverCpu(server);
    for (const c of children) c.send({ exit: true });
    await Promise.all(children.map((c) => c.exited));
    const completed = results.reduce((s, r) => s + r.done, 0);
    if (completed !== JOBS) throw new Error(`${impl} × ${workers}: completed ${completed} of ${JOBS}`);
    return {
      enqueue: JOBS / (enqueueMs / 1000),
      drain: JOBS / (drainMs / 1000),
      total: JOBS / ((enqueueMs + drainMs) / 1000),
      workerCpuPerJob: results.reduce((s, r) => s + r.cpuMs, 0) / JOBS,
      serverCpuPerJob: impl === "docket-sqlite" ? 0 : cpuBetween(before, after) / JOBS,
    };
  } finally {
    if (db) await server.dropDatabase(db).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

const server = await startPgServer();
const started = performance.now();
const load0 = loadavg();
try {
  const per = new Map<string, Run[]>();
  // Warm-up (discarded): JIT, page cache, each library's schema creation path.
  for (const impl of IMPLS) await runOnce(server, impl, 1);
  for (let r = 0; r < RUNS; r++) {
    for (const workers of WORKERS) {
      for (const impl of IMPLS) {
        const run = await runOnce(server, impl, workers);
        const key = `${impl}|${workers}`;
        per.set(key, [...(per.get(key) ?? []), run]);
        console.error(`run ${r + 1}/${RUNS} ${impl} × ${workers}: enqueue ${rate(run.enqueue)}/s, drain ${rate(run.drain)}/s, both ${rate(run.total)}/s, CPU/job worker ${run.workerCpuPerJob.toFixed(2)} ms, server ${run.serverCpuPerJob.toFixed(2)} ms`);
      }
    }
  }
  const wall = (performance.now() - started) / 1000;
  const version = async (name: string) => ((await import(`${name}/package.json`, { with: { type: "json" } })) as { default: { version: string } }).default.version;
  const pgVersion = readFileSync(join(server.dataDir, "PG_VERSION"), "utf8").trim();
  console.log(`\n# bench/queue/pg.ts — ${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), load ${load0.map((x) => x.toFixed(1)).join(" ")} at start, ${loadavg().map((x) => x.toFixed(1)).join(" ")} at end; Bun ${Bun.version}, PostgreSQL ${pgVersion}, pg-boss ${await version("pg-boss")}, graphile-worker ${await version("graphile-worker")}, postgres.js ${await version("postgres")}; wall ${wall.toFixed(0)} s\n`);
  console.log(`${JOBS} jobs per run, medians of ${RUNS} interleaved runs; jobs/s; CPU ms per job (workers' own, and the PostgreSQL server's)\n`);
  console.log("| workers | queue | enqueue | claim → complete (drain) | enqueue + drain | CPU/job workers | CPU/job server | drain vs pg-boss | drain vs graphile-worker | enqueue + drain vs pg-boss | vs graphile-worker |");
  console.log("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const workers of WORKERS) {
    const med = (impl: PgImpl, f: keyof Run) => median((per.get(`${impl}|${workers}`) ?? []).map((x) => x[f]));
    for (const impl of IMPLS) {
      const ratio = (peer: PgImpl, f: "drain" | "total" = "drain") => (impl === peer || !IMPLS.includes(peer) ? "" : `${(med(impl, f) / med(peer, f)).toFixed(2)}×`);
      console.log(
        `| ${workers} | ${impl} | ${rate(med(impl, "enqueue"))} | ${rate(med(impl, "drain"))} | ${rate(med(impl, "total"))} | ${med(impl, "workerCpuPerJob").toFixed(2)} | ${impl === "docket-sqlite" ? "—" : med(impl, "serverCpuPerJob").toFixed(2)} | ${ratio("pg-boss")} | ${ratio("graphile-worker")} | ${ratio("pg-boss", "total")} | ${ratio("graphile-worker", "total")} |`,
      );
    }
  }
} finally {
  await server.stop();
}
