/**
 * bench/queue/diagnose.ts — why docket's store calls cost what bench/queue/run.ts shows.
 *
 *   bun bench/queue/diagnose.ts
 *
 * One run, one process, raw bun:sqlite on the file `openDb` created (docket's schema and pragmas):
 * `store.accept` next to the same INSERT prepared once / on every call, what a state change costs
 * SQLite itself (an UPDATE of a non-indexed column against the engine's accepted→fetched UPDATE),
 * the statements inside `claimDownload` and the intake fairness checks, timed alone. Prints a
 * markdown table of mean µs per statement. Printed only; nothing is asserted.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDb } from "../../bot/db/open.ts";
import { SqliteJobStore } from "../../bot/jobs/sqlite-store.ts";
import { seedDocketHistory } from "./history.ts";
import { benchJob } from "./payload.ts";

const QUEUED = 2000;
const HISTORY = 20_000;
const REPEAT = 500;

const dir = mkdtempSync(join(tmpdir(), "docket-bench-diagnose-"));
const db = openDb(join(dir, "q.sqlite"));
const store = new SqliteJobStore(db.db);
const rows: string[] = [];

/** Mean µs of `f` over REPEAT calls. */
async function mean(f: () => unknown): Promise<number> {
  const t = performance.now();
  for (let i = 0; i < REPEAT; i++) await f();
  return ((performance.now() - t) / REPEAT) * 1000;
}
const row = (what: string, us: number) => rows.push(`| ${what} | ${us.toFixed(0)} |`);

try {
  seedDocketHistory(db.sqlite, HISTORY);
  let next = 0;
  row("`store.accept` (INSERT … ON CONFLICT DO NOTHING RETURNING the row, prepared in bot/jobs/sqlite-statements.ts)", await mean(() => store.accept(benchJob(next++, 500), Date.now())));
  const insertSql = `INSERT INTO file_jobs (update_id, chat_id, user_id, message_id, source, file_id, file_unique_id, declared_name, declared_mime, declared_size, language_code, status, created_at, updated_at)
    VALUES (?,?,?,?,?,?,?,?,?,?,?,'accepted',?,?) ON CONFLICT DO NOTHING RETURNING *`;
  const args = () => {
    const j = benchJob(next++, 500);
    const t = new Date().toISOString();
    return [j.updateId, j.chatId, j.userId, j.messageId, j.source, j.fileId, j.fileUniqueId, j.declaredName, j.declaredMime, j.declaredSize, j.languageCode, t, t] as const;
  };
  const prepared = db.sqlite.prepare(insertSql);
  row("same INSERT, bun:sqlite statement prepared once", await mean(() => prepared.get(...args())));
  row("same INSERT, bun:sqlite prepared on every call", await mean(() => db.sqlite.prepare(insertSql).get(...args())));
  // What is left after preparing: SQLite's own work for a write that moves indexed columns.
  // The jobs inserted above get a lease for owner "o" first (the transition's WHERE needs it), and
  // are put back afterwards, so the claim rows below see the same queue as before.
  const ids = (db.sqlite.query("SELECT id FROM file_jobs WHERE status = 'accepted' ORDER BY id LIMIT ?").all(REPEAT) as { id: number }[]).map((r) => r.id);
  db.sqlite.run("UPDATE file_jobs SET lease_owner = 'o' WHERE status = 'accepted'");
  const plain = db.sqlite.prepare("UPDATE file_jobs SET attempts = attempts + 1 WHERE id = ?");
  let k = 0;
  row("UPDATE of a non-indexed column by id (autocommit)", await mean(() => plain.run(ids[k++]!)));
  k = 0;
  row(
    "`store.transition` accepted→fetched as the engine patches it (status, lease, sha256, reservation)",
    await mean(() => store.transition(ids[k]!, "accepted", "fetched", "o", Date.now(), { localPath: "downloads/x", sha256: String(k++).padStart(64, "0"), realSize: 1, reservedBytes: 2 })),
  );
  if ((db.sqlite.query("SELECT count(*) AS n FROM file_jobs WHERE status = 'fetched'").get() as { n: number }).n !== REPEAT) throw new Error("diagnose: a transition did not apply");
  db.sqlite.run("UPDATE file_jobs SET status = 'accepted', lease_owner = NULL, lease_until = NULL, local_path = NULL, sha256 = NULL, real_size = NULL, reserved_bytes = 0, attempts = 0");

  while (next < QUEUED) await store.accept(benchJob(next++, 500), Date.now());

  const headSql = "SELECT * FROM file_jobs WHERE status = 'accepted' AND (lease_until IS NULL OR lease_until <= ?1) AND (not_before IS NULL OR not_before <= ?1) ORDER BY id LIMIT 1";
  const sumSql = "SELECT coalesce(sum(reserved_bytes), 0) AS n FROM file_jobs WHERE id != ?";
  const bytesSql = "SELECT coalesce(sum(coalesce(real_size, declared_size, 0)), 0) AS n FROM file_jobs WHERE user_id = ? AND created_at >= ?";
  const since = new Date(Date.now() - 86_400_000).toISOString();
  const now = new Date().toISOString();
  const timeAll = async (note: string) => {
    row(`claimDownload head SELECT, ${QUEUED} queued${note}`, await mean(() => db.sqlite.query(headSql).get(now)));
    row(`claimDownload budget sum over ${QUEUED + HISTORY} rows${note}`, await mean(() => db.sqlite.query(sumSql).get(1)));
    row(`intake bytesSince (fairness) over ${QUEUED + HISTORY} rows${note}`, await mean(() => db.sqlite.query(bytesSql).get(100_001, since)));
  };
  row(`drizzle \`store.listByChat\` (10 rows, index (chat_id, id))`, await mean(() => store.listByChat(100_001, 10)));
  await timeAll(", schema as is");
  db.sqlite.exec("CREATE INDEX bench_status_id ON file_jobs (status, id)");
  db.sqlite.exec("CREATE INDEX bench_user_created ON file_jobs (user_id, created_at)");
  db.sqlite.exec("CREATE INDEX bench_reserved ON file_jobs (reserved_bytes) WHERE reserved_bytes > 0");
  const sumPartial = "SELECT coalesce(sum(reserved_bytes), 0) AS n FROM file_jobs WHERE reserved_bytes > 0 AND id != ?";
  row(`claimDownload head SELECT + index (status, id)`, await mean(() => db.sqlite.query(headSql).get(now)));
  row(`budget sum with \`reserved_bytes > 0\` + partial index`, await mean(() => db.sqlite.query(sumPartial).get(1)));
  row(`intake bytesSince + index (user_id, created_at)`, await mean(() => db.sqlite.query(bytesSql).get(100_001, since)));
} finally {
  db.close();
  rmSync(dir, { recursive: true, force: true });
}

console.log(`\nbench/queue/diagnose — ${new Date().toISOString().slice(0, 10)}, ${HISTORY} expired rows + ${QUEUED} queued jobs, mean of ${REPEAT} calls\n`);
console.log("| statement | µs per call |");
console.log("| --- | ---: |");
for (const r of rows) console.log(r);
