/**
 * The SQLite JobStore's hot paths on a real file, field by field: accept, both claims, transition,
 * renew, retryLater, fail and get. Each returned row is compared with the row drizzle reads back
 * (same keys, types and values), and every conditional write is checked for what it must NOT change
 * when its WHERE (state + lease owner) does not match (seed 000: conditional UPDATE, leases).
 */
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { describe, expect, test } from "vitest";
import { openDb, type OpenDb } from "../../bot/db/open.ts";
import { fileJobs, type FileJob } from "../../bot/db/schema.ts";
import { SqliteJobStore } from "../../bot/jobs/sqlite-store.ts";
import { BUDGET as budget, MB, newJob, T0, useStore } from "./store-fixtures.ts";

let dir: string;
let db: OpenDb;
let store: SqliteJobStore;
useStore("docket-store-paths-", (f) => ({ dir, db, store } = f));

const job = newJob;
const at = (ms: number) => new Date(ms).toISOString();
/** The row as drizzle reads it (the reference shape every store method must return). */
const row = (id: number): FileJob | undefined => db.db.select().from(fileJobs).where(eq(fileJobs.id, id)).get();

/** accept + claimDownload + accepted→fetched with the lease kept: a job in `fetched` held by `owner`. */
async function fetchedBy(n: number, owner: string, now = T0): Promise<FileJob> {
  const { job: j } = await store.accept(job(n), now);
  const c = await store.claimDownload(owner, now, 60_000, budget);
  expect(c?.id).toBe(j.id);
  expect(await store.transition(j.id, "accepted", "fetched", owner, now, { localPath: `downloads/${j.id}-x`, keepLease: true })).toBe(true);
  return row(j.id)!;
}

describe("accept", () => {
  test("a new job: every column as intake wrote it, the row drizzle reads back", async () => {
    const { job: j, created } = await store.accept(job(1), T0);
    expect(created).toBe(true);
    expect(j).toStrictEqual(row(j.id));
    expect(j).toMatchObject({
      updateId: 101, chatId: 42, userId: 42, messageId: 1, source: "document", fileId: "F1", fileUniqueId: "U1",
      declaredName: "f1.pdf", declaredMime: "application/pdf", declaredSize: MB, languageCode: "en",
      variant: "default", status: "accepted", attempts: 0, reservedBytes: 0,
      leaseOwner: null, leaseUntil: null, notBefore: null, finishedAt: null, localPath: null,
      createdAt: "2026-11-30T10:00:00.000Z", updatedAt: "2026-11-30T10:00:00.000Z",
    });
  });
  test("unknown name, MIME, size and language are stored as NULL", async () => {
    const { job: j } = await store.accept(job(1, { declaredName: null, declaredMime: null, declaredSize: null, languageCode: null, source: "photo" }), T0);
    expect([j.declaredName, j.declaredMime, j.declaredSize, j.languageCode, j.source]).toEqual([null, null, null, null, "photo"]);
    expect(j).toStrictEqual(row(j.id));
  });
  test("the variant is part of the key; a repeat returns the current row of that variant", async () => {
    const a = await store.accept(job(1), T0);
    const p = await store.accept(job(1, { variant: "pages" }), T0 + 1);
    expect(p.created).toBe(true);
    expect(p.job.id).not.toBe(a.job.id);
    expect(p.job.variant).toBe("pages");
    await store.claimDownload("w1", T0 + 2, 60_000, budget);
    const again = await store.accept(job(1, { updateId: 999, fileId: "other" }), T0 + 3);
    expect(again.created).toBe(false);
    expect(again.job).toStrictEqual(row(a.job.id));
    expect(again.job.leaseOwner).toBe("w1");
    expect((await store.accept(job(1, { variant: "pages" }), T0 + 4)).job.id).toBe(p.job.id);
  });
});

