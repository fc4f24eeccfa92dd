/**
 * Conformance: recording a source fetched again (JobStore.replaceSource; seed 000 resume rule, issue 16). Only the
 * lease holder of a job still in the given state may replace its path, size and SHA-256; state, lease, attempts
 * and reservation stay as they were.
 */
import { describe, expect, test } from "vitest";
import type { JobStore } from "../../../bot/jobs/store.ts";
import { BUDGET, newJob, T0 } from "../store-fixtures.ts";
import { useFactoryStore, type StoreFactory } from "./store-factory.ts";

/** The replaceSource suite against stores from `make`. */
export function sourceSuite(name: string, make: StoreFactory): void {
  describe(`${name}: replaceSource (seed 000 resume rule)`, () => {
    let store: JobStore;
    useFactoryStore(make, (s) => (store = s));
    const first = { localPath: "/srv/bot-api/t/documents/file_1.pdf", sha256: "a".repeat(64), realSize: 1000 };
    const again = { localPath: "/srv/bot-api/t/documents/file_7.pdf", sha256: "b".repeat(64), realSize: 1000 };

    /** A job fetched by `owner` (lease kept): the row. */
    const fetched = async (owner: string) => {
      await store.accept(newJob(1), T0);
      const c = (await store.claimDownload(owner, T0, 600_000, BUDGET))!;
      expect(await store.transition(c.id, "accepted", "fetched", owner, T0, { ...first, keepLease: true })).toBe(true);
      return (await store.get(c.id))!;
    };

    test("the holder replaces path, size and SHA-256; state, lease, attempts and reservation stay", async () => {
      const before = await fetched("h/1");
      expect(await store.replaceSource(before.id, "fetched", "h/1", T0 + 5, again)).toBe(true);
      const row = (await store.get(before.id))!;
      expect([row.localPath, row.sha256, row.realSize]).toEqual([again.localPath, again.sha256, again.realSize]);
      expect([row.status, row.leaseOwner, row.leaseUntil, row.attempts, row.reservedBytes]).toEqual(["fetched", "h/1", before.leaseUntil, before.attempts, before.reservedBytes]);
    });

    test("another owner, or a job no longer in that state, changes nothing", async () => {
      const before = await fetched("h/1");
      expect(await store.replaceSource(before.id, "fetched", "h/2", T0 + 5, again)).toBe(false);
      expect(await store.replaceSource(before.id, "processing", "h/1", T0 + 5, again)).toBe(false);
      expect((await store.get(before.id))!.localPath).toBe(first.localPath);
    });
  });
}
