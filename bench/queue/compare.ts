/**
 * bench/queue/compare.ts — docket's job store at a git revision against the working tree, with
 * plainjob alongside, interleaved in one process so load on a shared machine hits all three alike.
 *
 *   bun bench/queue/compare.ts [REV] [--runs N]     # REV default HEAD, N default 7
 *
 * `git show REV:bot/jobs/sqlite-store.ts` is written to a temporary folder with its relative imports
 * pointed at this tree (so the schema, migrations and helpers are today's), then each round runs the
 * queue benchmark's job path (bench/queue/loops.ts) once per queue: enqueue 2 000 jobs, drain them
 * with one loop in this process. Prints the median end-to-end rate (jobs/s, wall clock) and the median
 * CPU time per job (user + system of this process, µs) — the CPU column barely moves with other
 * processes on the machine, the wall column does. A discarded warm-up round comes first.
 * Printed only; nothing is asserted.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { openDb, type DocketDb } from "../../bot/db/open.ts";
import type { JobStore } from "../../bot/jobs/store.ts";
import { SqliteJobStore } from "../../bot/jobs/sqlite-store.ts";
import { openQueue } from "./impls.ts";
import { docketLoop } from "./loops.ts";
import { benchJob } from "./payload.ts";
import { median, rate } from "./stats.ts";

const JOBS = 2000;
const CHATS = 500;
const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const args = process.argv.slice(2);
const runsAt = args.indexOf("--runs");
const RUNS = runsAt >= 0 ? Math.max(1, Number.parseInt(args[runsAt + 1] ?? "", 10) || 7) : 7;
const REV = args.find((a, i) => !a.startsWith("--") && args[i - 1] !== "--runs") ?? "HEAD";

type StoreClass = new (db: DocketDb) => JobStore;

/**
 * The store module at `rev`, every import resolved from this tree's bot/jobs/ (relative ones to its
 * files, packages to its node_modules), so both stores share one drizzle-orm and one schema.
 */
async function storeAt(rev: string, dir: string): Promise<StoreClass> {
  const source = execFileSync("git", ["-C", REPO, "show", `${rev}:bot/jobs/sqlite-store.ts`], { encoding: "utf8" });
  const jobsDir = join(REPO, "bot/jobs");
  const rewired = source.replace(/from "([^"]+)"/g, (_, spec: string) => `from "${spec.startsWith("bun:") ? spec : Bun.resolveSync(spec, jobsDir)}"`);
  const file = join(dir, "store-at-rev.ts");
  writeFileSync(file, rewired);
  return ((await import(file)) as { SqliteJobStore: StoreClass }).SqliteJobStore;
}

/** One sample: end-to-end jobs/s and CPU µs per job. */
interface Sample {
  rate: number;
  cpuUs: number;
}

/** Enqueue JOBS jobs and drain them with one loop; `run` does both on a fresh file in `dir`. */
async function timed(run: (file: string) => Promise<number>): Promise<Sample> {
  const dir = mkdtempSync(join(tmpdir(), "docket-bench-compare-"));
  try {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const done = await run(join(dir, "q.sqlite"));
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    if (done !== JOBS) throw new Error(`compare: completed ${done} of ${JOBS} jobs`);
    return { rate: JOBS / (ms / 1000), cpuUs: (cpu.user + cpu.system) / JOBS };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const docketRun = (Store: StoreClass) => async (file: string) => {
  const db = openDb(file);
  try {
    const store = new Store(db.db);
    for (let i = 0; i < JOBS; i++) await store.accept(benchJob(i, CHATS), Date.now());
    return await docketLoop(store, "compare");
  } finally {
    db.close();
  }
};

const plainjobRun = async (file: string) => {
  const q = openQueue("plainjob", file);
  try {
    for (let i = 0; i < JOBS; i++) await q.enqueue(i, CHATS);
    return await q.drain(1, "compare");
  } finally {
    q.close();
  }
};

const tmp = mkdtempSync(join(tmpdir(), "docket-bench-compare-src-"));
try {
  const cases: Array<[string, (file: string) => Promise<number>]> = [
    [`docket at ${REV}`, docketRun(await storeAt(REV, tmp))],
    ["docket, working tree", docketRun(SqliteJobStore)],
    ["plainjob", plainjobRun],
  ];
  for (const [, run] of cases) await timed(run); // warm-up, discarded
  const samples = cases.map(() => [] as Sample[]);
  for (let r = 0; r < RUNS; r++) {
    for (const [k, [name, run]] of cases.entries()) {
      samples[k]!.push(await timed(run));
      console.error(`compare round ${r + 1}/${RUNS} ${name}: ${rate(samples[k]!.at(-1)!.rate)} jobs/s`);
    }
  }
  const med = samples.map((s) => ({ rate: median(s.map((x) => x.rate)), cpuUs: median(s.map((x) => x.cpuUs)) }));
  const pj = med[2]!;
  console.log(`\n# bench/queue/compare — ${new Date().toISOString().slice(0, 10)}, Bun ${Bun.version}, ${JOBS} jobs per run, medians of ${RUNS} interleaved rounds, 1 loop in 1 process\n`);
  console.log("| queue | end-to-end, jobs/s | CPU per job, µs | docket / plainjob (end-to-end) | docket / plainjob (CPU) |");
  console.log("| --- | ---: | ---: | ---: | ---: |");
  for (const [k, [name]] of cases.entries()) {
    const m = med[k]!;
    const ratios = k < 2 ? `| ${(m.rate / pj.rate).toFixed(2)} | ${(pj.cpuUs / m.cpuUs).toFixed(2)} |` : "| | |";
    console.log(`| ${name} | ${rate(m.rate)} | ${m.cpuUs.toFixed(0)} ${ratios}`);
  }
  console.log(`\nworking tree / ${REV}: end-to-end ×${(med[1]!.rate / med[0]!.rate).toFixed(2)}, CPU per job ×${(med[0]!.cpuUs / med[1]!.cpuUs).toFixed(2)} less`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
