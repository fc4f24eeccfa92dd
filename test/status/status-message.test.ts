/**
 * statusMessageOf (bot/status/status-message.ts; issue 14 item 5: status messages follow the job's
 * lease): a worker that did not send the job's first status message adopts the message_id of the
 * intake's pending reply, on a real SQLite store, also when that reply is marked sent between the
 * function's two reads.
 */
import { describe, expect, test } from "vitest";
import type { FileJob } from "../../bot/db/schema.ts";
import type { SqliteJobStore } from "../../bot/jobs/sqlite-store.ts";
import type { JobStore } from "../../bot/jobs/store.ts";
import { statusMessageOf } from "../../bot/status/status-message.ts";
import { MB, newJob, T0, useStore } from "../jobs/store-fixtures.ts";

let store: SqliteJobStore;
useStore("docket-status-message-", (f) => (store = f.store));

const limits = { maxInFlight: 10, maxBytesPerDay: 100 * MB };
const now = () => T0;

/** A job taken in by intake with its pending "accepted" status reply (as bot/intake does). */
async function intake(): Promise<{ job: FileJob; replyId: number }> {
  const r = await store.intake(newJob(1), T0, { edited: false, tooBig: null, limits, render: () => "Got it" });
  return { job: r.job!, replyId: r.reply!.id };
}

/** The store, with `hook` run once right after the first call of `method` has read its answer. */
function after(method: "get" | "pendingReplies", hook: () => Promise<void>): Pick<JobStore, "get" | "pendingReplies"> {
  let done = false;
  const once = async <T>(v: T): Promise<T> => {
    if (!done) {
      done = true;
      await hook();
    }
    return v;
  };
  return {
    get: async (id) => (method === "get" ? once(await store.get(id)) : store.get(id)),
    pendingReplies: async (n, limit, afterId) => (method === "pendingReplies" ? once(await store.pendingReplies(n, limit, afterId)) : store.pendingReplies(n, limit, afterId)),
  };
}

describe("statusMessageOf", () => {
  test("the reply is marked sent right after the row was read (null status message): its message_id is adopted, not null", async () => {
    const { job, replyId } = await intake();
    const found = await statusMessageOf(after("get", () => store.markReplySent(replyId, 777, T0)), job, now);
    expect(found).toBe(777);
  });

  test("the reply is marked sent right after the pending replies were read: its message_id is adopted", async () => {
    const { job, replyId } = await intake();
    expect(await statusMessageOf(after("pendingReplies", () => store.markReplySent(replyId, 778, T0)), job, now)).toBe(778);
  });

  test("no status reply pending and none recorded: null (this process sends one)", async () => {
    const { job, replyId } = await intake();
    await store.giveUpReply(replyId, "gave up", T0);
    expect(await statusMessageOf(store, job, now)).toBeNull();
  });

  test("the row already names its status message: that one, without reading the store", async () => {
    const { job } = await intake();
    const none = { get: () => Promise.reject(new Error("read")), pendingReplies: () => Promise.reject(new Error("read")) };
    expect(await statusMessageOf(none, { ...job, statusMessageId: 55 }, now)).toBe(55);
  });
});
