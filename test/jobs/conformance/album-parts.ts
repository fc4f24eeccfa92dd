/**
 * Conformance: multi-part jobs (issue 13 item 5, albums). One album is one job keyed `album:<media_group_id>`;
 * its first part takes the album through intake (quota, one reply), later parts are added without a reply
 * and push the quiet interval (`not_before`) forward; a redelivered update adds nothing; a part that comes
 * after the album's job was claimed is `late` (nothing written). Part writes happen only under the job's
 * lease while it is `accepted`.
 */
import { describe, expect, test } from "vitest";
import type { FileJob } from "../../../bot/db/schema.ts";
import type { IntakeDecision } from "../../../bot/jobs/intake-rules.ts";
import type { IntakeOptions, JobStore, NewJob, NewPart } from "../../../bot/jobs/store.ts";
import { BUDGET, MB, newJob, T0 } from "../store-fixtures.ts";
import { useFactoryStore, type StoreFactory } from "./store-factory.ts";

const iso = (ms: number) => new Date(ms).toISOString();
const QUIET = 2000;
const options: IntakeOptions = {
  edited: false,
  tooBig: null,
  limits: { maxInFlight: 10, maxBytesPerDay: 100 * MB },
  render: (d: IntakeDecision, j: FileJob | null) => `${d.kind}:${j?.id ?? "-"}`,
};
const album = (n: number): NewJob => newJob(n, { source: "album", fileId: "album:G1", fileUniqueId: "album:G1", declaredName: null, declaredMime: null, declaredSize: null });
const part = (n: number, over: Partial<NewPart> = {}): NewPart => ({
  updateId: 100 + n,
  messageId: n,
  source: "photo",
  fileId: `F${n}`,
  fileUniqueId: `U${n}`,
  declaredName: null,
  declaredMime: "image/jpeg",
  declaredSize: MB,
  reserveSize: MB,
  tooBig: null,
  ...over,
});

