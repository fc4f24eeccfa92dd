/**
 * Conformance: a job's history of tries (bot/jobs/attempts.ts; issue 11 item 5) and the byte budget of a
 * file without a declared size (seed 000: reserve by the upper bound of your own limit). Every retry,
 * failure, reclaim and re-arm adds one row in the same call as its state change; a re-arm keeps the rows.
 */
import { describe, expect, test } from "vitest";
import type { JobStore } from "../../../bot/jobs/store.ts";
import { BUDGET, MB, newJob, T0 } from "../store-fixtures.ts";
import { useFactoryStore, type StoreFactory } from "./store-factory.ts";

const roomy = { maxInFlight: 10, maxBytesPerDay: 100 * MB };
const big = { ...BUDGET, total: 1e12 };

/** The history and budget suite against stores from `make`. */
export function historySuite(name: string, make: StoreFactory): void {
  describe(`${name}: history of tries and the unsized reservation (issue 11 item 5)`, () => {
    let store: JobStore;
    useFactoryStore(make, (s) => (store = s));
    const take = (n: number, over: Parameters<typeof newJob>[1] = {}, tooBig: { params: Record<string, number>; detail: string } | null = null) =>
      store.intake(newJob(n, over), T0, { edited: false, tooBig, limits: roomy, render: () => "text" });
    const pick = (rows: Awaited<ReturnType<JobStore["attempts"]>>) => rows.map((a) => [a.step, a.attempt, a.outcome, a.reason, a.detail]);

    test("retry, interrupted, failed: one row each with its step and try number; a lost holder records nothing", async () => {
      const id = (await take(1)).job!.id;
      await store.claimDownload("h/a", T0, 60_000, big);
      expect(await store.retryLater(id, "accepted", "h/a", T0 + 1000, { reason: "download_failed", detail: "getFile: network error: ECONNRESET" }, T0 + 10)).toBe(true);
      expect(await store.retryLater(id, "accepted", "h/a", T0 + 1000, { reason: "download_failed", detail: "not the holder any more" }, T0 + 11)).toBe(false);
      await store.claimDownload("h/a", T0 + 1000, 60_000, big);
      await store.reclaimHostLeases("h", "h/b", T0 + 2000);
      await store.claimDownload("h/b", T0 + 2000, 60_000, big);
      await store.transition(id, "accepted", "fetched", "h/b", T0 + 2100, { keepLease: true, resetAttempts: true });
      await store.transition(id, "fetched", "processing", "h/b", T0 + 2200, { keepLease: true });
      expect(await store.fail(id, "processing", "h/b", "delivery_failed", { code: 403 }, "sendDocument: 403 Forbidden", T0 + 3000)).toBe(true);
      const rows = await store.attempts(id);
      expect(pick(rows)).toEqual([
        ["download", 1, "retry", "download_failed", "getFile: network error: ECONNRESET"],
        ["download", 2, "interrupted", "interrupted", "the process h/a holding it died; taken back by h/b"],
        ["delivery", 0, "failed", "delivery_failed", "sendDocument: 403 Forbidden"],
      ]);
      expect(rows.map((r) => r.at)).toEqual(["2026-11-30T10:00:00.010Z", "2026-11-30T10:00:02.000Z", "2026-11-30T10:00:03.000Z"]);
      expect(JSON.parse(rows[2]!.params!)).toEqual({ code: 403 });
    });

    test("a re-arm keeps the history and adds its own row; a too-big refusal at intake is a row too", async () => {
      const id = (await take(1)).job!.id;
      await store.claimDownload("h/a", T0, 60_000, big);
      await store.fail(id, "accepted", "h/a", "too_much_memory", { limit_mb: 512 }, "child RSS over the cap", T0 + 1);
      const again = await take(1, { updateId: 900, messageId: 90 });
      expect(again.decision.kind).toBe("rearm");
      const rows = await store.attempts(id);
      expect(pick(rows)).toEqual([
        ["download", 1, "failed", "too_much_memory", "child RSS over the cap"],
        ["intake", 1, "rearmed", "too_much_memory", "a re-sent file (update 900) started the job again from failed"],
      ]);
      expect(rows.map((r) => JSON.parse(r.params!))).toEqual([{ limit_mb: 512 }, { limit_mb: 512 }]); // the re-arm row keeps the text's values
      expect((await store.get(id))?.attempts).toBe(0); // the new life starts its own count
      // rearm() (outside intake) records its row the same way; a job not in `from` changes nothing.
      await store.fail(id, "accepted", null, "cancelled", {}, "cancelled by the user", T0 + 2);
      expect(await store.rearm(id, "expired", { fileId: "f-x", updateId: 901, messageId: 91, languageCode: "en" }, T0 + 3)).toBe(false);
      expect(await store.rearm(id, "failed", { fileId: "f-x", updateId: 902, messageId: 92, languageCode: "en" }, T0 + 4)).toBe(true);
      expect(pick(await store.attempts(id)).slice(2)).toEqual([
        ["download", 0, "failed", "cancelled", "cancelled by the user"],
        ["intake", 0, "rearmed", "cancelled", "a re-sent file (update 902) started the job again from failed"],
      ]);
      const tb = (await take(2, { declaredSize: 30 * MB }, { params: { size: 30, limit: 20 }, detail: "declared 31457280 B over the cloud download limit" })).job!.id;
      expect(pick(await store.attempts(tb))).toEqual([["intake", 0, "failed", "too_big", "declared 31457280 B over the cloud download limit"]]);
    });

    test("a file with no declared size reserves the mode's limit × multiplier at its claim", async () => {
      await take(1, { declaredSize: null });
      const c = await store.claimDownload("h/a", T0, 60_000, { total: 1e12, multiplier: 2.5, modeLimit: 20 * MB, floor: 8 * MB });
      expect(c?.reservedBytes).toBe(50 * MB);
      await take(2, { declaredSize: 20 * MB });
      const d = await store.claimDownload("h/a", T0, 60_000, { total: 1e12, multiplier: 2.5, modeLimit: 20 * MB, floor: 8 * MB });
      expect(d?.reservedBytes).toBe(c?.reservedBytes); // the same as a sized file at the limit
    });
  });
}
