/**
 * bench/queue/pg-diagnose.ts — where the time of docket's PostgreSQL queue goes, per statement
 * (issue 14 item 8):
 *
 *   bun bench/queue/pg-diagnose.ts
 *
 * One PostgreSQL 15 server started like the benchmark's (test/support/pg-server.ts) with
 * pg_stat_statements loaded (`track = all`: the statements inside docket's plpgsql claim too).
 * 20 000 finished (`expired`) rows are inserted first (docket keeps every row after expiry), then
 * 2 000 jobs are accepted and one in-process loop drains them with the engine's store calls
 * (bench/queue/loops.ts `docketLoop`, the same as bench/queue/pg.ts). Printed: each store call's
 * mean round trip as the client sees it; CPU per job of the client and of the server's processes by kind
 * (client backends, autovacuum, WAL writer …, from /proc); the server's statements by total time (calls, mean, rows,
 * WAL records per call, buffers touched per call); HOT updates of file_jobs; and the plans
 * (EXPLAIN ANALYZE) of the store's reads that need an index — the claims' heads, the budget sum,
 * the quota, the janitor's expiry, a chat's list, the SHA twin, the queue position — on that table.
 * Printed only; nothing is asserted.
 */
import { openPg } from "../../bot/db/pg-open.ts";
import type { JobStore } from "../../bot/jobs/store.ts";
import { PgJobStore } from "../../bot/jobs/pg-store.ts";
import { startPgServer } from "../../test/support/pg-server.ts";
import { docketLoop } from "./loops.ts";
import { benchJob } from "./payload.ts";
import { serverProcesses } from "./server-cpu.ts";

const HISTORY = Number(process.env.DIAG_HISTORY ?? 20_000);
const QUEUED = 2_000;

/** CPU ms of the server's processes by kind: client backends, autovacuum, WAL writer, … */
function serverCpuByKind(dataDir: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const p of serverProcesses(dataDir)) {
    const kind = /autovacuum/.test(p.title) ? "autovacuum" : /docket diag/.test(p.title) ? "client backends" : (p.title.match(/postgres: ([a-z ]+?)(?: |$)/)?.[1] ?? "postmaster");
    out.set(kind, (out.get(kind) ?? 0) + p.cpuMs);
  }
  return out;
}

/** A store whose every call is timed (client-side round trip, ms) into `times`. */
function timedStore(store: JobStore, times: Map<string, number[]>): JobStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== "function") return v;
      return async (...args: unknown[]) => {
        const t = performance.now();
        try {
          return await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        } finally {
          const list = times.get(String(prop)) ?? [];
          list.push(performance.now() - t);
          times.set(String(prop), list);
        }
      };
    },
  });
}