describe("claimDownload", () => {
  test("the claimed row: lease, owner, attempts + 1, reservation, backoff cleared, updated_at", async () => {
    const { job: j } = await store.accept(job(1), T0);
    await store.claimDownload("w1", T0, 1000, budget);
    await store.retryLater(j.id, "accepted", "w1", T0 + 2000, { reason: "download_failed", detail: "HTTP 502" }, T0 + 500);
    const c = await store.claimDownload("w2", T0 + 2000, 60_000, budget);
    expect(c).toStrictEqual(row(j.id));
    expect(c).toMatchObject({ status: "accepted", leaseOwner: "w2", leaseUntil: at(T0 + 62_000), attempts: 2, reservedBytes: 2 * MB, notBefore: null, updatedAt: at(T0 + 2000), lastError: "HTTP 502" });
  });
  test("oldest first; a job leased by another worker is skipped; fetched jobs are not download work", async () => {
    await store.accept(job(1), T0);
    await store.accept(job(2), T0);
    await store.accept(job(3), T0);
    expect((await store.claimDownload("w1", T0, 60_000, budget))?.fileUniqueId).toBe("U1");
    expect((await store.claimDownload("w2", T0, 60_000, budget))?.fileUniqueId).toBe("U2");
    expect(await store.transition(1, "accepted", "fetched", "w1", T0)).toBe(true);
    expect((await store.claimDownload("w3", T0, 60_000, budget))?.fileUniqueId).toBe("U3");
    expect(await store.claimDownload("w4", T0, 60_000, { ...budget, total: 1e12 })).toBeNull();
  });
  test("a re-claim after the lease expired does not count the job's own reservation", async () => {
    const { job: j } = await store.accept(job(1, { declaredSize: 4 * MB }), T0); // 8 MB of a 10 MB budget
    expect((await store.claimDownload("w1", T0, 1000, budget))?.reservedBytes).toBe(8 * MB);
    const again = await store.claimDownload("w2", T0 + 1000, 1000, budget);
    expect([again?.id, again?.leaseOwner, again?.reservedBytes, again?.attempts]).toEqual([j.id, "w2", 8 * MB, 2]);
    expect(await store.budgetInUse()).toBe(8 * MB);
  });
  test("nothing queued: null, and nothing is written", async () => {
    expect(await store.claimDownload("w1", T0, 60_000, budget)).toBeNull();
    expect(db.sqlite.query("SELECT count(*) AS n FROM file_jobs").get()).toEqual({ n: 0 });
  });
});

describe("claimProcess", () => {
  test("only fetched/processing jobs; the claim moves fetched → processing and sets lease, owner, attempts + 1", async () => {
    const f = await fetchedBy(1, "d1");
    await store.accept(job(2), T0); // download work, never process work
    // the download holder keeps the lease: not claimable until it expires
    expect(await store.claimProcess("p1", T0 + 59_999, 60_000)).toBeNull();
    const c = await store.claimProcess("p1", T0 + 60_000, 30_000);
    expect(c?.job).toStrictEqual(row(f.id));
    expect(c?.found).toBe("fetched");
    expect(c?.job).toMatchObject({ id: f.id, status: "processing", leaseOwner: "p1", leaseUntil: at(T0 + 90_000), attempts: 2, notBefore: null, updatedAt: at(T0 + 60_000), localPath: f.localPath });
    expect(await store.claimProcess("p2", T0 + 60_001, 30_000)).toBeNull();
  });
  test("oldest first over both states: an abandoned `processing` job before a newer `fetched` one", async () => {
    const a = await fetchedBy(1, "d");
    expect(await store.transition(a.id, "fetched", "processing", "d", T0, { keepLease: true })).toBe(true);
    const b = await fetchedBy(2, "d");
    const first = await store.claimProcess("p", T0 + 60_000, 60_000);
    expect([first?.job.id, first?.found, first?.job.status, first?.job.attempts]).toEqual([a.id, "processing", "processing", 2]);
    const second = await store.claimProcess("p", T0 + 60_000, 60_000);
    expect([second?.job.id, second?.found, second?.job.status]).toEqual([b.id, "fetched", "processing"]);
  });
  test("a retry backoff on the processing pool is respected", async () => {
    const f = await fetchedBy(1, "d");
    const c = await store.claimProcess("p", T0 + 60_000, 60_000);
    expect(await store.retryLater(f.id, "processing", "p", T0 + 70_000, { reason: "download_failed", detail: "busy" }, T0 + 60_000)).toBe(true);
    expect(c?.job.id).toBe(f.id);
    expect(await store.claimProcess("q", T0 + 69_999, 60_000)).toBeNull();
    expect((await store.claimProcess("q", T0 + 70_000, 60_000))?.job.leaseOwner).toBe("q");
  });
  test("a second connection to the same file never claims a job the first one holds", async () => {
    const other = openDb(join(dir, "db", "docket.sqlite"));
    try {
      const store2 = new SqliteJobStore(other.db);
      for (let n = 1; n <= 6; n++) await store.accept(job(n), T0);
      const ids: number[] = [];
      for (let k = 0; k < 6; k++) ids.push((await (k % 2 ? store2 : store).claimDownload(`w${k % 2}`, T0, 60_000, { ...budget, total: 1e12 }))!.id);
      expect(new Set(ids).size).toBe(6);
      expect(await store2.claimDownload("w9", T0, 60_000, { ...budget, total: 1e12 })).toBeNull();
    } finally {
      other.close();
    }
  });
});

