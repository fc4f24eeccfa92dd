/**
 * bench/queue/run.ts — docket's SQLite job queue and intake, printed as markdown tables.
 *
 *   bun bench/queue/run.ts            # everything, ~2 minutes on 2 cores
 *   bun bench/queue/run.ts --quick    # 1 run each, smaller counts (a smoke check of the script)
 *   bun bench/queue/run.ts --runs 7   # more interleaved runs per cell (steadier medians on a busy machine)
 *
 * 1. Queue: enqueue → claim → complete on a real SQLite file (WAL) — docket's SqliteJobStore
 *    (bot/jobs/sqlite-store.ts) next to plainjob (npm, bun:sqlite) — at 1, 2 and 4 worker
 *    processes sharing the file, 4 async loops in one process, and 1 process over a table that
 *    already holds finished rows. Same jobs and payload (bench/queue/payload.ts) for both.
 * 2. Per-call costs of both queues (explains 1).
 * 3. Intake: updates/s and p50/p99 per update through createApp's grammY Bot (fileIntake) into
 *    SQLite, the status reporter a no-op; direct bot.handleUpdate and over HTTP via the emulator.
 * Progress goes to stderr, tables to stdout. Nothing here is asserted: numbers are printed only.
 */
import { cpus } from "node:os";
import { callsTable, docketCalls, plainjobCalls } from "./calls.ts";
import { benchIntake, intakeTable, type IntakeCase } from "./intake.ts";
import { benchQueue, queueTable, type QueueCase } from "./queue.ts";

const quick = process.argv.includes("--quick");
const runsArg = process.argv.indexOf("--runs");
const RUNS = runsArg > 0 ? Math.max(1, Number.parseInt(process.argv[runsArg + 1] ?? "", 10) || 3) : quick ? 1 : 3;
const JOBS = quick ? 300 : 2000;
const HISTORY = quick ? 2000 : 20_000;
const CHATS = 500;
const INTAKE_UPDATES = quick ? 500 : 2000;

const queueCases: QueueCase[] = [];
for (const workers of [1, 2, 4]) for (const impl of ["docket", "plainjob"] as const) queueCases.push({ impl, kind: "proc", workers, history: 0 });
for (const impl of ["docket", "plainjob"] as const) queueCases.push({ impl, kind: "async", workers: 4, history: 0 });
for (const impl of ["docket", "plainjob"] as const) queueCases.push({ impl, kind: "proc", workers: 1, history: HISTORY });

const intakeCases: IntakeCase[] = [
  { variant: "direct-sequential", updates: INTAKE_UPDATES, history: 0 },
  { variant: "direct-concurrent", updates: INTAKE_UPDATES, history: 0 },
  { variant: "direct-sequential", updates: INTAKE_UPDATES, history: HISTORY },
  { variant: "emulator-http", updates: INTAKE_UPDATES, history: 0 },
];

const started = performance.now();
const queue = await benchQueue(queueCases, JOBS, CHATS, RUNS);
const calls = callsTable(await docketCalls(JOBS, CHATS), await plainjobCalls(JOBS, CHATS), JOBS);
const intake = await benchIntake(intakeCases, CHATS, RUNS);
const wall = (performance.now() - started) / 1000;

const plainjobVersion = (await import("plainjob/package.json", { with: { type: "json" } })).default.version;
console.log(`\n# bench/queue — ${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), Bun ${Bun.version}, plainjob ${plainjobVersion}, wall ${wall.toFixed(0)} s\n`);
console.log(queueTable(queue, JOBS, RUNS));
console.log("");
console.log(calls);
console.log("");
console.log(intakeTable(intake, CHATS, RUNS));
