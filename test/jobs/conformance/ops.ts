/**
 * Conformance: what the operator side reads from the store (CONTRACTS.md §5; issue 10 items 2 and 6):
 * `failed` jobs by reason, all of them (`docket_jobs_failed`) or those that ended since a time
 * (`docket status`: errors in the last hour).
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
}
