/**
 * Which chat message shows a job's status when the process working on it did not send it (issue 14
 * item 5: status messages follow the job's lease). With several processes the intake process records
 * the job and its first status message ("accepted") in one transaction and sends that reply from its
 * record (bot/intake/replies.ts); a worker on another host may claim the job before the reply is out.
 * It then waits for the reply to be marked sent and adopts its message_id — instead of sending a second
 * status message — as long as a status reply of the job is still pending.
 */
import type { FileJob } from "../db/schema.ts";
import { STATUS_REPLY_KINDS } from "../jobs/intake-rules.ts";
import type { JobStore } from "../jobs/store.ts";

/** How often the record is looked at again while the reply is pending, ms. */
const LOOK_EVERY_MS = 500;
/** Pending replies listed per look (the oldest first; a job's reply is among the first). */
const PENDING_LIMIT = 500;

/**
 * The job's status message_id: the row's, or the one its pending status reply gets once sent; null
 * when the job has none and none is coming (this process then sends one). Gives up after `maxWaitMs`
 * (default 60 s: the reply waits out chat holds and pacing) with null.
 */
export async function statusMessageOf(store: Pick<JobStore, "get" | "pendingReplies">, job: FileJob, now: () => number, maxWaitMs = 60_000): Promise<number | null> {
  if (job.statusMessageId !== null) return job.statusMessageId;
  const until = now() + maxWaitMs;
  for (;;) {
    // The pending replies first, then the row: marking a reply sent writes its message_id into the row in
    // the same transaction, so a reply pending at the first read and sent before the second shows in the
    // row. Read the other way round, a reply sent between the two reads was in neither, and a second
    // status message went out while the first stayed unedited ("Got …" never became "Done").
    // Due or waiting out a backoff: every pending reply (a day ahead covers any backoff).
    const pending = await store.pendingReplies(now() + 86_400_000, PENDING_LIMIT);
    const row = await store.get(job.id);
    if (!row || row.statusMessageId !== null) return row?.statusMessageId ?? null;
    if (!pending.some((r) => r.jobId === job.id && STATUS_REPLY_KINDS.has(r.kind))) return null;
    if (now() >= until) return null;
    await Bun.sleep(LOOK_EVERY_MS);
  }
}