describe("transition", () => {
  test("an illegal move throws and changes nothing", async () => {
    const { job: j } = await store.accept(job(1), T0);
    await expect(store.transition(j.id, "accepted", "ready", "w", T0)).rejects.toThrow(/illegal transition/);
    expect(row(j.id)).toStrictEqual(j);
  });
  test("the patch's fields, lease released by default, attempts reset on request, no finished_at while active", async () => {
    const { job: j } = await store.accept(job(1), T0);
    await store.claimDownload("w", T0, 60_000, budget);
    const ok = await store.transition(j.id, "accepted", "fetched", "w", T0 + 5, {
      localPath: "downloads/1-ab", sha256: "a".repeat(64), realSize: 123, reservedBytes: 246, detectedType: "pdf", facts: "{\"pages\":1}", resultExpiresAt: "2026-12-01T00:00:00.000Z", resetAttempts: true,
    });
    expect(ok).toBe(true);
    expect(row(j.id)).toMatchObject({
      status: "fetched", localPath: "downloads/1-ab", sha256: "a".repeat(64), realSize: 123, reservedBytes: 246, detectedType: "pdf", facts: "{\"pages\":1}",
      resultExpiresAt: "2026-12-01T00:00:00.000Z", attempts: 0, leaseOwner: null, leaseUntil: null, updatedAt: at(T0 + 5), finishedAt: null,
    });
  });
  test("keepLease keeps owner and deadline; attempts stay without resetAttempts", async () => {
    const { job: j } = await store.accept(job(1), T0);
    await store.claimDownload("w", T0, 60_000, budget);
    expect(await store.transition(j.id, "accepted", "fetched", "w", T0 + 1, { keepLease: true })).toBe(true);
    expect(row(j.id)).toMatchObject({ status: "fetched", leaseOwner: "w", leaseUntil: at(T0 + 60_000), attempts: 1, localPath: null });
  });
  test("null in the patch clears a column, an absent or undefined field leaves it", async () => {
    const f = await fetchedBy(1, "w");
    expect(f.localPath).toBe(`downloads/${f.id}-x`);
    await store.transition(f.id, "fetched", "processing", "w", T0, { keepLease: true, localPath: undefined, sha256: "s" });
    expect(row(f.id)).toMatchObject({ localPath: `downloads/${f.id}-x`, sha256: "s" });
    await store.transition(f.id, "processing", "ready", "w", T0 + 9, { localPath: null, reservedBytes: 0 });
    expect(row(f.id)).toMatchObject({ status: "ready", localPath: null, sha256: "s", reservedBytes: 0, finishedAt: at(T0 + 9), leaseOwner: null });
  });
  test("a final state sets finished_at (failed by transition as well)", async () => {
    const { job: j } = await store.accept(job(1), T0);
    await store.claimDownload("w", T0, 60_000, budget);
    expect(await store.transition(j.id, "accepted", "failed", "w", T0 + 7)).toBe(true);
    expect(row(j.id)).toMatchObject({ status: "failed", finishedAt: at(T0 + 7), leaseOwner: null });
  });
  test("not the lease holder, or no lease at all: false and the row is untouched", async () => {
    const { job: j } = await store.accept(job(1), T0);
    expect(await store.transition(j.id, "accepted", "fetched", "w", T0)).toBe(false);
    await store.claimDownload("w", T0, 60_000, budget);
    const before = row(j.id);
    expect(await store.transition(j.id, "accepted", "fetched", "x", T0 + 1, { localPath: "p", resetAttempts: true })).toBe(false);
    expect(await store.transition(j.id + 1, "accepted", "fetched", "w", T0 + 1)).toBe(false);
    expect(row(j.id)).toStrictEqual(before);
  });
});

