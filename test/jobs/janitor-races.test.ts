/**
 * The janitor against jobs that move while it runs (seed 000: "Сначала в базе фиксируется
 * новое состояние, потом удаляется файл"; audit 000 M8, T2). Real SQLite file, real
 * directories; a store wrapper moves a job right after the janitor has listed the jobs,
 * or makes the commit that must come before any deletion fail.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { openDb, type OpenDb } from "../../bot/db/open.ts";
import { Janitor } from "../../bot/janitor/janitor.ts";
import { SqliteJobStore } from "../../bot/jobs/sqlite-store.ts";
import type { JobStore } from "../../bot/jobs/store.ts";
import { createLogger } from "../../bot/log.ts";
import { dataPaths, type DataPaths } from "../../bot/worker/paths.ts";

const T0 = Date.parse("2026-11-30T10:00:00.000Z");
const BUDGET = { total: 1_000_000, multiplier: 2, modeLimit: 100 };
let dir: string;
let db: OpenDb;
let store: SqliteJobStore;
let paths: DataPaths;
const now = T0;

const newJob = (n: number) => ({ updateId: n, chatId: 1, userId: 1, messageId: n, source: "document" as const, fileId: `F${n}`, fileUniqueId: `U${n}`, declaredName: null, declaredMime: null, declaredSize: 1000, languageCode: null });

/** The real store, with `hooks` run after the named method returned (or instead of it, for `fail`). */
function wrapped(hooks: { afterList?: () => Promise<void>; expire?: () => Promise<boolean> }): JobStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === "listByState" && hooks.afterList) {
        return async (...args: Parameters<JobStore["listByState"]>) => {
          const rows = await target.listByState(...args);
          await hooks.afterList!();
          return rows;
        };
      }
      if (prop === "expire" && hooks.expire) return hooks.expire;
      const v = Reflect.get(target, prop, receiver);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}
const janitorWith = (s: JobStore) => new Janitor(s, paths, createLogger({ write: () => {} }), { partMaxAgeMs: 3_600_000, deadLeaseGraceMs: 600_000 }, () => now);

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "docket-janitor-races-"));
  paths = dataPaths(join(dir, "data"));
  db = openDb(paths.dbFile);
  store = new SqliteJobStore(db.db);
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

async function fetchedJob(n: number): Promise<number> {
  const { job } = await store.accept(newJob(n), now);
  await store.claimDownload("w", now, 60_000, BUDGET);
  expect(await store.transition(job.id, "accepted", "fetched", "w", now, { keepLease: true })).toBe(true);
  return job.id;
}

async function readyJob(n: number, expiresAt: string): Promise<number> {
  const id = await fetchedJob(n);
  await store.transition(id, "fetched", "processing", "w", now, { keepLease: true });
  await store.transition(id, "processing", "ready", "w", now, { resultExpiresAt: expiresAt, reservedBytes: 0 });
  return id;
}

/** A `failed` job still holding its reservation (crash between the commit and the cleanup). */
async function failedHoldingBudget(n: number): Promise<number> {
  const { job } = await store.accept(newJob(n), now);
  await store.claimDownload("w", now, 60_000, BUDGET);
  expect(await store.fail(job.id, "accepted", "w", "download_failed", {}, "", now)).toBe(true);
  expect((await store.get(job.id))?.reservedBytes).toBe(2000);
  return job.id;
}

/** Re-arm `id` (a re-sent file), claim it as a new download, write its fresh `.part` and source. */
async function rearmAndDownload(id: number, from: "failed" | "expired"): Promise<string[]> {
  expect(await store.rearm(id, from, { fileId: "F-again", updateId: 99, messageId: 99, languageCode: null }, now)).toBe(true);
  const claimed = await store.claimDownload("w2", now, 60_000, BUDGET);
  expect(claimed?.id).toBe(id);
  const files = [join(paths.downloads, `${id}-1111111111111111.part`), join(paths.downloads, `${id}-2222222222222222`), join(paths.work, `${id}-3333333333333333`)];
  for (const f of files) writeFileSync(f, "new life");
  return files;
}

