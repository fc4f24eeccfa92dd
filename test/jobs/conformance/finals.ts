/**
 * Conformance: a job's final status message recorded with its final state (bot/status/finals.ts; issue 14
 * item 6). The record is written in the same UPDATE as `ready` (transition's `final`) and `failed` (fail's
 * `final`), held by the committing process; a holder that died leaves it to this host's next start or, once
 * its hold ran out, to any process; one holder at a time; a retry waits out its backoff; a re-arm clears it.
 */
import { describe, expect, test } from "vitest";
import type { FinalStatus, JobStore } from "../../../bot/jobs/store.ts";
import { BUDGET, MB, newJob, T0 } from "../store-fixtures.ts";
import { useFactoryStore, type StoreFactory } from "./store-factory.ts";

const roomy = { maxInFlight: 10, maxBytesPerDay: 100 * MB };
const final = (owner: string, until: number, text = "Done, job #1"): FinalStatus => ({ text, markup: JSON.stringify({ inline_keyboard: [[{ text: "Split", callback_data: "a:1:split" }]] }), owner, until });

/** The final-status suite against stores from `make`. */
export function finalsSuite(name: string, make: StoreFactory): void {
  describe(`${name}: final status messages recorded with the final state`, () => {
    let store: JobStore;
    useFactoryStore(make, (s) => (store = s));
    const take = (n: number, over: Parameters<typeof newJob>[1] = {}) => store.intake(newJob(n, over), T0, { edited: false, tooBig: null, limits: roomy, render: () => "text" });
    /** A job of document `n` claimed for processing by `owner` (in `processing`). */
    const processing = async (n: number, owner: string) => {
      const id = (await take(n)).job!.id;
      await store.claimDownload(owner, T0, 60_000, BUDGET);
      await store.transition(id, "accepted", "fetched", owner, T0 + 1, { keepLease: true, resetAttempts: true });
      await store.transition(id, "fetched", "processing", owner, T0 + 2, { keepLease: true });
      return id;
    };

    test("ready: the record is written with the commit and only then; it is not pending for others while its holder holds it", async () => {
      const id = await processing(1, "h1/a");
      expect((await store.get(id))?.finalText).toBeNull();
      expect(await store.pendingFinals(T0 + 100_000, 10)).toEqual([]);
      // A commit that does not happen (wrong holder) writes no record.
      expect(await store.transition(id, "processing", "ready", "h2/x", T0 + 3, { resultExpiresAt: "2026-12-01T10:00:00.000Z", final: final("h2/x", T0 + 60_000) })).toBe(false);
      expect((await store.get(id))?.finalText).toBeNull();
      expect(await store.transition(id, "processing", "ready", "h1/a", T0 + 3, { resultExpiresAt: "2026-12-01T10:00:00.000Z", final: final("h1/a", T0 + 60_000) })).toBe(true);
      const row = (await store.get(id))!;
      expect([row.status, row.finalText, JSON.parse(row.finalMarkup!), row.finalOwner, row.finalUntil, row.finalTries, row.finalDoneAt]).toEqual([
        "ready",
        "Done, job #1",
        { inline_keyboard: [[{ text: "Split", callback_data: "a:1:split" }]] },
        "h1/a",
        "2026-11-30T10:01:00.000Z",
        0,
        null,
      ]);
      expect(await store.pendingFinals(T0 + 59_999, 10)).toEqual([]);
      expect(await store.claimFinal(id, "h2/b", T0 + 59_999, T0 + 120_000)).toBeNull();
      // Its holder renews; then it is shown and closed once.
      expect(await store.renewFinals("h1/a", T0 + 90_000)).toBe(1);
      expect(await store.renewFinals("h2/b", T0 + 90_000)).toBe(0);
      expect(await store.pendingFinals(T0 + 60_000, 10)).toEqual([]);
      expect(await store.finishFinal(id, T0 + 61_000)).toBe(true);
      expect(await store.finishFinal(id, T0 + 62_000)).toBe(false);
      const done = (await store.get(id))!;
      expect([done.finalDoneAt, done.finalOwner, done.finalUntil]).toEqual(["2026-11-30T10:01:01.000Z", null, null]);
      expect(await store.pendingFinals(T0 + 10_000_000, 10)).toEqual([]);
      expect(await store.claimFinal(id, "h2/b", T0 + 10_000_000, T0 + 10_060_000)).toBeNull();
    });

    test("a holder that died: any process takes the record once its hold ran out, one at a time", async () => {
      const id = await processing(1, "h1/a");
      await store.transition(id, "processing", "ready", "h1/a", T0 + 3, { resultExpiresAt: "2026-12-01T10:00:00.000Z", final: final("h1/a", T0 + 60_000) });
      expect((await store.pendingFinals(T0 + 60_000, 10)).map((r) => r.id)).toEqual([id]);
      const b = await store.claimFinal(id, "h2/b", T0 + 60_000, T0 + 120_000);
      expect([b?.id, b?.finalOwner, b?.finalText]).toEqual([id, "h2/b", "Done, job #1"]);
      expect(await store.claimFinal(id, "h3/c", T0 + 60_001, T0 + 120_001)).toBeNull();
      expect(await store.claimFinal(id, "h2/b", T0 + 60_001, T0 + 120_001)).not.toBeNull(); // its own, again
      expect(await store.pendingFinals(T0 + 100_000, 10)).toEqual([]);
    });

    test("failed (held and /cancel): the record comes with the commit; this host's next start takes back its earlier process's records only", async () => {
      const held = await processing(1, "h1/a");
      expect(await store.fail(held, "processing", "h1/a", "processing_crashed", {}, "child exited", T0 + 5, final("h1/a", T0 + 60_000, "Job #1 failed"))).toBe(true);
      const c = (await take(2)).job!.id;
      expect(await store.fail(c, "accepted", null, "cancelled", {}, "cancelled by the user", T0 + 6, final("h2/x", T0 + 60_000, "Job #2 failed: cancelled"))).toBe(true);
      // A failure recorded without a final status (none to show) leaves the columns empty.
      const quiet = (await take(3)).job!.id;
      expect(await store.fail(quiet, "accepted", null, "cancelled", {}, "cancelled", T0 + 7)).toBe(true);
      expect((await store.get(quiet))?.finalText).toBeNull();
      expect([(await store.get(held))?.finalText, (await store.get(c))?.finalText]).toEqual(["Job #1 failed", "Job #2 failed: cancelled"]);
      // h1's next process takes back h1's records at once; h2's stay held until their hold runs out.
      expect(await store.reclaimHostFinals("h1", "h1/new")).toBe(1);
      expect((await store.pendingFinals(T0 + 10, 10)).map((r) => r.id)).toEqual([held]);
      expect(await store.reclaimHostFinals("h1", "h1/new")).toBe(0);
      expect((await store.pendingFinals(T0 + 60_000, 10)).map((r) => r.id)).toEqual([held, c]);
      // A host id that is a prefix of another (h1 vs h10) is not the same host.
      const h10 = await processing(4, "h10/a");
      await store.fail(h10, "processing", "h10/a", "processing_crashed", {}, "x", T0 + 8, final("h10/a", T0 + 60_000));
      expect(await store.reclaimHostFinals("h1", "h1/new")).toBe(0);
    });

    test("a failed try: unheld, counted, not before its backoff; only its holder records it; a re-arm clears the record", async () => {
      const id = (await take(1)).job!.id;
      await store.fail(id, "accepted", null, "download_failed", {}, "getFile failed", T0 + 1, final("h1/a", T0 + 60_000, "Job #1 failed"));
      expect(await store.retryFinalLater(id, "h2/b", T0 + 30_000)).toBe(false);
      expect(await store.retryFinalLater(id, "h1/a", T0 + 30_000)).toBe(true);
      const row = (await store.get(id))!;
      expect([row.finalOwner, row.finalUntil, row.finalTries]).toEqual([null, "2026-11-30T10:00:30.000Z", 1]);
      expect(await store.pendingFinals(T0 + 29_999, 10)).toEqual([]);
      expect(await store.claimFinal(id, "h2/b", T0 + 29_999, T0 + 90_000)).toBeNull();
      expect((await store.pendingFinals(T0 + 30_000, 10)).map((r) => r.finalTries)).toEqual([1]);
      // A re-sent file re-arms the failed job: a new life, no old final status to show.
      expect((await take(1, { updateId: 900, messageId: 90 })).decision.kind).toBe("rearm");
      const again = (await store.get(id))!;
      expect([again.status, again.finalText, again.finalMarkup, again.finalOwner, again.finalUntil, again.finalTries, again.finalDoneAt]).toEqual(["accepted", null, null, null, null, 0, null]);
      expect(await store.pendingFinals(T0 + 10_000_000, 10)).toEqual([]);
    });
  });
}
