/**
 * Conformance: what the engine relies on from a `JobStore` (issue 14 item 2) — idempotent intake
 * (the dedupe key), claims by lease within the byte budget, renewals, conditional transitions and
 * what they must NOT change when their WHERE (state + lease owner) does not match, retry backoff,
 * failure, the per-user fairness checks, queue positions, re-arming and expiry (seed 000). Every
 * row a hot path returns is compared with `store.get` of the same id: same keys, types and values.
 */
import { describe, expect, test } from "vitest";
import { JOB_STATES, type FileJob } from "../../../bot/db/schema.ts";
import { reservationFor } from "../../../bot/jobs/budget.ts";
import type { JobStore } from "../../../bot/jobs/store.ts";
import fc from "fast-check";
import { BUDGET as budget, MB, newJob as job, T0 } from "../store-fixtures.ts";
import { useFactoryStore, type MadeStore, type StoreFactory } from "./store-factory.ts";

const at = (ms: number) => new Date(ms).toISOString();

/** The core suite against stores from `make`. */
export function coreSuite(name: string, make: StoreFactory): void {
  let store: JobStore;
  let made: MadeStore;
  useFactoryStore(make, (s, m) => ((store = s), (made = m)));
  const row = async (id: number): Promise<FileJob | undefined> => store.get(id);
  const count = async () => (await store.listByState(JOB_STATES)).length;

  /** accept + claimDownload + accepted→fetched with the lease kept: a job in `fetched` held by `owner`. */
  async function fetchedBy(n: number, owner: string, now = T0): Promise<FileJob> {
    const { job: j } = await store.accept(job(n), now);
    const c = await store.claimDownload(owner, now, 60_000, budget);
    expect(c?.id).toBe(j.id);
    expect(await store.transition(j.id, "accepted", "fetched", owner, now, { localPath: `downloads/${j.id}-x`, keepLease: true })).toBe(true);
    return (await row(j.id))!;
  }

  describe(`${name}: accept (seed 000: two deliveries of one file)`, () => {
    test("a new job: every column as intake wrote it", async () => {
      const { job: j, created } = await store.accept(job(1), T0);
      expect(created).toBe(true);
      expect(j).toStrictEqual(await row(j.id));
      expect(j).toMatchObject({
        updateId: 101, chatId: 42, userId: 42, messageId: 1, source: "document", fileId: "F1", fileUniqueId: "U1",
        declaredName: "f1.pdf", declaredMime: "application/pdf", declaredSize: MB, languageCode: "en",
        variant: "default", status: "accepted", attempts: 0, reservedBytes: 0,
        leaseOwner: null, leaseUntil: null, notBefore: null, finishedAt: null, localPath: null,
        createdAt: "2026-11-30T10:00:00.000Z", updatedAt: "2026-11-30T10:00:00.000Z",
      });
    });
    test("the same file in the same chat returns the existing job; in another chat it is another job", async () => {
      const a = await store.accept(job(1), T0);
      const b = await store.accept(job(1, { updateId: 999, fileId: "other-file-id", messageId: 77 }), T0);
      expect([b.created, b.job.id, b.job.fileId]).toEqual([false, a.job.id, "F1"]);
      const c = await store.accept(job(1, { chatId: 43 }), T0);
      expect(c.created).toBe(true);
      expect(c.job.id).not.toBe(a.job.id);
    });
    test("unknown name, MIME, size and language are stored as NULL", async () => {
      const { job: j } = await store.accept(job(1, { declaredName: null, declaredMime: null, declaredSize: null, languageCode: null, source: "photo" }), T0);
      expect([j.declaredName, j.declaredMime, j.declaredSize, j.languageCode, j.source]).toEqual([null, null, null, null, "photo"]);
      expect(j).toStrictEqual(await row(j.id));
    });
    test("Telegram-sized ids: a supergroup chat id and a 64-bit user id round-trip as numbers", async () => {
      const { job: j } = await store.accept(job(1, { chatId: -1001234567890, userId: 7_012_345_678, updateId: 987_654_321_012 }), T0);
      expect([j.chatId, j.userId, j.updateId]).toEqual([-1001234567890, 7_012_345_678, 987_654_321_012]);
      expect(typeof (await row(j.id))!.chatId).toBe("number");
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
      expect(again.job).toStrictEqual(await row(a.job.id));
      expect(again.job.leaseOwner).toBe("w1");
      expect((await store.accept(job(1, { variant: "pages" }), T0 + 4)).job.id).toBe(p.job.id);
    });
    test("many concurrent accepts of one key make one job", async () => {
      const all = await Promise.all(Array.from({ length: 12 }, (_, i) => store.accept(job(1, { updateId: 500 + i }), T0)));
      expect(all.filter((r) => r.created)).toHaveLength(1);
      expect(new Set(all.map((r) => r.job.id)).size).toBe(1);
      expect(await count()).toBe(1);
    });
  });

  describe(`${name}: claimDownload (seed 000: leases, budget in bytes)`, () => {
    test("a claim sets lease, owner, attempts and reservation; a second worker gets nothing", async () => {
      const { job: j } = await store.accept(job(1), T0);
      const c = await store.claimDownload("w1", T0, 60_000, budget);
      expect(c).toStrictEqual(await row(j.id));
      expect(c).toMatchObject({ id: j.id, leaseOwner: "w1", leaseUntil: "2026-11-30T10:01:00.000Z", attempts: 1, reservedBytes: 2 * MB, updatedAt: at(T0) });
      expect(await store.claimDownload("w2", T0 + 1000, 60_000, budget)).toBeNull();
    });
    test("after a backoff: backoff cleared, attempts + 1, the last error kept", async () => {
      const { job: j } = await store.accept(job(1), T0);
      await store.claimDownload("w1", T0, 1000, budget);
      await store.retryLater(j.id, "accepted", "w1", T0 + 2000, { reason: "download_failed", detail: "HTTP 502" }, T0 + 500);
      const c = await store.claimDownload("w2", T0 + 2000, 60_000, budget);
      expect(c).toStrictEqual(await row(j.id));
      expect(c).toMatchObject({ status: "accepted", leaseOwner: "w2", leaseUntil: at(T0 + 62_000), attempts: 2, reservedBytes: 2 * MB, notBefore: null, updatedAt: at(T0 + 2000), lastError: "HTTP 502" });
    });
    test("an expired lease makes the job claimable by another worker; the old holder can no longer move it", async () => {
      await store.accept(job(1), T0);
      await store.claimDownload("w1", T0, 60_000, budget);
      const again = await store.claimDownload("w2", T0 + 60_000, 60_000, budget);
      expect([again?.leaseOwner, again?.attempts]).toEqual(["w2", 2]);
      expect(await store.transition(again!.id, "accepted", "fetched", "w1", T0 + 61_000)).toBe(false);
      expect(await store.transition(again!.id, "accepted", "fetched", "w2", T0 + 61_000)).toBe(true);
    });
    test("oldest first; a job leased by another worker is skipped; fetched jobs are not download work", async () => {
      const ids = [];
      for (let n = 1; n <= 3; n++) ids.push((await store.accept(job(n), T0)).job.id);
      expect((await store.claimDownload("w1", T0, 60_000, budget))?.fileUniqueId).toBe("U1");
      expect((await store.claimDownload("w2", T0, 60_000, budget))?.fileUniqueId).toBe("U2");
      expect(await store.transition(ids[0]!, "accepted", "fetched", "w1", T0)).toBe(true);
      expect((await store.claimDownload("w3", T0, 60_000, budget))?.fileUniqueId).toBe("U3");
      expect(await store.claimDownload("w4", T0, 60_000, { ...budget, total: 1e12 })).toBeNull();
    });
    test("a job that does not fit the budget waits in accepted (head of line); a freed reservation lets it go", async () => {
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
    test("unknown size reserves the mode limit, capped at the budget; an idle budget admits one huge job", async () => {
      await store.accept(job(1, { declaredSize: null }), T0);
      expect((await store.claimDownload("w1", T0, 60_000, budget))?.reservedBytes).toBe(10 * MB);
      expect(await store.budgetInUse()).toBe(10 * MB);
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
      expect(await count()).toBe(0);
    });
    test("the reservation written equals the pure rule reservationFor for any declared size", async () => {
      let n = 0;
      await fc.assert(
        fc.asyncProperty(fc.option(fc.integer({ min: 0, max: 40 * MB }), { nil: null }), fc.constantFrom(1, 2, 2.5), async (size, multiplier) => {
          const params = { total: 30 * MB, multiplier, modeLimit: 20 * MB, floor: MB / 2 };
          const { job: j } = await store.accept(job(++n, { declaredSize: size }), T0);
          const c = await store.claimDownload("w", T0, 60_000, params);
          expect(c?.id).toBe(j.id);
          expect(c?.reservedBytes).toBe(reservationFor(size, multiplier, params.modeLimit, params.total, params.floor));
          expect(await store.fail(j.id, "accepted", "w", "cancelled", {}, "property run", T0)).toBe(true);
          await store.setReservation(j.id, 0);
        }),
        { numRuns: 25 },
      );
    });
    test("concurrent claims of many workers: every job once, and the budget is never overrun", async () => {
      for (let n = 1; n <= 20; n++) await store.accept(job(n, { declaredSize: MB }), T0); // 2 MB each: 5 fit in 10 MB
      const other = made.twin ? await made.twin() : store;
      const claimed = (await Promise.all(Array.from({ length: 16 }, (_, k) => (k % 2 ? other : store).claimDownload(`w${k}`, T0, 60_000, budget)))).filter((c) => c !== null);
      expect(new Set(claimed.map((c) => c!.id)).size).toBe(claimed.length);
      expect(claimed).toHaveLength(5);
      expect(await store.budgetInUse()).toBe(10 * MB);
    });
  });

  describe(`${name}: claimProcess`, () => {
    test("only fetched/processing jobs; the claim moves fetched → processing and sets lease, owner, attempts + 1", async () => {
      const f = await fetchedBy(1, "d1");
      await store.accept(job(2), T0); // download work, never process work
      expect(await store.claimProcess("p1", T0 + 59_999, 60_000)).toBeNull(); // the download holder keeps the lease
      const c = await store.claimProcess("p1", T0 + 60_000, 30_000);
      expect(c?.job).toStrictEqual(await row(f.id));
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
      expect(c?.job.id).toBe(f.id);
      expect(await store.retryLater(f.id, "processing", "p", T0 + 70_000, { reason: "download_failed", detail: "busy" }, T0 + 60_000)).toBe(true);
      expect(await store.claimProcess("q", T0 + 69_999, 60_000)).toBeNull();
      expect((await store.claimProcess("q", T0 + 70_000, 60_000))?.job.leaseOwner).toBe("q");
    });
    test("concurrent claims of many workers take every job exactly once", async () => {
      for (let n = 1; n <= 8; n++) await store.setReservation((await fetchedBy(n, "d")).id, 0);
      const got = await Promise.all(Array.from({ length: 12 }, (_, k) => store.claimProcess(`p${k}`, T0 + 60_000, 60_000)));
      const ids = got.filter((g) => g !== null).map((g) => g!.job.id);
      expect(ids).toHaveLength(8);
      expect(new Set(ids).size).toBe(8);
    });
  });

  describe(`${name}: handOver (the host holding the file processes it; issue 14 item 8)`, () => {
    const fetched = { localPath: "downloads/7-ab", sha256: "ab".repeat(32), realSize: 3 * MB, reservedBytes: 6 * MB };
    test("the download's holder: accepted → processing in one write, the download's fields and the processing claim (found fetched)", async () => {
      const { job: j } = await store.accept(job(1), T0);
      const d = await store.claimDownload("h/1", T0, 60_000, budget);
      expect([d?.id, d?.attempts]).toEqual([j.id, 1]);
      const c = await store.handOver(j.id, "h/1", T0 + 5_000, 30_000, fetched);
      expect(c?.found).toBe("fetched");
      expect(c?.job).toStrictEqual(await row(j.id));
      expect(c?.job).toMatchObject({ status: "processing", leaseOwner: "h/1", leaseUntil: at(T0 + 35_000), attempts: 1, notBefore: null, updatedAt: at(T0 + 5_000), localPath: fetched.localPath, sha256: fetched.sha256, realSize: 3 * MB, reservedBytes: 6 * MB, finishedAt: null });
      expect(await store.budgetInUse()).toBe(6 * MB);
      // Held: no other processing claim until the lease expires; then it is an abandoned try (redo from the source).
      expect(await store.claimProcess("h/2", T0 + 34_999, 60_000)).toBeNull();
      const taken = await store.claimProcess("h/2", T0 + 35_000, 60_000);
      expect([taken?.job.id, taken?.found, taken?.job.attempts, taken?.job.leaseOwner]).toEqual([j.id, "processing", 2, "h/2"]);
    });
    test("anyone but the lease holder, or a job no longer accepted, changes nothing (seed 000: conditional UPDATE)", async () => {
      const { job: j } = await store.accept(job(1), T0);
      await store.claimDownload("h/1", T0, 60_000, budget);
      const before = await row(j.id);
      expect(await store.handOver(j.id, "h/2", T0 + 1, 30_000, fetched)).toBeNull();
      expect(await row(j.id)).toStrictEqual(before);
      expect(await store.transition(j.id, "accepted", "fetched", "h/1", T0 + 2, { ...fetched, keepLease: true })).toBe(true);
      const fetchedRow = await row(j.id);
      expect(await store.handOver(j.id, "h/1", T0 + 3, 30_000, fetched)).toBeNull();
      expect(await row(j.id)).toStrictEqual(fetchedRow);
      const { job: free } = await store.accept(job(2), T0);
      expect(await store.handOver(free.id, "h/1", T0 + 4, 30_000, fetched)).toBeNull(); // accepted, never claimed: no lease holder
      expect((await row(free.id))?.status).toBe("accepted");
    });
  });

  describe(`${name}: carrying releases (claimDownload and handOver's \`release\`; issue 14 item 8)`, () => {
    /** Job `n` of `size` bytes taken to `ready` by `owner`, its reservation still held. */
    async function readyHolding(n: number, size: number, owner: string): Promise<FileJob> {
      const { job: j } = await store.accept(job(n, { declaredSize: size }), T0);
      expect((await store.claimDownload(owner, T0, 60_000, budget))?.id).toBe(j.id);
      expect(await store.transition(j.id, "accepted", "fetched", owner, T0, { localPath: `downloads/${j.id}-x`, keepLease: true })).toBe(true);
      expect(await store.transition(j.id, "fetched", "processing", owner, T0, { keepLease: true })).toBe(true);
      expect(await store.transition(j.id, "processing", "ready", owner, T0, { resultExpiresAt: at(T0 + 86_400_000) })).toBe(true);
      return (await row(j.id))!;
    }

    test("a claim carrying a finished job's release: released first, so the next job that fits only without it is claimed in the same call", async () => {
      const a = await readyHolding(1, 4 * MB, "h/1");
      expect(a.reservedBytes).toBe(8 * MB);
      const { job: b } = await store.accept(job(2, { declaredSize: 4 * MB }), T0);
      expect(await store.claimDownload("h/1", T0, 60_000, budget)).toBeNull(); // 8 + 8 MB over the 10 MB budget
      const c = await store.claimDownload("h/1", T0 + 1, 60_000, budget, [a.id]);
      expect(c).toStrictEqual(await row(b.id));
      expect([c?.id, c?.reservedBytes, (await row(a.id))?.reservedBytes, await store.budgetInUse()]).toEqual([b.id, 8 * MB, 0, 8 * MB]);
    });

    test("released whether or not a job is claimed; an active job's reservation is never released (as releaseReservation)", async () => {
      const a = await readyHolding(1, 2 * MB, "h/1");
      const { job: b } = await store.accept(job(2), T0);
      const held = await store.claimDownload("h/2", T0, 60_000, budget);
      expect(held?.id).toBe(b.id);
      expect(await store.claimDownload("h/1", T0 + 1, 60_000, budget, [a.id, b.id, 999_999])).toBeNull(); // nothing left to claim
      expect([(await row(a.id))?.reservedBytes, (await row(b.id))?.reservedBytes]).toEqual([0, 2 * MB]);
      expect(await row(b.id)).toStrictEqual(held);
    });

    test("a hand-over carrying a release: released in the same write, also when the hand-over itself changes nothing", async () => {
      const fetched = { localPath: "downloads/9-ab", sha256: "ab".repeat(32), realSize: MB, reservedBytes: 2 * MB };
      const a = await readyHolding(1, 2 * MB, "h/1");
      const b = await readyHolding(2, 2 * MB, "h/1");
      const { job: d } = await store.accept(job(3), T0);
      await store.claimDownload("h/1", T0, 60_000, budget);
      expect(await store.handOver(d.id, "h/other", T0 + 1, 30_000, fetched, [a.id])).toBeNull(); // not the holder
      expect((await row(a.id))?.reservedBytes).toBe(0);
      const c = await store.handOver(d.id, "h/1", T0 + 2, 30_000, fetched, [b.id]);
      expect([c?.job.status, c?.job.reservedBytes, (await row(b.id))?.reservedBytes, await store.budgetInUse()]).toEqual(["processing", 2 * MB, 0, 2 * MB]);
      expect(c?.job).toStrictEqual(await row(d.id));
    });
  });

  describe(`${name}: a second connection (another process)`, () => {
    test("never claims a job the first one holds", async () => {
      if (!made.twin) return;
      const store2 = await made.twin();
      for (let n = 1; n <= 6; n++) await store.accept(job(n), T0);
      const ids: number[] = [];
      for (let k = 0; k < 6; k++) ids.push((await (k % 2 ? store2 : store).claimDownload(`w${k % 2}`, T0, 60_000, { ...budget, total: 1e12 }))!.id);
      expect(new Set(ids).size).toBe(6);
      expect(await store2.claimDownload("w9", T0, 60_000, { ...budget, total: 1e12 })).toBeNull();
      // Both at once, from both connections: still every job once.
      for (let n = 7; n <= 16; n++) await store.accept(job(n), T0);
      const both = await Promise.all(Array.from({ length: 14 }, (_, k) => (k % 2 ? store2 : store).claimDownload(`x${k}`, T0, 60_000, { ...budget, total: 1e12 })));
      const got = both.filter((b) => b !== null).map((b) => b!.id);
      expect(got).toHaveLength(10);
      expect(new Set(got).size).toBe(10);
    });
  });

  describe(`${name}: transition (seed 000: conditional UPDATE)`, () => {
    test("an illegal move throws and changes nothing", async () => {
      const { job: j } = await store.accept(job(1), T0);
      await expect(store.transition(j.id, "accepted", "ready", "w", T0)).rejects.toThrow(/illegal transition/);
      expect(await row(j.id)).toStrictEqual(j);
    });
    test("from the wrong state: false, nothing changes", async () => {
      const { job: j } = await store.accept(job(1), T0);
      await store.claimDownload("w1", T0, 60_000, budget);
      expect(await store.transition(j.id, "fetched", "processing", "w1", T0)).toBe(false);
      expect((await row(j.id))?.status).toBe("accepted");
    });
    test("the patch's fields, lease released by default, attempts reset on request, no finished_at while active", async () => {
      const { job: j } = await store.accept(job(1), T0);
      await store.claimDownload("w", T0, 60_000, budget);
      const ok = await store.transition(j.id, "accepted", "fetched", "w", T0 + 5, {
        localPath: "downloads/1-ab", sha256: "a".repeat(64), realSize: 123, reservedBytes: 246, detectedType: "pdf", facts: "{\"pages\":1}", resultExpiresAt: "2026-12-01T00:00:00.000Z", resetAttempts: true,
      });
      expect(ok).toBe(true);
      expect(await row(j.id)).toMatchObject({
        status: "fetched", localPath: "downloads/1-ab", sha256: "a".repeat(64), realSize: 123, reservedBytes: 246, detectedType: "pdf", facts: "{\"pages\":1}",
        resultExpiresAt: "2026-12-01T00:00:00.000Z", attempts: 0, leaseOwner: null, leaseUntil: null, updatedAt: at(T0 + 5), finishedAt: null,
      });
    });
    test("keepLease keeps owner and deadline; attempts stay without resetAttempts", async () => {
      const { job: j } = await store.accept(job(1), T0);
      await store.claimDownload("w", T0, 60_000, budget);
      expect(await store.transition(j.id, "accepted", "fetched", "w", T0 + 1, { keepLease: true })).toBe(true);
      expect(await row(j.id)).toMatchObject({ status: "fetched", leaseOwner: "w", leaseUntil: at(T0 + 60_000), attempts: 1, localPath: null });
    });
    test("null in the patch clears a column, an absent or undefined field leaves it", async () => {
      const f = await fetchedBy(1, "w");
      expect(f.localPath).toBe(`downloads/${f.id}-x`);
      await store.transition(f.id, "fetched", "processing", "w", T0, { keepLease: true, localPath: undefined, sha256: "s" });
      expect(await row(f.id)).toMatchObject({ localPath: `downloads/${f.id}-x`, sha256: "s" });
      await store.transition(f.id, "processing", "ready", "w", T0 + 9, { localPath: null, reservedBytes: 0 });
      expect(await row(f.id)).toMatchObject({ status: "ready", localPath: null, sha256: "s", reservedBytes: 0, finishedAt: at(T0 + 9), leaseOwner: null });
    });
    test("a final state sets finished_at (failed by transition as well)", async () => {
      const { job: j } = await store.accept(job(1), T0);
      await store.claimDownload("w", T0, 60_000, budget);
      expect(await store.transition(j.id, "accepted", "failed", "w", T0 + 7)).toBe(true);
      expect(await row(j.id)).toMatchObject({ status: "failed", finishedAt: at(T0 + 7), leaseOwner: null });
    });
    test("not the lease holder, or no lease at all: false and the row is untouched", async () => {
      const { job: j } = await store.accept(job(1), T0);
      expect(await store.transition(j.id, "accepted", "fetched", "w", T0)).toBe(false);
      await store.claimDownload("w", T0, 60_000, budget);
      const before = await row(j.id);
      expect(await store.transition(j.id, "accepted", "fetched", "x", T0 + 1, { localPath: "p", resetAttempts: true })).toBe(false);
      expect(await store.transition(j.id + 1, "accepted", "fetched", "w", T0 + 1)).toBe(false);
      expect(await row(j.id)).toStrictEqual(before);
    });
  });

  describe(`${name}: renew, retryLater, fail, get`, () => {
    test("renew: only the holder's lease of an active job; a finished job keeps its deadline", async () => {
      const f = await fetchedBy(1, "w");
      expect(await store.renew(f.id, "x", T0 + 10, 60_000)).toBe(false);
      expect(await store.renew(f.id, "w", T0 + 10, 60_000)).toBe(true);
      expect((await row(f.id))?.leaseUntil).toBe(at(T0 + 60_010));
      await store.transition(f.id, "fetched", "processing", "w", T0, { keepLease: true });
      await store.transition(f.id, "processing", "ready", "w", T0, { keepLease: true });
      expect(await store.renew(f.id, "w", T0 + 20, 60_000)).toBe(false);
      expect(await row(f.id)).toMatchObject({ status: "ready", leaseOwner: "w", leaseUntil: at(T0 + 60_010) });
    });
    test("renew of a download lease (accepted): only the holder's, its deadline now + TTL", async () => {
      const { job: j } = await store.accept(job(1), T0);
      await store.claimDownload("w1", T0, 60_000, budget);
      expect(await store.renew(j.id, "w2", T0 + 10_000, 60_000)).toBe(false);
      expect((await row(j.id))?.leaseUntil).toBe("2026-11-30T10:01:00.000Z");
      expect(await store.renew(j.id, "w1", T0 + 10_000, 60_000)).toBe(true);
      expect(await row(j.id)).toMatchObject({ status: "accepted", leaseOwner: "w1", leaseUntil: "2026-11-30T10:01:10.000Z" });
    });
    test("retryLater: wrong holder or state changes nothing; the holder releases with a backoff and a detail", async () => {
      const { job: j } = await store.accept(job(1), T0);
      await store.claimDownload("w", T0, 60_000, budget);
      const before = await row(j.id);
      expect(await store.retryLater(j.id, "accepted", "x", T0 + 5000, { reason: "download_failed", detail: "no" }, T0 + 1)).toBe(false);
      expect(await store.retryLater(j.id, "fetched", "w", T0 + 5000, { reason: "download_failed", detail: "no" }, T0 + 1)).toBe(false);
      expect(await row(j.id)).toStrictEqual(before);
      expect(await store.retryLater(j.id, "accepted", "w", T0 + 5000, { reason: "download_failed", detail: "HTTP 502" }, T0 + 2)).toBe(true);
      expect(await row(j.id)).toMatchObject({ status: "accepted", leaseOwner: null, leaseUntil: null, notBefore: at(T0 + 5000), lastError: "HTTP 502", updatedAt: at(T0 + 2), attempts: 1 });
      expect(await store.claimDownload("w2", T0 + 4999, 60_000, budget)).toBeNull();
      expect((await store.claimDownload("w2", T0 + 5000, 60_000, budget))?.id).toBe(j.id);
    });
    test("fail by the holder: reason, JSON params, detail, lease released; others change nothing", async () => {
      const { job: j } = await store.accept(job(1), T0);
      await store.claimDownload("w", T0, 60_000, budget);
      const before = await row(j.id);
      expect(await store.fail(j.id, "accepted", "x", "too_big", { limit: 5, unit: "MB" }, "d", T0 + 1)).toBe(false);
      expect(await store.fail(j.id, "fetched", "w", "too_big", { limit: 5, unit: "MB" }, "d", T0 + 1)).toBe(false);
      expect(await store.fail(j.id, "fetched", null, "cancelled", {}, "d", T0 + 1)).toBe(false);
      expect(await row(j.id)).toStrictEqual(before);
      expect(await store.fail(j.id, "accepted", "w", "too_big", { limit: 5, unit: "MB" }, "declared 9 MB", T0 + 3)).toBe(true);
      expect(await row(j.id)).toMatchObject({
        status: "failed", reason: "too_big", reasonParams: "{\"limit\":5,\"unit\":\"MB\"}", lastError: "declared 9 MB",
        leaseOwner: null, leaseUntil: null, updatedAt: at(T0 + 3), finishedAt: at(T0 + 3), attempts: 1, reservedBytes: 2 * MB,
      });
    });
    test("/cancel fails a job without the lease: one a worker holds, and one still waiting (never claimed)", async () => {
      const { job: j } = await store.accept(job(1), T0);
      await store.claimDownload("w", T0, 60_000, budget);
      expect(await store.fail(j.id, "accepted", null, "cancelled", {}, "by user", T0)).toBe(true);
      expect(await row(j.id)).toMatchObject({ status: "failed", reason: "cancelled", finishedAt: at(T0), leaseOwner: null });
      const { job: waiting } = await store.accept(job(2), T0);
      expect(await store.fail(waiting.id, "accepted", null, "cancelled", {}, "by user", T0 + 1)).toBe(true);
      expect(await row(waiting.id)).toMatchObject({ status: "failed", reason: "cancelled", lastError: "by user", finishedAt: at(T0 + 1), leaseOwner: null, attempts: 0 });
    });
    test("get: undefined for an unknown id", async () => {
      const f = await fetchedBy(1, "w");
      expect(await store.get(f.id)).toStrictEqual(f);
      expect(await store.get(f.id + 100)).toBeUndefined();
    });
  });

  describe(`${name}: intake under concurrency (USER_MAX_JOBS_IN_FLIGHT)`, () => {
    test("one user's concurrent chats cannot pass the in-flight limit together", async () => {
      const limits = { maxInFlight: 3, maxBytesPerDay: 1e12 };
      const all = await Promise.all(
        Array.from({ length: 10 }, (_, i) => store.intake(job(i + 1, { chatId: 1000 + i }), T0, { edited: false, tooBig: null, limits, render: (d) => d.kind })),
      );
      expect(all.filter((r) => r.decision.kind === "accept")).toHaveLength(3);
      expect(all.filter((r) => r.decision.kind === "limit")).toHaveLength(7);
      expect(await count()).toBe(3);
      expect((await store.pendingReplies(T0, 100)).map((r) => r.kind).sort()).toEqual([...Array(3).fill("accepted"), ...Array(7).fill("limit")].sort());
    });
  });

  describe(`${name}: queue, re-arm, expiry, settings, results, counts`, () => {
    test("queue position counts waiting jobs ahead", async () => {
      const a = await store.accept(job(1), T0);
      const b = await store.accept(job(2), T0);
      const c = await store.accept(job(3), T0);
      expect(await store.queuePosition(a.job.id)).toBe(1);
      expect(await store.queuePosition(c.job.id)).toBe(3);
      await store.fail(b.job.id, "accepted", null, "cancelled", {}, "", T0);
      expect(await store.queuePosition(c.job.id)).toBe(2);
      expect(await store.queuePosition(b.job.id)).toBeNull();
    });
    test("re-arm a failed job for a re-sent file: every per-try column and the old results cleared", async () => {
      const f = await fetchedBy(1, "w");
      await store.putResults(f.id, [{ idx: 0, path: "results/x/0.txt", fileName: "a.txt", mime: "text/plain", size: 3 }]);
      await store.fail(f.id, "fetched", "w", "file_unavailable", {}, "", T0);
      expect(await store.rearm(f.id, "expired", { fileId: "NEW", updateId: 500, messageId: 9, languageCode: "ru" }, T0)).toBe(false);
      expect(await store.rearm(f.id, "failed", { fileId: "NEW", updateId: 500, messageId: 9, languageCode: "ru" }, T0 + 1)).toBe(true);
      expect(await row(f.id)).toMatchObject({ status: "accepted", fileId: "NEW", updateId: 500, messageId: 9, languageCode: "ru", attempts: 0, reason: null, localPath: null, sha256: null, leaseOwner: null, finishedAt: null, reservedBytes: 0, updatedAt: at(T0 + 1) });
      expect(await store.results(f.id)).toEqual([]);
    });
    test("expiry: due ready jobs, then ready → expired (row kept, reservation 0)", async () => {
      const f = await fetchedBy(1, "w");
      await store.transition(f.id, "fetched", "processing", "w", T0, { keepLease: true });
      await store.transition(f.id, "processing", "ready", "w", T0, { resultExpiresAt: "2026-11-30T11:00:00.000Z" });
      expect(await store.dueForExpiry(T0 + 3_599_999)).toHaveLength(0);
      expect((await store.dueForExpiry(T0 + 3_600_000)).map((r) => r.id)).toEqual([f.id]);
      expect(await store.expire(f.id, "failed", T0 + 3_600_000)).toBe(false);
      expect(await store.expire(f.id, "ready", T0 + 3_600_000)).toBe(true);
      expect(await row(f.id)).toMatchObject({ status: "expired", reservedBytes: 0 });
      expect(await store.dueForExpiry(T0 + 3_600_000)).toHaveLength(0);
    });
    test("findReadyBySha: a live ready job of the chat and variant, not this one, not expired", async () => {
      const f = await fetchedBy(1, "w");
      await store.transition(f.id, "fetched", "processing", "w", T0, { keepLease: true, sha256: "abc" });
      await store.transition(f.id, "processing", "ready", "w", T0, { resultExpiresAt: at(T0 + 1000) });
      expect((await store.findReadyBySha(42, "abc", "default", T0, 999))?.id).toBe(f.id);
      expect(await store.findReadyBySha(42, "abc", "default", T0, f.id)).toBeUndefined();
      expect(await store.findReadyBySha(42, "abc", "pages", T0, 999)).toBeUndefined();
      expect(await store.findReadyBySha(43, "abc", "default", T0, 999)).toBeUndefined();
      expect(await store.findReadyBySha(42, "abc", "default", T0 + 1000, 999)).toBeUndefined();
    });
    test("settings: defaults, then stored per chat", async () => {
      expect(await store.getSettings(-1001234567890)).toEqual({ pdfAction: "default" });
      await store.setSettings(-1001234567890, { pdfAction: "pages" }, T0);
      await store.setSettings(-1001234567890, { pdfAction: "default" }, T0 + 1);
      await store.setSettings(7, { pdfAction: "pages" }, T0);
      expect(await store.getSettings(-1001234567890)).toEqual({ pdfAction: "default" });
      expect(await store.getSettings(7)).toEqual({ pdfAction: "pages" });
    });
    test("results: replaced as a set, in idx order, file_ids recorded one by one", async () => {
      const { job: j } = await store.accept(job(1), T0);
      await store.putResults(j.id, [{ idx: 1, path: "r/1", fileName: "b.jpg", mime: "image/jpeg", size: 3_000_000_000 }, { idx: 0, path: "r/0", fileName: "a.txt", mime: "text/plain", size: 5 }]);
      await store.setResultFileId(j.id, 1, "BQAC-1");
      expect(await store.results(j.id)).toEqual([
        { jobId: j.id, idx: 0, path: "r/0", fileName: "a.txt", mime: "text/plain", size: 5, telegramFileId: null },
        { jobId: j.id, idx: 1, path: "r/1", fileName: "b.jpg", mime: "image/jpeg", size: 3_000_000_000, telegramFileId: "BQAC-1" },
      ]);
      await store.putResults(j.id, [{ idx: 0, path: "r2/0", fileName: "c.txt", mime: "text/plain", size: 1 }]);
      expect((await store.results(j.id)).map((r) => [r.idx, r.path, r.telegramFileId])).toEqual([[0, "r2/0", null]]);
    });
    test("listByChat newest first; listByState in id order; countByState; releaseReservation only for finished jobs", async () => {
      const a = await fetchedBy(1, "w");
      const { job: b } = await store.accept(job(2), T0);
      await store.accept(job(3, { chatId: 7 }), T0);
      expect((await store.listByChat(42, 10)).map((j) => j.id)).toEqual([b.id, a.id]);
      expect((await store.listByChat(42, 1)).map((j) => j.id)).toEqual([b.id]);
      expect((await store.listByState(["accepted", "fetched"])).map((j) => j.id)).toEqual([a.id, b.id, b.id + 1]);
      expect(await store.countByState()).toEqual({ fetched: 1, accepted: 2 });
      expect(await store.releaseReservation(a.id)).toBe(false); // active: keeps its reservation
      expect((await row(a.id))?.reservedBytes).toBe(2 * MB);
      await store.fail(a.id, "fetched", "w", "cancelled", {}, "", T0);
      expect(await store.releaseReservation(a.id)).toBe(true);
      expect(await store.releaseReservation(a.id)).toBe(false);
      expect(await store.budgetInUse()).toBe(0);
    });
    test("setReservationIf: only while the holder is the given owner (null: nobody holds it)", async () => {
      const { job: j } = await store.accept(job(1), T0);
      expect(await store.setReservationIf(j.id, null, 5)).toBe(true);
      await store.claimDownload("w", T0, 60_000, budget);
      expect(await store.setReservationIf(j.id, null, 7)).toBe(false);
      expect(await store.setReservationIf(j.id, "x", 7)).toBe(false);
      expect(await store.setReservationIf(j.id, "w", 9)).toBe(true);
      expect((await row(j.id))?.reservedBytes).toBe(9);
    });
  });
}
