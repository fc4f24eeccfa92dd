/** The SQLite JobStore on a real file: idempotent intake, conditional transitions, claims by lease within the byte budget. */
import { describe, expect, test } from "vitest";
import type { OpenDb } from "../../bot/db/open.ts";
import type { SqliteJobStore } from "../../bot/jobs/sqlite-store.ts";
import { BUDGET as budget, MB, newJob, T0, useStore } from "./store-fixtures.ts";

let db: OpenDb;
let store: SqliteJobStore;
useStore("docket-store-", (f) => ({ db, store } = f));

const job = newJob;

describe("database", () => {
  test("WAL, busy timeout and the seed's columns", () => {
    expect(db.sqlite.query("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" });
    expect(db.sqlite.query("PRAGMA busy_timeout").get()).toEqual({ timeout: 5000 });
    const cols = (db.sqlite.query("PRAGMA table_info(file_jobs)").all() as { name: string }[]).map((c) => c.name);
    for (const c of ["id", "update_id", "chat_id", "file_id", "file_unique_id", "declared_name", "declared_mime", "declared_size", "status", "local_path", "sha256", "lease_until", "attempts", "result_expires_at"]) {
      expect(cols).toContain(c);
    }
  });
  test("UNIQUE(chat_id, file_unique_id) holds at the SQL level", () => {
    db.sqlite.run("INSERT INTO file_jobs (update_id, chat_id, user_id, message_id, source, file_id, file_unique_id, status) VALUES (1, 1, 1, 1, 'document', 'a', 'u', 'accepted')");
    expect(() => db.sqlite.run("INSERT INTO file_jobs (update_id, chat_id, user_id, message_id, source, file_id, file_unique_id, status) VALUES (2, 1, 1, 2, 'document', 'b', 'u', 'accepted')")).toThrow(/UNIQUE/);
  });
});

describe("intake is idempotent (seed 000: two deliveries of one file)", () => {
  test("the same file in the same chat returns the existing job", async () => {
    const a = await store.accept(job(1), T0);
    const b = await store.accept(job(1, { updateId: 999, fileId: "other-file-id", messageId: 77 }), T0);
    expect(a.created).toBe(true);
    expect(b.created).toBe(false);
    expect(b.job.id).toBe(a.job.id);
    expect(b.job.fileId).toBe("F1");
  });
  test("the same file in another chat is another job", async () => {
    const a = await store.accept(job(1), T0);
    const b = await store.accept(job(1, { chatId: 43 }), T0);
    expect(b.created).toBe(true);
    expect(b.job.id).not.toBe(a.job.id);
  });
});

