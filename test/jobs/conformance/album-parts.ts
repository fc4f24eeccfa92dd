/**
 * Conformance: multi-part jobs (issue 13 item 5, albums). One album is one job keyed `album:<media_group_id>`;
 * its first part takes the album through intake (quota, one reply), later parts are added without a reply
 * and push the quiet interval (`not_before`) forward; a redelivered update adds nothing; a part that comes
 * while the album downloads joins it, and the job is `fetched` only when no part is left (`albumFetched`);
 * a part after that is `late` (nothing written). Every part counts against the sender's bytes of the day
 * (`daily_quota`); a grown budget share is reserved only when it fits (`reservePart`). Part writes happen
 * only under the job's lease while it is `accepted`.
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

    test("the quiet interval holds the claim; a part during the download joins it (not_before untouched); the job is fetched only when no part is left; a part after that is late and writes nothing", async () => {
      await take(1, T0);
      expect(await store.claimDownload("h/w", T0 + QUIET - 1, 60_000, BUDGET)).toBeNull();
      const claimed = await store.claimDownload("h/w", T0 + QUIET, 60_000, BUDGET);
      expect(claimed).toMatchObject({ status: "accepted", source: "album", leaseOwner: "h/w" });
      const id = claimed!.id;
      // Part 2 comes while part 1 is downloading: it joins; the download holds the job, so no new quiet interval.
      expect(await take(2, T0 + QUIET + 1)).toMatchObject({ kind: "added", job: { id, leaseOwner: "h/w", notBefore: null, declaredSize: 2 * MB } });
      expect((await store.parts(id)).map((p) => [p.messageId, p.status])).toEqual([
        [1, "accepted"],
        [2, "accepted"],
      ]);
      const file = (n: number) => ({ localPath: `/d/${id}-000000000000000${n}`, sha256: "ab", realSize: MB });
      expect(await store.markPartFetched(id, 1, "h/w", file(1))).toBe(true);
      const patch = { realSize: MB, reservedBytes: 2 * MB, resetAttempts: true };
      expect(await store.albumFetched(id, "h/w", T0 + QUIET + 2, patch)).toBe("parts_pending");
      expect(await store.albumFetched(id, "other/w", T0 + QUIET + 2, patch)).toBe("lost");
      expect((await store.get(id))!.status).toBe("accepted");
      expect(await store.markPartFetched(id, 2, "h/w", file(2))).toBe(true);
      expect(await store.albumFetched(id, "h/w", T0 + QUIET + 3, { ...patch, realSize: 2 * MB })).toBe("fetched");
      expect(await store.get(id)).toMatchObject({ status: "fetched", realSize: 2 * MB, reservedBytes: 2 * MB, attempts: 0, leaseOwner: null });
      expect(await store.albumFetched(id, "h/w", T0 + QUIET + 4, patch)).toBe("lost");
      // The download has finished: part 3 is late, nothing written.
      expect(await take(3, T0 + QUIET + 5)).toMatchObject({ kind: "late", job: { id, status: "fetched" } });
      expect(await store.parts(id)).toHaveLength(2);
    });

    test("a part that joins an album waiting out a retry's backoff keeps the later backoff", async () => {
      await take(1, T0);
      const { id } = (await store.claimDownload("h/w", T0 + QUIET, 60_000, BUDGET))!;
      expect(await store.retryLater(id, "accepted", "h/w", T0 + 60_000, { reason: "download_failed", detail: "network" }, T0 + QUIET)).toBe(true);
      expect(await take(2, T0 + QUIET + 10)).toMatchObject({ kind: "added", job: { id, leaseOwner: null, notBefore: iso(T0 + 60_000) } });
      // A backoff shorter than the quiet interval gives way to it.
      expect(await take(3, T0 + 60_000 - 10)).toMatchObject({ kind: "added", job: { id, notBefore: iso(T0 + 60_000 - 10 + QUIET) } });
    });

    test("the daily quota per part: a part after the sender's bytes of the day are used up is recorded failed/daily_quota and adds nothing; the album is one job for the in-flight limit", async () => {
      const limits = { maxInFlight: 1, maxBytesPerDay: 2.5 * MB };
      const takeQ = (n: number, now: number, o: Partial<IntakeOptions> = {}) => store.intakeAlbumPart(album(n), part(n), now, QUIET, { ...options, limits, ...o });
      const first = await takeQ(1, T0);
      const id = first.kind === "first" ? first.intake.job!.id : 0;
      expect(first).toMatchObject({ kind: "first", intake: { decision: { kind: "accept" } } });
      // 1 MB and 2 MB used: under 2.5 MB, taken — and USER_MAX_JOBS_IN_FLIGHT 1 does not refuse them (one job).
      expect(await takeQ(2, T0 + 100)).toMatchObject({ kind: "added", job: { id, declaredSize: 2 * MB } });
      expect(await takeQ(3, T0 + 200)).toMatchObject({ kind: "added", job: { id, declaredSize: 3 * MB } });
      const over = await takeQ(4, T0 + 300);
      expect(over).toMatchObject({ kind: "added", refused: "daily_quota", job: { id, declaredSize: 3 * MB } });
      expect((await takeQ(5, T0 + 400, { partOverQuota: (used) => ({ params: { used: used / MB, limit: 2.5 }, detail: `used ${used}` }) })).kind).toBe("added");
      expect((await store.parts(id)).map((p) => [p.messageId, p.status, p.reason, p.reasonParams, p.lastError])).toEqual([
        [1, "accepted", null, null, null],
        [2, "accepted", null, null, null],
        [3, "accepted", null, null, null],
        [4, "failed", "daily_quota", JSON.stringify({ used: 3 * MB, limit: 2.5 * MB }), `the sender used ${3 * MB} B of USER_MAX_BYTES_PER_DAY ${2.5 * MB} B in the last 24 h`],
        [5, "failed", "daily_quota", JSON.stringify({ used: 3, limit: 2.5 }), `used ${3 * MB}`],
      ]);
      expect((await store.get(id))!.declaredSize).toBe(3 * MB);
      // The album's later parts wrote no reply: one for the album.
      expect((await store.pendingReplies(T0 + 1000, 10)).map((r) => r.updateId)).toEqual([101]);
    });

    test("reservePart: a grown share is reserved when it fits or is not more than held; otherwise the job waits for the budget (lease released, the claim's attempt returned, what is on disk kept)", async () => {
      await take(1, T0);
      const { id, reservedBytes } = (await store.claimDownload("h/w", T0 + QUIET, 60_000, BUDGET))!;
      expect(reservedBytes).toBe(2 * MB);
      expect(await store.reservePart(id, "h/w", 4 * MB, 0, BUDGET.total)).toBe("reserved");
      expect((await store.get(id))!.reservedBytes).toBe(4 * MB);
      // Another job takes 6 MB of the 10 MB budget.
      await store.accept(newJob(50, { declaredSize: 3 * MB }), T0);
      expect(await store.claimDownload("h/x", T0 + QUIET, 60_000, BUDGET)).toMatchObject({ fileUniqueId: "U50", reservedBytes: 6 * MB });
      expect(await store.reservePart(id, "h/w", 3 * MB, 0, BUDGET.total)).toBe("reserved"); // not more than held
      expect(await store.reservePart(id, "other/w", 4 * MB, 0, BUDGET.total)).toBe("lost");
      expect(await store.reservePart(id, "h/w", 5 * MB, MB, BUDGET.total)).toBe("yielded"); // 6 + 5 > 10
      expect(await store.get(id)).toMatchObject({ status: "accepted", leaseOwner: null, leaseUntil: null, attempts: 0, reservedBytes: MB });
      expect(await store.reservePart(id, "h/w", 5 * MB, MB, BUDGET.total)).toBe("lost");
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