describe("janitor: the database is the truth at the moment of deletion (M8)", () => {
  test("a job listed as fetched that starts processing and writes results during the pass keeps them", async () => {
    const id = await fetchedJob(1);
    const results = join(paths.results, `${id}-aaaaaaaaaaaaaaaa`);
    const r = await janitorWith(
      wrapped({
        afterList: async () => {
          // The process pool moves the job on and stores its results while the janitor works.
          expect(await store.transition(id, "fetched", "processing", "w", now, { keepLease: true })).toBe(true);
          mkdirSync(results);
          writeFileSync(join(results, "0.pdf"), "result");
        },
      }),
    ).runOnce();
    expect(existsSync(join(results, "0.pdf"))).toBe(true);
    expect(r.orphansRemoved).toBe(0);
  });

  test("results of every active state and of a live ready job are kept; a failed job's are removed", async () => {
    const fetched = await fetchedJob(2);
    const ready = await readyJob(3, "2026-12-30T00:00:00.000Z");
    const failed = await failedHoldingBudget(4);
    const accepted = (await store.accept(newJob(1), now)).job.id; // last: the claims above take the oldest
    const names = [accepted, fetched, ready, failed].map((id) => join(paths.results, `${id}-bbbbbbbbbbbbbbbb`));
    for (const n of names) mkdirSync(n);
    await janitorWith(store).runOnce();
    expect(names.map((n) => existsSync(n))).toEqual([true, true, true, false]);
  });

  test("a job listed as failed, re-armed and downloading again keeps its new files and its new reservation", async () => {
    const id = await failedHoldingBudget(1);
    let files: string[] = [];
    const r = await janitorWith(wrapped({ afterList: async () => void (files = await rearmAndDownload(id, "failed")) })).runOnce();
    expect(files.map((f) => existsSync(f))).toEqual([true, true, true]);
    const row = await store.get(id);
    expect([row?.status, row?.leaseOwner, row?.reservedBytes]).toEqual(["accepted", "w2", 2000]);
    expect(await store.budgetInUse()).toBe(2000);
    expect([r.reservationsReleased, r.orphansRemoved, r.stalePartsRemoved]).toEqual([0, 0, 0]);
  });

  test("erase (/delete N) with a stale `expired` row: the re-armed job's files stay", async () => {
    const id = await readyJob(1, "2026-12-30T00:00:00.000Z");
    expect(await store.expire(id, "ready", now)).toBe(true);
    const stale = (await store.get(id))!;
    const files = await rearmAndDownload(id, "expired");
    expect(await janitorWith(store).erase(stale)).toBe(false);
    expect(files.map((f) => existsSync(f))).toEqual([true, true, true]);
    expect((await store.get(id))?.reservedBytes).toBe(2000);
  });
});

describe("janitor: database first, files second (T2)", () => {
  test("expiry whose commit throws deletes nothing; the next pass, with the commit working, does", async () => {
    const id = await readyJob(1, "2026-11-30T09:00:00.000Z");
    const res = join(paths.results, `${id}-cccccccccccccccc`);
    mkdirSync(res);
    writeFileSync(join(res, "0.pdf"), "result");
    const source = join(paths.downloads, `${id}-dddddddddddddddd`);
    writeFileSync(source, "left by a crash after ready");
    const r = await janitorWith(wrapped({ expire: () => Promise.reject(new Error("SQLITE_BUSY: database is locked")) })).runOnce();
    expect(r.expired).toBe(0);
    expect((await store.get(id))?.status).toBe("ready");
    expect(existsSync(join(res, "0.pdf"))).toBe(true);
    // The source of a committed `ready` job is an orphan; the result of a not-yet-expired one is not.
    expect(existsSync(source)).toBe(false);
    const again = await janitorWith(store).runOnce();
    expect(again.expired).toBe(1);
    expect((await store.get(id))?.status).toBe("expired");
    expect(existsSync(res)).toBe(false);
  });

  test("erase: a refused commit (someone else moved the job) or a throwing one leaves every file", async () => {
    const id = await readyJob(1, "2026-12-30T00:00:00.000Z");
    const res = join(paths.results, `${id}-eeeeeeeeeeeeeeee`);
    mkdirSync(res);
    const job = (await store.get(id))!;
    expect(await janitorWith(wrapped({ expire: async () => false })).erase(job)).toBe(false);
    expect(existsSync(res)).toBe(true);
    await expect(janitorWith(wrapped({ expire: () => Promise.reject(new Error("disk I/O error")) })).erase(job)).rejects.toThrow("disk I/O error");
    expect(existsSync(res)).toBe(true);
    expect(await janitorWith(store).erase(job)).toBe(true);
    expect(existsSync(res)).toBe(false);
  });
});