/** The album-parts suite against stores from `make`. */
export function albumPartsSuite(name: string, make: StoreFactory): void {
  describe(`${name}: album parts (issue 13 item 5)`, () => {
    let store: JobStore;
    useFactoryStore(make, (s) => (store = s));
    const take = (n: number, now: number, over: Partial<NewPart> = {}) => store.intakeAlbumPart(album(n), part(n, over), now, QUIET, options);

    test("the first part makes the album's job with one reply; later parts join it silently and push not_before", async () => {
      const first = await take(1, T0);
      expect(first.kind).toBe("first");
      const job = first.kind === "first" ? first.intake.job! : null;
      expect(job).toMatchObject({ status: "accepted", source: "album", fileUniqueId: "album:G1", declaredSize: MB, notBefore: iso(T0 + QUIET) });
      expect(first.kind === "first" && first.intake.reply).toMatchObject({ kind: "accepted", text: `accept:${job!.id}`, updateId: 101 });
      // Out of order (message 3 before 2): the album's order is message_id order.
      expect(await take(3, T0 + 500)).toMatchObject({ kind: "added", job: { id: job!.id, declaredSize: 2 * MB, notBefore: iso(T0 + 500 + QUIET) } });
      expect(await take(2, T0 + 900, { declaredSize: null, reserveSize: 20 * MB })).toMatchObject({ kind: "added", job: { declaredSize: 22 * MB, notBefore: iso(T0 + 900 + QUIET) } });
      expect((await store.parts(job!.id)).map((p) => [p.messageId, p.status, p.fileId])).toEqual([
        [1, "accepted", "F1"],
        [2, "accepted", "F2"],
        [3, "accepted", "F3"],
      ]);
      expect((await store.pendingReplies(T0 + 1000, 10)).map((r) => r.updateId)).toEqual([101]);
      expect(await take(2, T0 + 1000)).toMatchObject({ kind: "redelivered", job: { id: job!.id } });
      expect(await store.parts(job!.id)).toHaveLength(3);
    });

    test("the quiet interval holds the claim; a part after the claim is late and writes nothing", async () => {
      await take(1, T0);
      expect(await store.claimDownload("h/w", T0 + QUIET - 1, 60_000, BUDGET)).toBeNull();
      const claimed = await store.claimDownload("h/w", T0 + QUIET, 60_000, BUDGET);
      expect(claimed).toMatchObject({ status: "accepted", source: "album", leaseOwner: "h/w" });
      expect(await take(2, T0 + QUIET + 1)).toMatchObject({ kind: "late", job: { id: claimed!.id } });
      expect(await store.parts(claimed!.id)).toHaveLength(1);
    });

    test("a part over the limit is recorded failed/too_big and reserves nothing", async () => {
      const first = await take(1, T0);
      const id = first.kind === "first" ? first.intake.job!.id : 0;
      await take(2, T0, { declaredSize: 30 * MB, reserveSize: 0, tooBig: { params: { size: 30, limit: 20 }, detail: "declared over" } });
      expect((await store.parts(id)).map((p) => [p.status, p.reason, p.reasonParams])).toEqual([
        ["accepted", null, null],
        ["failed", "too_big", JSON.stringify({ size: 30, limit: 20 })],
      ]);
      expect((await store.get(id))!.declaredSize).toBe(MB);
    });

    test("part writes only by the lease holder of an accepted job: fetched, reset, failed", async () => {
      const first = await take(1, T0);
      const id = first.kind === "first" ? first.intake.job!.id : 0;
      await take(2, T0);
      const file = { localPath: "/d/1-0000000000000000", sha256: "ab", realSize: 5 };
      expect(await store.markPartFetched(id, 1, "h/w", file)).toBe(false); // not claimed yet
      await store.claimDownload("h/w", T0 + QUIET, 60_000, BUDGET);
      expect(await store.markPartFetched(id, 1, "other/w", file)).toBe(false);
      expect(await store.markPartFetched(id, 1, "h/w", file)).toBe(true);
      expect(await store.failPart(id, 2, "h/w", "file_unavailable", {}, "getFile: wrong file_id")).toBe(true);
      expect((await store.parts(id)).map((p) => [p.status, p.localPath, p.realSize, p.reason])).toEqual([
        ["fetched", file.localPath, 5, null],
        ["failed", null, null, "file_unavailable"],
      ]);
      expect(await store.resetPart(id, 1, "h/w")).toBe(true);
      expect((await store.parts(id))[0]).toMatchObject({ status: "accepted", localPath: null, sha256: null, realSize: null });
      await store.transition(id, "accepted", "fetched", "h/w", T0 + QUIET, { keepLease: true });
      expect(await store.markPartFetched(id, 1, "h/w", file)).toBe(false); // the job left `accepted`
    });

    test("a seed part (merge with the next files) is recorded before the first part; its size counts", async () => {
      const seed = part(0, { updateId: -900, messageId: 0, fileId: "SRC", reserveSize: 3 * MB });
      const r = await store.intakeAlbumPart(album(5), part(5), T0, QUIET, options, seed);
      const id = r.kind === "first" ? r.intake.job!.id : 0;
      expect(r.kind === "first" && r.intake.job).toMatchObject({ declaredSize: 4 * MB });
      expect((await store.parts(id)).map((p) => [p.messageId, p.updateId, p.fileId])).toEqual([
        [0, -900, "SRC"],
        [5, 105, "F5"],
      ]);
    });

    test("prompts: one per user and chat, the latest wins; get keeps it, take removes it; an old one is none", async () => {
      const first = await take(1, T0);
      const id = first.kind === "first" ? first.intake.job!.id : 0;
      await store.setPrompt({ chatId: 42, userId: 7, jobId: id, action: "extract" }, T0);
      await store.setPrompt({ chatId: 42, userId: 7, jobId: id, action: "split" }, T0 + 1);
      await store.setPrompt({ chatId: 42, userId: 8, jobId: id, action: "rotate" }, T0);
      expect(await store.getPrompt(42, 7, T0 + 2, 60_000)).toMatchObject({ action: "split", jobId: id });
      expect(await store.takePrompt(42, 7, T0 + 2, 60_000)).toMatchObject({ action: "split" });
      expect(await store.takePrompt(42, 7, T0 + 2, 60_000)).toBeNull();
      expect(await store.getPrompt(42, 8, T0 + 60_001, 60_000)).toBeNull();
      expect(await store.takePrompt(42, 8, T0 + 60_001, 60_000)).toBeNull();
      expect(await store.getPrompt(42, 8, T0, 60_000)).toBeNull(); // taken (and dropped) above
    });
  });
}
