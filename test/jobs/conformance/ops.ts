/**
 * Conformance: what the operator side reads and writes in the store (CONTRACTS.md §5; issue 10 items
 * 2, 3 and 6): `failed` jobs by reason, all of them (`docket_jobs_failed`) or those that ended since a
 * time (`docket status`); operator alerts recorded, claimed by one sender only, settled once, a claim
 * whose sender died taken over after 10 minutes.
 */
import { describe, expect, test } from "vitest";
import type { JobStore } from "../../../bot/jobs/store.ts";
import { newJob, T0 } from "../store-fixtures.ts";
import { useFactoryStore, type StoreFactory } from "./store-factory.ts";

/** The operator-read suite against stores from `make`. */
export function opsReadSuite(name: string, make: StoreFactory): void {
  describe(`${name}: countFailedByReason`, () => {
    let store: JobStore;
    useFactoryStore(make, (s) => (store = s));

    /** Accept document `n` at T0 and fail it at `at` with `reason`. */
    const failAt = async (n: number, reason: "too_big" | "encrypted", at: number) => {
      const { job } = await store.accept(newJob(n), T0);
      expect(await store.fail(job.id, "accepted", null, reason, {}, "test", at)).toBe(true);
    };

    test("by reason, all of them or those that ended since a time; other states never count", async () => {
      expect(await store.countFailedByReason()).toEqual({});
      await failAt(1, "too_big", T0 + 1000);
      await failAt(2, "too_big", T0 + 3_600_000);
      await failAt(3, "encrypted", T0 + 7_200_000);
      await store.accept(newJob(4), T0);
      expect(await store.countFailedByReason()).toEqual({ too_big: 2, encrypted: 1 });
      expect(await store.countFailedByReason(T0 + 3_600_000)).toEqual({ too_big: 1, encrypted: 1 });
      expect(await store.countFailedByReason(T0 + 7_200_001)).toEqual({});
    });
  });

  describe(`${name}: operator alerts`, () => {
    let store: JobStore;
    useFactoryStore(make, (s) => (store = s));

    test("recorded pending; one claim wins; settled once; listed by time", async () => {
      const a = await store.recordAlert({ cause: "disk_low", text: "10 MB free", source: "bot" }, T0);
      const b = await store.recordAlert({ cause: "unit_failed", text: "docket-backup.service failed", source: "cli" }, T0 + 1000);
      expect((await store.pendingAlerts(T0 + 2000)).map((r) => [r.id, r.cause, r.text, r.source, r.state])).toEqual([
        [a, "disk_low", "10 MB free", "bot", "pending"],
        [b, "unit_failed", "docket-backup.service failed", "cli", "pending"],
      ]);
      expect([await store.claimAlert(a, T0 + 2000), await store.claimAlert(a, T0 + 2001)]).toEqual([true, false]);
      expect((await store.pendingAlerts(T0 + 3000)).map((r) => r.id)).toEqual([b]);
      expect(await store.settleAlert(b, "sent", null, T0 + 3000)).toBe(false); // not claimed
      expect(await store.settleAlert(a, "suppressed", "same cause sent at …", T0 + 3000)).toBe(true);
      expect(await store.settleAlert(a, "sent", null, T0 + 4000)).toBe(false); // settled once
      const all = await store.alertsSince(T0);
      expect(all.map((r) => [r.id, r.state, r.detail])).toEqual([
        [a, "suppressed", "same cause sent at …"],
        [b, "pending", null],
      ]);
      expect(all[0]!.settledAt).toBe(new Date(T0 + 3000).toISOString());
      expect((await store.alertsSince(T0 + 500)).map((r) => r.id)).toEqual([b]);
    });

    test("a claim abandoned for 10 minutes (its sender died) is claimable again", async () => {
      const a = await store.recordAlert({ cause: "backup_failed", text: "restic: no key", source: "cli" }, T0);
      expect(await store.claimAlert(a, T0)).toBe(true);
      expect(await store.pendingAlerts(T0 + 599_999)).toEqual([]);
      expect((await store.pendingAlerts(T0 + 600_001)).map((r) => r.id)).toEqual([a]);
      expect(await store.claimAlert(a, T0 + 600_001)).toBe(true);
      expect(await store.settleAlert(a, "sent", null, T0 + 600_002)).toBe(true);
    });
  });
}