describe("renew, retryLater, fail, get", () => {
  test("renew: only an active job of the holder; a finished job keeps its deadline", async () => {
    const f = await fetchedBy(1, "w");
    expect(await store.renew(f.id, "w", T0 + 10, 60_000)).toBe(true);
    expect(row(f.id)?.leaseUntil).toBe(at(T0 + 60_010));
    await store.transition(f.id, "fetched", "processing", "w", T0, { keepLease: true });
    await store.transition(f.id, "processing", "ready", "w", T0, { keepLease: true });
    expect(await store.renew(f.id, "w", T0 + 20, 60_000)).toBe(false);
    expect(row(f.id)).toMatchObject({ status: "ready", leaseOwner: "w", leaseUntil: at(T0 + 60_010) });
  });
  test("retryLater: wrong holder or state changes nothing; the holder releases with a backoff and a detail", async () => {
    const { job: j } = await store.accept(job(1), T0);
    await store.claimDownload("w", T0, 60_000, budget);
    const before = row(j.id);
    expect(await store.retryLater(j.id, "accepted", "x", T0 + 5000, { reason: "download_failed", detail: "no" }, T0 + 1)).toBe(false);
    expect(await store.retryLater(j.id, "fetched", "w", T0 + 5000, { reason: "download_failed", detail: "no" }, T0 + 1)).toBe(false);
    expect(row(j.id)).toStrictEqual(before);
    expect(await store.retryLater(j.id, "accepted", "w", T0 + 5000, { reason: "download_failed", detail: "HTTP 502" }, T0 + 2)).toBe(true);
    expect(row(j.id)).toMatchObject({ status: "accepted", leaseOwner: null, leaseUntil: null, notBefore: at(T0 + 5000), lastError: "HTTP 502", updatedAt: at(T0 + 2), attempts: 1 });
  });
  test("fail by the holder: reason, JSON params, detail, lease released; others change nothing", async () => {
    const { job: j } = await store.accept(job(1), T0);
    await store.claimDownload("w", T0, 60_000, budget);
    const before = row(j.id);
    expect(await store.fail(j.id, "accepted", "x", "too_big", { limit: 5, unit: "MB" }, "d", T0 + 1)).toBe(false);
    expect(await store.fail(j.id, "fetched", "w", "too_big", { limit: 5, unit: "MB" }, "d", T0 + 1)).toBe(false);
    expect(await store.fail(j.id, "fetched", null, "cancelled", {}, "d", T0 + 1)).toBe(false);
    expect(row(j.id)).toStrictEqual(before);
    expect(await store.fail(j.id, "accepted", "w", "too_big", { limit: 5, unit: "MB" }, "declared 9 MB", T0 + 3)).toBe(true);
    expect(row(j.id)).toMatchObject({
      status: "failed", reason: "too_big", reasonParams: "{\"limit\":5,\"unit\":\"MB\"}", lastError: "declared 9 MB",
      leaseOwner: null, leaseUntil: null, updatedAt: at(T0 + 3), finishedAt: at(T0 + 3), attempts: 1, reservedBytes: 2 * MB,
    });
  });
  test("get: the row drizzle reads, undefined for an unknown id", async () => {
    const f = await fetchedBy(1, "w");
    expect(await store.get(f.id)).toStrictEqual(f);
    expect(await store.get(f.id + 100)).toBeUndefined();
  });
});
