/**
 * Conformance: taking back this host's earlier leases at start (CONTRACTS.md §6; issue 11 item 4). Owner ids
 * are `<host id>/<start id>`; a restarted process reclaims every active job leased by its own host's other
 * starts (and by pre-owner-id holders), never its own, never another host's, never a finished job.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { isReclaimable } from "../../../bot/jobs/owner.ts";
import type { JobStore } from "../../../bot/jobs/store.ts";
import { BUDGET, newJob, T0 } from "../store-fixtures.ts";
import { useFactoryStore, type StoreFactory } from "./store-factory.ts";

/** The reclaim suite against stores from `make`. */
export function reclaimSuite(name: string, make: StoreFactory): void {
  describe(`${name}: reclaimHostLeases (CONTRACTS.md §6)`, () => {
    let store: JobStore;
    useFactoryStore(make, (s) => (store = s));

    /** Accept document `n` and claim it for `owner` with a 10-minute lease (a budget nothing fills); the claimed row. */
    const held = async (n: number, owner: string) => {
      await store.accept(newJob(n), T0);
      const c = await store.claimDownload(owner, T0, 600_000, { ...BUDGET, total: Number.MAX_SAFE_INTEGER });
      expect(c?.leaseOwner).toBe(owner);
      return c!;
    };

    test("an earlier start of this host loses its live lease at once; state, attempts and reservation stay", async () => {
      const j = await held(1, "alpha/start-1");
      const taken = await store.reclaimHostLeases("alpha", "alpha/start-2", T0 + 1000);
      expect(taken).toEqual([{ id: j.id, status: "accepted", from: "alpha/start-1" }]);
      const row = await store.get(j.id);
      expect([row?.status, row?.leaseOwner, row?.leaseUntil, row?.attempts, row?.reservedBytes]).toEqual(["accepted", null, null, 1, j.reservedBytes]);
      // Claimable now, long before the old lease's deadline (T0 + 10 min).
      expect((await store.claimDownload("alpha/start-2", T0 + 1000, 600_000, BUDGET))?.id).toBe(j.id);
    });

    test("another host's lease, this start's own lease and a finished job are untouched", async () => {
      const other = await held(1, "beta/start-1");
      const own = await held(2, "alpha/start-2");
      const done = await held(3, "alpha/start-1");
      expect(await store.fail(done.id, "accepted", "alpha/start-1", "cancelled", {}, "test", T0)).toBe(true);
      expect(await store.reclaimHostLeases("alpha", "alpha/start-2", T0 + 1000)).toEqual([]);
      expect((await store.get(other.id))?.leaseOwner).toBe("beta/start-1");
      expect((await store.get(own.id))?.leaseOwner).toBe("alpha/start-2");
      expect(await store.claimDownload("alpha/start-2", T0 + 1000, 600_000, BUDGET)).toBeNull();
    });

    test("a host id that is a prefix of another (alpha vs alpha2) or holds a LIKE wildcard (a_b vs axb) is not confused", async () => {
      const longer = await held(1, "alpha2/s");
      const wild = await held(2, "axb/s");
      expect(await store.reclaimHostLeases("alpha", "alpha/me", T0)).toEqual([]);
      expect(await store.reclaimHostLeases("a_b", "a_b/me", T0)).toEqual([]);
      expect((await store.get(longer.id))?.leaseOwner).toBe("alpha2/s");
      expect((await store.get(wild.id))?.leaseOwner).toBe("axb/s");
    });

    test("a holder written before owner ids had a host part (w-<pid>-<hex>) is this host's: reclaimed", async () => {
      const legacy = await held(1, "w-4242-a1b2c3");
      expect((await store.reclaimHostLeases("alpha", "alpha/me", T0)).map((t) => t.id)).toEqual([legacy.id]);
    });

    test("jobs in fetched and processing are reclaimed too (the processing pool resumes them)", async () => {
      const a = await held(1, "alpha/old");
      expect(await store.transition(a.id, "accepted", "fetched", "alpha/old", T0, { keepLease: true })).toBe(true);
      const b = await held(2, "alpha/old");
      expect(await store.transition(b.id, "accepted", "fetched", "alpha/old", T0, { keepLease: true })).toBe(true);
      expect(await store.transition(b.id, "fetched", "processing", "alpha/old", T0, { keepLease: true })).toBe(true);
      const taken = await store.reclaimHostLeases("alpha", "alpha/new", T0);
      expect(taken.map((t) => [t.id, t.status]).sort()).toEqual([[a.id, "fetched"], [b.id, "processing"]].sort());
      expect((await store.claimProcess("alpha/new", T0, 600_000))?.job.id).toBe(a.id);
    });

    test("the store's choice equals the pure rule isReclaimable for any mix of holders", async () => {
      const hosts = ["alpha", "alpha2", "beta", "a_b", "axb"];
      const holder = fc.oneof(fc.tuple(fc.constantFrom(...hosts), fc.constantFrom("s1", "s2", "me")).map(([h, s]) => `${h}/${s}`), fc.constant("w-1-abc"));
      await fc.assert(
        fc.asyncProperty(fc.array(holder, { minLength: 1, maxLength: 6 }), fc.constantFrom(...hosts), async (holders, host) => {
          const self = `${host}/me`;
          const start = (await store.listByState(["accepted", "fetched", "processing", "ready", "failed", "expired"])).length;
          const ids: Array<[number, string]> = [];
          for (const [i, h] of holders.entries()) ids.push([(await held(start + i + 1, h)).id, h]);
          const taken = new Set((await store.reclaimHostLeases(host, self, T0)).map((t) => t.id));
          for (const [id, h] of ids) expect(taken.has(id), `${h} reclaimed by ${self}`).toBe(isReclaimable(h, self, host));
          // Leave nothing claimable for the next run: end every job of this run.
          for (const [id] of ids) expect(await store.fail(id, "accepted", null, "cancelled", {}, "property run", T0)).toBe(true);
        }),
        { numRuns: 40 },
      );
    });
  });
}
