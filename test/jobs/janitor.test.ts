/** The janitor on a real SQLite file and real directories: expiry, orphans, stale .part files, released budget. */
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { openDb, type OpenDb } from "../../bot/db/open.ts";
import { Janitor } from "../../bot/janitor/janitor.ts";
import { SqliteJobStore } from "../../bot/jobs/sqlite-store.ts";
import { createLogger } from "../../bot/log.ts";
import { dataPaths, type DataPaths } from "../../bot/worker/paths.ts";

const T0 = Date.parse("2026-11-30T10:00:00.000Z");
let dir: string;
let db: OpenDb;
let store: SqliteJobStore;
let paths: DataPaths;
let now = T0;
let janitor: Janitor;

const newJob = (n: number) => ({ updateId: n, chatId: 1, userId: 1, messageId: n, source: "document" as const, fileId: `F${n}`, fileUniqueId: `U${n}`, declaredName: null, declaredMime: null, declaredSize: 10, languageCode: null });
const touch = (p: string, ageMs = 0) => {
  writeFileSync(p, "x");
  const t = (now - ageMs) / 1000;
  utimesSync(p, t, t);
};

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "docket-janitor-"));
  paths = dataPaths(join(dir, "data"));
  db = openDb(paths.dbFile);
  store = new SqliteJobStore(db.db);
  now = T0;
  janitor = new Janitor(store, paths, createLogger({ write: () => {} }), { partMaxAgeMs: 3_600_000, deadLeaseGraceMs: 600_000 }, () => now);
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

async function readyJob(n: number, expiresAt: string) {
  const { job } = await store.accept(newJob(n), now);
  await store.claimDownload("w", now, 60_000, { total: 1000, multiplier: 1, modeLimit: 100 });
  await store.transition(job.id, "accepted", "fetched", "w", now, { keepLease: true });
  await store.transition(job.id, "fetched", "processing", "w", now, { keepLease: true });
  await store.transition(job.id, "processing", "ready", "w", now, { resultExpiresAt: expiresAt, reservedBytes: 0 });
  return job.id;
}

describe("janitor", () => {
  test("an expired result: row → expired (kept), files deleted, database first", async () => {
    const id = await readyJob(1, "2026-11-30T11:00:00.000Z");
    const res = join(paths.results, `${id}-0123456789abcdef`);
    mkdirSync(res);
    touch(join(res, "0.txt"));
    now = T0 + 3_599_000;
    expect((await janitor.runOnce()).expired).toBe(0);
    expect(existsSync(res)).toBe(true);
    now = T0 + 3_600_000;
    const r = await janitor.runOnce();
    expect(r.expired).toBe(1);
    expect((await store.get(id))?.status).toBe("expired");
    expect(existsSync(res)).toBe(false);
  });

  test("orphans: files of finished or unknown jobs go; files of live jobs stay", async () => {
    const done = await readyJob(2, "2026-12-30T00:00:00.000Z");
    const live = (await store.accept(newJob(1), now)).job.id;
    expect((await store.get(done))?.status).toBe("ready");
    touch(join(paths.downloads, `${live}-aaaaaaaaaaaaaaaa`), 120_000);
    touch(join(paths.downloads, `${done}-bbbbbbbbbbbbbbbb`), 120_000); // a ready job's source should be gone
    touch(join(paths.work, `999-cccccccccccccccc`), 120_000); // no such job
    mkdirSync(join(paths.results, `${done}-dddddddddddddddd`));
    const r = await janitor.runOnce();
    expect(r.orphansRemoved).toBe(2);
    expect(existsSync(join(paths.downloads, `${live}-aaaaaaaaaaaaaaaa`))).toBe(true);
    expect(existsSync(join(paths.downloads, `${done}-bbbbbbbbbbbbbbbb`))).toBe(false);
    expect(existsSync(join(paths.work, `999-cccccccccccccccc`))).toBe(false);
    expect(existsSync(join(paths.results, `${done}-dddddddddddddddd`))).toBe(true);
  });

  test(".part files older than the threshold are removed even for live jobs", async () => {
    const live = (await store.accept(newJob(1), now)).job.id;
    touch(join(paths.downloads, `${live}-aaaaaaaaaaaaaaaa.part`), 3_600_001);
    touch(join(paths.downloads, `${live}-bbbbbbbbbbbbbbbb.part`), 1000);
    const r = await janitor.runOnce();
    expect(r.stalePartsRemoved).toBe(1);
    expect(existsSync(join(paths.downloads, `${live}-bbbbbbbbbbbbbbbb.part`))).toBe(true);
  });

  test("an old-mtime .part of a job whose lease is live is kept (local mode hard-links the server's older file)", async () => {
    const { job } = await store.accept(newJob(1), now);
    await store.claimDownload("w", now, 60_000, { total: 1000, multiplier: 1, modeLimit: 100 });
    touch(join(paths.downloads, `${job.id}-aaaaaaaaaaaaaaaa.part`), 3_600_001);
    now = T0 + 30_000; // lease still live
    expect((await janitor.runOnce()).stalePartsRemoved).toBe(0);
    expect(existsSync(join(paths.downloads, `${job.id}-aaaaaaaaaaaaaaaa.part`))).toBe(true);
    now = T0 + 60_001; // the lease ended: the old .part is abandoned
    expect((await janitor.runOnce()).stalePartsRemoved).toBe(1);
  });

  test("a failed job still holding budget (crash between commit and cleanup) is released", async () => {
    const { job } = await store.accept(newJob(1), now);
    await store.claimDownload("w", now, 60_000, { total: 1000, multiplier: 1, modeLimit: 100 });
    await store.fail(job.id, "accepted", "w", "download_failed", {}, "", now);
    expect(await store.budgetInUse()).toBe(10);
    const r = await janitor.runOnce();
    expect(r.reservationsReleased).toBe(1);
    expect(await store.budgetInUse()).toBe(0);
  });

  test("jobs whose lease died long ago are reported", async () => {
    await store.accept(newJob(1), now);
    await store.claimDownload("w", now, 60_000, { total: 1000, multiplier: 1, modeLimit: 100 });
    now = T0 + 60_000 + 600_001;
    expect((await janitor.runOnce()).deadLeases).toBe(1);
  });

  test("erase (/delete N): ready → expired now, results removed", async () => {
    const id = await readyJob(1, "2026-12-30T00:00:00.000Z");
    mkdirSync(join(paths.results, `${id}-eeeeeeeeeeeeeeee`));
    expect(await janitor.erase((await store.get(id))!)).toBe(true);
    expect((await store.get(id))?.status).toBe("expired");
    expect(existsSync(join(paths.results, `${id}-eeeeeeeeeeeeeeee`))).toBe(false);
  });
});
