/**
 * `docket store migrate --to postgres://…` (issue 14 item 7): the real CLI (`bun bot/cli/main.ts`)
 * copies a SQLite database filled by the SQLite store — jobs in every state, results with file_ids,
 * settings, intake replies — into an empty PostgreSQL database on a real server, verifies the counts,
 * and the PostgreSQL store then reads every row exactly as the SQLite store did; new rows continue the
 * ids. A database that is not empty is refused, nothing committed; a password on the command line is
 * refused; the password never appears in the output.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { getTableName } from "drizzle-orm";
import { openDb } from "../../bot/db/open.ts";
import { openPg } from "../../bot/db/pg-open.ts";
import { tablesInOrder } from "../../bot/db/copy-to-pg.ts";
import { JOB_STATES } from "../../bot/db/schema.ts";
import { PgJobStore } from "../../bot/jobs/pg-store.ts";
import { SqliteJobStore } from "../../bot/jobs/sqlite-store.ts";
import type { JobStore } from "../../bot/jobs/store.ts";
import { REPO_ROOT } from "../../scripts/demo/bot-process.ts";
import { BUDGET, newJob, T0 } from "../jobs/store-fixtures.ts";
import { PG_PASSWORD, PG_USER, usePgServer, type PgServer } from "../support/pg-server.ts";
import { TEST_PG_OPTIONS } from "../support/pg-store.ts";
import { toolReady } from "../support/tools.ts";

/** Run `docket …`; exit status and output. */
function docket(args: string[], env: Record<string, string> = {}) {
  const r = Bun.spawnSync(["bun", "--no-env-file", "bot/cli/main.ts", ...args], { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root", HTTP_PORT: "0", ...env }, stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() };
}

/** Jobs in every state, results, settings and replies, written by the SQLite store itself. */
async function fill(store: JobStore): Promise<void> {
  for (let n = 1; n <= 7; n++) await store.accept(newJob(n, { chatId: 40 + (n % 3), userId: 40 + (n % 3) }), T0 + n);
  const a = (await store.claimDownload("h/1", T0 + 10, 60_000, BUDGET))!;
  await store.transition(a.id, "accepted", "fetched", "h/1", T0 + 11, { localPath: "/data/downloads/1-ab", sha256: "ff".repeat(32), realSize: 1234, reservedBytes: 5000 });
  const b = (await store.claimProcess("h/1", T0 + 12, 60_000))!.job;
  await store.putResults(b.id, [{ idx: 0, path: "/data/results/1/0.txt", fileName: "f1.txt", mime: "text/plain", size: 10 }, { idx: 1, path: "/data/results/1/1.jpg", fileName: "f1-page1.jpg", mime: "image/jpeg", size: 20 }]);
  await store.setResultFileId(b.id, 0, "BQACAgIAAxk-result-0");
  await store.transition(b.id, "processing", "ready", "h/1", T0 + 14, { resultExpiresAt: new Date(T0 + 86_400_000).toISOString(), facts: '{"type":"application/pdf"}', detectedType: "application/pdf" });
  const c = (await store.claimDownload("h/1", T0 + 20, 60_000, BUDGET))!;
  await store.fail(c.id, "accepted", "h/1", "download_failed", { attempts: 3 }, "getFile: 400 Bad Request", T0 + 21);
  const d = (await store.claimDownload("h/1", T0 + 22, 60_000, BUDGET))!;
  await store.retryLater(d.id, "accepted", "h/1", T0 + 60_000, { reason: "download_failed", detail: "network" }, T0 + 23);
  await store.setSettings(41, { pdfAction: "pages" }, T0 + 30);
  await store.recordRefusal({ updateId: 9001, chatId: 77, userId: 77, replyTo: 5, text: "This bot is private." }, T0 + 40, 86_400_000);
  await store.intake(newJob(8, { updateId: 9002 }), T0 + 50, { edited: false, tooBig: null, limits: { maxInFlight: 100, maxBytesPerDay: 1e12 }, render: () => "Got it, job queued." });
}

/** Everything a store reads back, for comparing two stores row by row (as plain JSON values: the drivers' array classes differ). */
async function dump(store: JobStore) {
  const jobs = await store.listByState(JOB_STATES);
  return JSON.parse(JSON.stringify({
    jobs,
    results: await Promise.all(jobs.map((j) => store.results(j.id))),
    settings: await store.getSettings(41),
    replies: await store.pendingReplies(T0 + 1e9, 100),
    counts: await store.countByState(),
    budget: await store.budgetInUse(),
  }));
}

describe.skipIf(!toolReady("postgres"))("docket store migrate", () => {
  let server: PgServer;
  usePgServer((s) => (server = s));
  let dir = "";
  let dataDir = "";
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "docket-migrate-"));
    dataDir = join(dir, "data");
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("copies every table, verifies the counts, and the PostgreSQL store reads the same rows; new ids continue", async () => {
    const sqlite = openDb(join(dataDir, "db", "docket.sqlite"));
    const lite = new SqliteJobStore(sqlite.db);
    await fill(lite);
    const before = await dump(lite);
    sqlite.close();
    const name = await server.createDatabase("migrate");
    const to = `postgres://${PG_USER}@127.0.0.1:${server.port}/${name}`;

    const r = docket(["store", "migrate", "--to", to, "--data-dir", dataDir], { PGPASSWORD: PG_PASSWORD });
    expect([r.code, r.err]).toEqual([0, ""]);
    // One verified line per table of the SQLite schema, with its count.
    for (const t of tablesInOrder()) expect(r.out).toMatch(new RegExp(`^${getTableName(t)}\\s+\\d+ → +\\d+  ok$`, "m"));
    expect(r.out).toMatch(/^file_jobs\s+8 →\s+8  ok$/m);
    expect(r.out + r.err).not.toContain(PG_PASSWORD);

    const pg = await openPg({ url: server.url(name), ...TEST_PG_OPTIONS });
    try {
      const store = new PgJobStore(pg);
      expect(await dump(store)).toStrictEqual(before);
      // The identity continues after the copied ids.
      const { job } = await store.accept(newJob(99), T0 + 100);
      expect(job.id).toBe(Math.max(...before.jobs.map((j: { id: number }) => j.id)) + 1);
    } finally {
      await pg.close();
    }

    // Not empty any more: refused, nothing copied twice.
    const again = docket(["store", "migrate", "--to", to, "--data-dir", dataDir], { PGPASSWORD: PG_PASSWORD });
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/already has \d+ row\(s\): migrate into an empty database/);
    const check = await openPg({ url: server.url(name), ...TEST_PG_OPTIONS });
    try {
      expect((await check.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM file_jobs`)[0]!.n).toBe(9);
    } finally {
      await check.close();
    }
  }, 120_000);

  test("a password on the command line is refused before anything is done", async () => {
    const r = docket(["store", "migrate", "--to", `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${server.port}/postgres`, "--data-dir", dataDir]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("put no password on the command line");
  });
});