describe("claims and conditional transitions", () => {
  test("a claim sets lease, owner and attempts; a second worker gets nothing", async () => {
    const { job: j } = await store.accept(job(1), T0);
    const c = await store.claimDownload("w1", T0, 60_000, budget);
    expect(c?.id).toBe(j.id);
    expect(c?.leaseOwner).toBe("w1");
    expect(c?.leaseUntil).toBe("2026-11-30T10:01:00.000Z");
    expect(c?.attempts).toBe(1);
    expect(c?.reservedBytes).toBe(2 * MB);
    expect(await store.claimDownload("w2", T0 + 1000, 60_000, budget)).toBeNull();
  });
  test("an expired lease makes the job claimable again by another worker", async () => {
    await store.accept(job(1), T0);
    await store.claimDownload("w1", T0, 60_000, budget);
    const again = await store.claimDownload("w2", T0 + 60_000, 60_000, budget);
    expect(again?.leaseOwner).toBe("w2");
    expect(again?.attempts).toBe(2);
    // the old holder can no longer move it
    expect(await store.transition(again!.id, "accepted", "fetched", "w1", T0 + 61_000)).toBe(false);
    expect(await store.transition(again!.id, "accepted", "fetched", "w2", T0 + 61_000)).toBe(true);
  });
  test("a transition from the wrong state changes nothing", async () => {
    const { job: j } = await store.accept(job(1), T0);
    await store.claimDownload("w1", T0, 60_000, budget);
    expect(await store.transition(j.id, "fetched", "processing", "w1", T0)).toBe(false);
    expect((await store.get(j.id))?.status).toBe("accepted");
  });
  test("renewal extends only the holder's lease", async () => {
    const { job: j } = await store.accept(job(1), T0);
    await store.claimDownload("w1", T0, 60_000, budget);
    expect(await store.renew(j.id, "w2", T0 + 10_000, 60_000)).toBe(false);
    expect(await store.renew(j.id, "w1", T0 + 10_000, 60_000)).toBe(true);
    expect((await store.get(j.id))?.leaseUntil).toBe("2026-11-30T10:01:10.000Z");
  });
  test("a job that does not fit the budget waits in accepted (head of line)", async () => {
    await store.accept(job(1, { declaredSize: 4 * MB }), T0); // reserves 8 MB
    await store.accept(job(2, { declaredSize: 2 * MB }), T0); // reserves 4 MB: 12 > 10
    const a = await store.claimDownload("w1", T0, 60_000, budget);
    expect(a?.reservedBytes).toBe(8 * MB);
    expect(await store.claimDownload("w2", T0, 60_000, budget)).toBeNull();
    expect((await store.listByState(["accepted"])).length).toBe(2);
    await store.setReservation(a!.id, 0);
    const b = await store.claimDownload("w2", T0, 60_000, budget);
    expect(b?.fileUniqueId).toBe("U2");
    expect(await store.budgetInUse()).toBe(4 * MB);
  });
  test("unknown size reserves the mode limit, capped at the budget", async () => {
    await store.accept(job(1, { declaredSize: null }), T0);
    const a = await store.claimDownload("w1", T0, 60_000, budget);
    expect(a?.reservedBytes).toBe(10 * MB);
  });
  test("retryLater releases the lease and sets a backoff", async () => {
    const { job: j } = await store.accept(job(1), T0);
    await store.claimDownload("w1", T0, 60_000, budget);
    expect(await store.retryLater(j.id, "accepted", "w1", T0 + 5000, { reason: "download_failed", detail: "HTTP 502" }, T0)).toBe(true);
    expect(await store.claimDownload("w2", T0 + 4999, 60_000, budget)).toBeNull();
    expect((await store.claimDownload("w2", T0 + 5000, 60_000, budget))?.id).toBe(j.id);
  });
  test("fail records reason and params; /cancel may fail a job without the lease", async () => {
    const { job: j } = await store.accept(job(1), T0);
    expect(await store.fail(j.id, "accepted", null, "cancelled", {}, "by user", T0)).toBe(true);
    const row = await store.get(j.id);
    expect(row?.status).toBe("failed");
    expect(row?.reason).toBe("cancelled");
    expect(row?.finishedAt).toBe("2026-11-30T10:00:00.000Z");
  });
  test("queue position counts waiting jobs ahead", async () => {
    const a = await store.accept(job(1), T0);
    const b = await store.accept(job(2), T0);
    const c = await store.accept(job(3), T0);
    expect(await store.queuePosition(a.job.id)).toBe(1);
    expect(await store.queuePosition(c.job.id)).toBe(3);
    await store.fail(b.job.id, "accepted", null, "cancelled", {}, "", T0);
    expect(await store.queuePosition(c.job.id)).toBe(2);
  });
  test("re-arm a failed job for a re-sent file", async () => {
    const { job: j } = await store.accept(job(1), T0);
    await store.fail(j.id, "accepted", null, "file_unavailable", {}, "", T0);
    expect(await store.rearm(j.id, "failed", { fileId: "NEW", updateId: 500, messageId: 9, languageCode: "ru" }, T0)).toBe(true);
    const row = await store.get(j.id);
    expect([row?.status, row?.fileId, row?.attempts, row?.reason]).toEqual(["accepted", "NEW", 0, null]);
  });
  test("expiry: due ready jobs, then ready → expired", async () => {
    const { job: j } = await store.accept(job(1), T0);
    await store.claimDownload("w", T0, 1000, budget);
    await store.transition(j.id, "accepted", "fetched", "w", T0, { keepLease: true });
    await store.transition(j.id, "fetched", "processing", "w", T0, { keepLease: true });
    await store.transition(j.id, "processing", "ready", "w", T0, { resultExpiresAt: "2026-11-30T11:00:00.000Z" });
    expect(await store.dueForExpiry(T0 + 3_599_999)).toHaveLength(0);
    expect((await store.dueForExpiry(T0 + 3_600_000)).map((r) => r.id)).toEqual([j.id]);
    expect(await store.expire(j.id, "ready", T0 + 3_600_000)).toBe(true);
    expect((await store.get(j.id))?.status).toBe("expired");
  });
});