const server = await startPgServer(["-c shared_preload_libraries=pg_stat_statements", "-c pg_stat_statements.track=all"]);
try {
  const name = await server.createDatabase("diag");
  const db = await openPg({ url: server.url(name), poolMax: 2, statementTimeoutMs: 60_000, applicationName: "diagnose" });
  const sql = db.sql;
  await sql.unsafe("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  await sql.unsafe(
    `INSERT INTO file_jobs (update_id, chat_id, user_id, message_id, source, file_id, file_unique_id, declared_name, declared_mime, declared_size,
       language_code, status, sha256, real_size, reserved_bytes, created_at, updated_at, finished_at)
     SELECT i, 900000 + i % 5000, 900000 + i % 5000, i, 'document', 'BQACAgIAAxkBAAIhist' || i, 'AgADhist' || i, 'old-' || i || '.pdf',
       'application/pdf', 1048576, 'ru', 'expired', lpad(i::text, 64, '0'), 1048576, 0, '2026-10-01T00:00:00.000Z', '2026-10-02T00:00:00.000Z', '2026-10-01T00:05:00.000Z'
     FROM generate_series(1, ${HISTORY}) i`,
  );
  if (!process.env.DIAG_NO_ANALYZE) await sql.unsafe("VACUUM ANALYZE file_jobs");
  const store = new PgJobStore(db);
  for (let i = 0; i < QUEUED; i++) await store.accept(benchJob(i, 500), Date.now());
  await sql.unsafe("SELECT pg_stat_statements_reset()");
  const before = (await sql.unsafe("SELECT n_tup_upd::int AS upd, n_tup_hot_upd::int AS hot FROM pg_stat_user_tables WHERE relname = 'file_jobs'"))[0] as unknown as { upd: number; hot: number };
  const times = new Map<string, number[]>();
  const cpu0 = serverCpuByKind(server.dataDir);
  const own0 = process.cpuUsage();
  const t0 = performance.now();
  const done = await docketLoop(timedStore(store, times), "diag/1");
  const drainMs = performance.now() - t0;
  const own = process.cpuUsage(own0);
  const cpu1 = serverCpuByKind(server.dataDir);
  await Bun.sleep(600); // the statistics collector (pg_stat_user_tables) reports within 500 ms
  const after = (await sql.unsafe("SELECT n_tup_upd::int AS upd, n_tup_hot_upd::int AS hot FROM pg_stat_user_tables WHERE relname = 'file_jobs'"))[0] as unknown as { upd: number; hot: number };
  const stmts = (await sql.unsafe(
    `SELECT regexp_replace(left(query, 110), '\\s+', ' ', 'g') AS q, calls::int AS calls, total_exec_time AS total, mean_exec_time AS mean, rows::int AS rows,
            wal_records::float8 / greatest(calls, 1) AS wal, (shared_blks_hit + shared_blks_read)::float8 / greatest(calls, 1) AS blks
     FROM pg_stat_statements WHERE calls >= ${Math.floor(done / 2)} AND query NOT LIKE '%pg_stat%' ORDER BY total_exec_time DESC LIMIT 14`,
  )) as unknown as Array<{ q: string; calls: number; total: number; mean: number; rows: number; wal: number; blks: number }>;
  const indexes = (await sql.unsafe("SELECT indexname FROM pg_indexes WHERE tablename = 'file_jobs' ORDER BY indexname")) as unknown as Array<{ indexname: string }>;

  const now = new Date().toISOString();
  const since = new Date(Date.now() - 86_400_000).toISOString();
  // Every read the store makes that must not scan the finished rows: the claims' heads, the budget
  // sum, the quota, the janitor's expiry, a chat's list, the SHA twin, the queue position (after the
  // drain the table holds 22 000 finished rows; 50 jobs are accepted again so the heads find one).
  for (let i = QUEUED; i < QUEUED + 50; i++) await store.accept(benchJob(i, 500), Date.now());
  await sql.unsafe("ANALYZE file_jobs");
  const plans: Array<[string, string]> = [
    ["download claim head", `SELECT id FROM file_jobs WHERE status = 'accepted' AND (lease_until IS NULL OR lease_until <= '${now}') AND (not_before IS NULL OR not_before <= '${now}') ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED`],
    ["processing claim head", `SELECT id FROM file_jobs WHERE status IN ('fetched', 'processing') AND (lease_until IS NULL OR lease_until <= '${now}') AND (not_before IS NULL OR not_before <= '${now}') ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED`],
    ["budget sum", "SELECT coalesce(sum(reserved_bytes), 0) FROM file_jobs WHERE reserved_bytes > 0 AND id <> 1"],
    ["quota: in flight", "SELECT count(*) FROM file_jobs WHERE user_id = 100001 AND status IN ('accepted', 'fetched', 'processing')"],
    ["quota: bytes today", `SELECT coalesce(sum(greatest(coalesce(real_size, declared_size, 0), 0)), 0) FROM file_jobs WHERE user_id = 100001 AND created_at >= '${since}' AND (reason IS NULL OR reason <> 'too_big')`],
    ["janitor: due for expiry", `SELECT id FROM file_jobs WHERE status = 'ready' AND result_expires_at <= '${now}' ORDER BY id`],
    ["queue positions: listByState(accepted)", "SELECT id FROM file_jobs WHERE status IN ('accepted') ORDER BY id"],
    ["listByChat", "SELECT id FROM file_jobs WHERE chat_id = 100001 ORDER BY id DESC LIMIT 10"],
    ["findReadyBySha", `SELECT id FROM file_jobs WHERE chat_id = 100001 AND sha256 = '${"9".repeat(64)}' AND variant = 'default' AND status = 'ready' AND id <> 1 AND result_expires_at > '${now}' ORDER BY id DESC LIMIT 1`],
    ["queuePosition", "SELECT count(*) FROM file_jobs WHERE status = 'accepted' AND id <= 22010"],
    ["countByState", "SELECT status, count(*) FROM file_jobs GROUP BY status"],
  ];
  const explained: string[] = [];
  for (const [what, q] of plans) {
    const rows = (await sql.unsafe(`EXPLAIN (ANALYZE, COSTS OFF, TIMING ON) ${q}`)) as unknown as Array<{ "QUERY PLAN": string }>;
    const lines = rows.map((r) => r["QUERY PLAN"]);
    const nodes = lines.filter((l) => /Scan|Sort|Aggregate|LockRows/.test(l)).map((l) => l.trim().replace(/\s+\(actual.*$/, "").replace(/^->\s*/, ""));
    const exec = lines.find((l) => l.startsWith("Execution Time"))?.replace("Execution Time: ", "") ?? "?";
    explained.push(`| ${what} | ${nodes.join(" → ")} | ${exec} |`);
  }
  await db.close(1);

  console.log(`\n# bench/queue/pg-diagnose.ts — ${now.slice(0, 10)}; ${HISTORY} finished rows + ${QUEUED} queued; one loop drained ${done} jobs in ${(drainMs / 1000).toFixed(2)} s (${(done / (drainMs / 1000)).toFixed(0)} jobs/s)\n`);
  console.log(`file_jobs indexes (${indexes.length}): ${indexes.map((i) => i.indexname).join(", ")}; updates during the drain ${after.upd - before.upd}, HOT ${after.hot - before.hot}\n`);
  const kinds = [...cpu1].map(([k, ms]) => `${k} ${((ms - (cpu0.get(k) ?? 0)) / done).toFixed(3)}`);
  console.log(`CPU ms per job during the drain: this process (client, timing proxy included) ${((own.user + own.system) / 1000 / done).toFixed(3)}; server: ${kinds.join(", ")}\n`);
  console.log("| store call | calls | mean round trip, ms |\n| --- | ---: | ---: |");
  for (const [call, list] of times) console.log(`| ${call} | ${list.length} | ${(list.reduce((a, b) => a + b, 0) / list.length).toFixed(3)} |`);
  console.log("\n| server statement | calls | mean, ms | total, ms | rows | WAL records/call | buffers/call |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const s of stmts) console.log(`| \`${s.q.replaceAll("|", "\\|")}\` | ${s.calls} | ${s.mean.toFixed(3)} | ${s.total.toFixed(0)} | ${s.rows} | ${s.wal.toFixed(1)} | ${s.blks.toFixed(1)} |`);
  console.log("\n| read (22 000 finished rows) | plan | execution |\n| --- | --- | ---: |");
  for (const e of explained) console.log(e);
} finally {
  await server.stop();
}
