/**
 * Conformance: `JobStore.intake` and intake's transactional outbox (issue 11 items 3 and 5; seed 000
 * "Один файл — две доставки"). One transaction decides, writes the job and records the reply; the size
 * limit is checked before the quota; a too-big file is inserted `failed` in its one INSERT; a redelivered
 * update records no second reply; replies are pending until marked sent, retried, given up, pruned.
 */
import { describe, expect, test } from "vitest";
import type { FileJob } from "../../../bot/db/schema.ts";
import type { IntakeDecision } from "../../../bot/jobs/intake-rules.ts";
import type { IntakeOptions, JobStore, NewJob } from "../../../bot/jobs/store.ts";
import { BUDGET, MB, newJob, T0 } from "../store-fixtures.ts";
import { useFactoryStore, type StoreFactory } from "./store-factory.ts";

const roomy = { maxInFlight: 10, maxBytesPerDay: 100 * MB };
const iso = (ms: number) => new Date(ms).toISOString();

/** The intake suite against stores from `make`. */
export function intakeSuite(name: string, make: StoreFactory): void {
  describe(`${name}: intake in one transaction, with its reply (issue 11 items 3, 5)`, () => {
    let store: JobStore;
    useFactoryStore(make, (s) => (store = s));

    /** Take in document `n` (see newJob) with `opts`; the reply text names the decision and the job. */
    const take = (n: number, over: Partial<NewJob> = {}, opts: Partial<IntakeOptions> = {}, now = T0) =>
      store.intake(newJob(n, over), now, {
        edited: false,
        tooBig: null,
        limits: roomy,
        render: (d: IntakeDecision, j: FileJob | null) => `${d.kind}:${j?.id ?? "-"}:${j?.status ?? "-"}`,
        ...opts,
      });
    const tooBig = { params: { size: 30, limit: 20 }, detail: "declared 31457280 B over the cloud download limit 20971520 B" };

    /** A ready job of document `n` whose result lives until `until`. */
    async function ready(n: number, until: number): Promise<FileJob> {
      const { job } = await take(n);
      await store.claimDownload("h/w", T0, 60_000, { ...BUDGET, total: 1e12 });
      await store.transition(job!.id, "accepted", "fetched", "h/w", T0, { keepLease: true });
      await store.transition(job!.id, "fetched", "processing", "h/w", T0, { keepLease: true });
      await store.transition(job!.id, "processing", "ready", "h/w", T0, { resultExpiresAt: iso(until) });
      return (await store.get(job!.id))!;
    }

    test("a new file: accepted, and its reply recorded pending in the same call", async () => {
      const r = await take(1);
      expect(r.decision).toEqual({ kind: "accept" });
      expect(r.job).toMatchObject({ status: "accepted", userId: 42, createdAt: iso(T0), attempts: 0 });
      expect(r.reply).toMatchObject({ updateId: 101, chatId: 42, userId: 42, replyTo: 1, jobId: r.job!.id, kind: "accepted", text: `accept:${r.job!.id}:accepted`, sentAt: null, tries: 0 });
      expect((await store.pendingReplies(T0, 10)).map((x) => x.id)).toEqual([r.reply!.id]);
    });

    test("too big: inserted failed/too_big in its one INSERT (never claimable), reply recorded, not counted in the bytes of the day", async () => {
      const r = await take(1, { declaredSize: 30 * MB }, { tooBig });
      expect(r.decision).toEqual({ kind: "too_big" });
      expect(r.job).toMatchObject({ status: "failed", reason: "too_big", reasonParams: JSON.stringify(tooBig.params), lastError: tooBig.detail, finishedAt: iso(T0), reservedBytes: 0 });
      expect(r.reply?.kind).toBe("too_big");
      expect(await store.claimDownload("h/w", T0, 60_000, { ...BUDGET, total: 1e12 })).toBeNull();
      const next = await take(2, { declaredSize: MB }, { limits: { maxInFlight: 10, maxBytesPerDay: MB } });
      expect(next.decision).toEqual({ kind: "accept" });
    });

    test("the size limit is checked before the quota: a too-big file from a user at the limit is told it is too big", async () => {
      await take(1);
      const r = await take(2, { declaredSize: 30 * MB }, { tooBig, limits: { maxInFlight: 1, maxBytesPerDay: 100 * MB } });
      expect(r.decision).toEqual({ kind: "too_big" });
      expect(r.reply?.kind).toBe("too_big");
    });

    test("in flight: counted per user over active states only; at the limit no job, a limit reply", async () => {
      await take(1);
      await take(2);
      await take(3, { userId: 8, chatId: 43 }); // another user
      const refused = await take(4, {}, { limits: { ...roomy, maxInFlight: 2 } });
      expect(refused).toMatchObject({ decision: { kind: "limit", limit: "in_flight", count: 2 }, job: null, reply: { kind: "limit", jobId: null, text: "limit:-:-" } });
      await store.fail(1, "accepted", null, "cancelled", {}, "", T0);
      expect((await take(4, { updateId: 900 }, { limits: { ...roomy, maxInFlight: 2 } })).decision).toEqual({ kind: "accept" });
    });

    test("bytes per day: real size over declared, the last 24 h only; a forged negative size lowers nothing", async () => {
      await take(1, { declaredSize: 3 * MB }, {}, T0 - 86_400_001); // older than a day
      await take(2, { declaredSize: 3 * MB }, {}, T0 - 86_400_000); // exactly a day: counted
      await take(3, { declaredSize: -50 * MB }); // stored before sizes were validated: counts 0
      const refused = await take(4, {}, { limits: { maxInFlight: 10, maxBytesPerDay: 3 * MB } });
      expect(refused.decision).toEqual({ kind: "limit", limit: "bytes_per_day", used: 3 * MB });
      expect((await take(4, { updateId: 901 }, { limits: { maxInFlight: 10, maxBytesPerDay: 3 * MB + 1 } })).decision).toEqual({ kind: "accept" });
    });

    test("an existing job: a duplicate reply without the limits; the same update again (redelivered) records no reply", async () => {
      const a = await take(1);
      const again = await take(1, { updateId: 5, messageId: 50 }, { limits: { maxInFlight: 0, maxBytesPerDay: 0 } });
      expect(again.decision).toEqual({ kind: "duplicate" });
      expect(again.reply).toMatchObject({ kind: "duplicate", updateId: 5, replyTo: 50, jobId: a.job!.id });
      const redelivered = await take(1);
      expect([redelivered.decision, redelivered.reply]).toEqual([{ kind: "redelivered" }, null]);
      expect((await store.pendingReplies(T0, 10)).map((x) => x.kind)).toEqual(["accepted", "duplicate"]);
    });

    test("an edited message that kept its file: nothing recorded", async () => {
      await take(1);
      const r = await take(1, { updateId: 7 }, { edited: true });
      expect([r.decision, r.reply]).toEqual([{ kind: "edit_kept_file" }, null]);
    });

    test("a live result: resend; a result past its TTL: expired, then re-armed with the new message", async () => {
      const j = await ready(1, T0 + 3_600_000);
      expect((await take(1, { updateId: 7 })).decision).toEqual({ kind: "resend" });
      const late = await take(1, { updateId: 8, messageId: 80, fileId: "F-new" }, {}, T0 + 3_600_000);
      expect(late.decision).toEqual({ kind: "rearm", from: "expired", expireFirst: true });
      expect(late.job).toMatchObject({ id: j.id, status: "accepted", fileId: "F-new", messageId: 80, updateId: 8, resultExpiresAt: null, statusMessageId: null });
      expect(late.reply).toMatchObject({ kind: "accepted", jobId: j.id, text: `rearm:${j.id}:accepted` });
    });

    test("a failed job: re-armed for a fixable reason, a duplicate for a final one; still too big: too_big_again, the job stays", async () => {
      const a = (await take(1)).job!;
      await store.fail(a.id, "accepted", null, "download_failed", {}, "", T0);
      expect((await take(1, { updateId: 7 })).decision).toEqual({ kind: "rearm", from: "failed", expireFirst: false });
      const b = (await take(2)).job!;
      await store.fail(b.id, "accepted", null, "not_pdf", {}, "", T0);
      expect((await take(2, { updateId: 8 })).decision).toEqual({ kind: "duplicate" });
      const c = (await take(3, { declaredSize: 30 * MB }, { tooBig })).job!;
      const again = await take(3, { updateId: 9, declaredSize: 30 * MB }, { tooBig });
      expect(again.decision).toEqual({ kind: "too_big_again", expireFirst: false });
      expect(again.reply).toMatchObject({ kind: "too_big_again", jobId: c.id });
      expect((await store.get(c.id))?.status).toBe("failed");
    });

    test("markReplySent: sent with its message_id; a status reply stores its job's status_message_id; not pending any more", async () => {
      const a = await take(1);
      const d = await take(1, { updateId: 5 });
      await store.markReplySent(a.reply!.id, 700, T0 + 10);
      await store.markReplySent(d.reply!.id, 701, T0 + 20);
      expect((await store.get(a.job!.id))?.statusMessageId).toBe(700); // the duplicate (701) is not a status message
      expect(await store.pendingReplies(T0 + 30, 10)).toEqual([]);
    });

    test("noteReplyMessage: the id of a reply the chat shows, still pending until marked sent; never overwritten", async () => {
      const r = (await take(1)).reply!;
      await store.noteReplyMessage(r.id, 700);
      await store.noteReplyMessage(r.id, 701);
      expect((await store.pendingReplies(T0 + 30, 10)).map((x) => [x.id, x.messageId, x.sentAt])).toEqual([[r.id, 700, null]]);
      await store.markReplySent(r.id, 700, T0 + 40);
      expect(await store.pendingReplies(T0 + 50, 10)).toEqual([]);
      await store.noteReplyMessage(r.id, 702); // sent: nothing changes
      await store.markReplySent(r.id, 703, T0 + 60);
      expect((await store.get(r.jobId!))?.statusMessageId).toBe(700);
    });

    test("retry later, give up, prune; pendingReplies pages by id", async () => {
      const a = (await take(1)).reply!;
      const b = (await take(2)).reply!;
      const c = (await take(3)).reply!;
      await store.retryReplyLater(a.id, T0 + 30_000, "HttpError: network");
      expect((await store.pendingReplies(T0, 10)).map((r) => r.id)).toEqual([b.id, c.id]);
      expect((await store.pendingReplies(T0 + 30_000, 10)).find((r) => r.id === a.id)).toMatchObject({ tries: 1, lastError: "HttpError: network" });
      expect((await store.pendingReplies(T0 + 30_000, 1, a.id)).map((r) => r.id)).toEqual([b.id]);
      await store.giveUpReply(b.id, "403 blocked", T0);
      await store.markReplySent(c.id, 5, T0);
      expect((await store.pendingReplies(T0 + 30_000, 10)).map((r) => r.id)).toEqual([a.id]);
      expect(await store.pruneReplies(T0 + 1)).toBe(2); // b (given up) and c (sent); a is still pending
      expect((await store.pendingReplies(T0 + 30_000, 10)).map((r) => r.id)).toEqual([a.id]);
    });

    test("recordRefusal: at most one per user within the window, across chats; none twice for one update", async () => {
      const r = { updateId: 1, chatId: -100, userId: 9, replyTo: 3, text: "Sorry" };
      expect(await store.recordRefusal(r, T0, 86_400_000)).toMatchObject({ kind: "refused", userId: 9, chatId: -100, jobId: null, sentAt: null });
      expect(await store.recordRefusal({ ...r, updateId: 2, chatId: 9 }, T0 + 86_399_999, 86_400_000)).toBeNull();
      expect(await store.recordRefusal({ ...r, updateId: 3, userId: 10 }, T0, 86_400_000)).not.toBeNull(); // another user
      expect(await store.recordRefusal({ ...r, updateId: 4 }, T0 + 86_400_001, 86_400_000)).not.toBeNull(); // a day later
      expect(await store.recordRefusal({ ...r, updateId: 4, userId: 11 }, T0, 86_400_000)).toBeNull(); // update 4 has its reply
    });
  });
}
