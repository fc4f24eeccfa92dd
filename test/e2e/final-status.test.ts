/**
 * A job's final status message shown from its record (bot/status/finals.ts; issue 14 item 6), through the
 * real bot and the strict emulator. A record left pending by a process that died after Telegram applied the
 * edit (the one instant a crash can repeat it) is shown again as the same edit: Telegram answers "message is
 * not modified", the chat does not change, and the record is closed. A chat that can never take it (the bot
 * blocked, the status message deleted) gives the record up with one journal line and sends nothing else.
 */
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import type { FileJob } from "../../bot/db/schema.ts";
import { copyRunner } from "../support/copy-runner.ts";
import { startStack, type Stack } from "../support/stack.ts";

let stack: Stack | null = null;
afterEach(async () => {
  await stack?.stop();
  stack = null;
});

const bytes = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 7 + seed) & 255);

/** A ready job of a new user whose "Done" is in the chat and whose record is closed. */
async function doneJob(s: Stack) {
  const u = s.em.user({ language_code: "en" });
  const sent = await u.sendDocument({ bytes: bytes(2500, u.chatId % 200), file_name: "a.bin" });
  const job = await s.jobFor(u.chatId, sent.message_id);
  expect((await s.waitJob(job.id)).status).toBe("ready");
  await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${job.id}`)));
  await expect.poll(async () => (await s.app.services.store.get(job.id))?.finalDoneAt).not.toBeNull();
  return { u, job: (await s.app.services.store.get(job.id))! };
}

/** Open the record of job `id` again as a dead process of another host left it (held, its hold run out). */
function leftPending(s: Stack, id: number): void {
  const db = new Database(join(s.dir, "data", "db", "docket.sqlite"));
  try {
    db.query("UPDATE file_jobs SET final_done_at = NULL, final_owner = 'other-host/dead', final_until = '2000-01-01T00:00:00.000Z' WHERE id = ?").run(id);
  } finally {
    db.close();
  }
}

const edits = (s: Stack, chatId: number) => s.em.calls.filter((c) => c.method === "editMessageText" && c.chatId === chatId);
const closed = async (s: Stack, job: FileJob) => (await s.app.services.store.get(job.id))?.finalDoneAt ?? null;

test("a record repeated after a crash is the same edit: 'message is not modified', the chat unchanged, the record closed", async () => {
  stack = await startStack({ runner: copyRunner() });
  const { u, job } = await doneJob(stack);
  const before = u.messages();
  const n = edits(stack, u.chatId).length;
  leftPending(stack, job.id);
  await stack.app.finals.resume(); // (or the sender's own look every few seconds, whichever comes first)
  await expect.poll(() => closed(stack!, job)).not.toBeNull();
  const again = edits(stack, u.chatId).slice(n);
  expect(again.map((c) => [c.status, c.description?.slice(0, 36), Number(c.params.message_id)])).toEqual([[400, "Bad Request: message is not modified", job.statusMessageId]]);
  expect(u.messages()).toEqual(before);
  expect(stack.logs.some((l) => l.includes("final status message not shown"))).toBe(false);
});

test("a chat that cannot take it (bot blocked; the status message deleted): given up with one journal line, nothing else sent", async () => {
  stack = await startStack({ runner: copyRunner() });
  const cases = [
    { error: { error_code: 403, description: "Forbidden: bot was blocked by the user" }, why: "the chat cannot take it: Forbidden: bot was blocked by the user" },
    { error: { error_code: 400, description: "Bad Request: message to edit not found" }, why: "the status message is gone from the chat" },
  ];
  for (const c of cases) {
    const { u, job } = await doneJob(stack);
    const count = u.messages().length;
    const n = edits(stack, u.chatId).length;
    stack.em.failNext("editMessageText", c.error, { chatId: u.chatId });
    leftPending(stack, job.id);
    await stack.app.finals.resume(); // (or the sender's own look every few seconds, whichever comes first)
    await expect.poll(() => closed(stack!, job)).not.toBeNull();
    expect(edits(stack, u.chatId).slice(n).map((x) => x.status)).toEqual([c.error.error_code]);
    const lines = stack.logs.map((l) => JSON.parse(l) as { msg: string; job?: number }).filter((l) => l.job === job.id && l.msg.startsWith("final status message not shown; given up"));
    expect(lines).toHaveLength(1);
    expect(lines[0]!.msg).toContain(c.why);
    expect(u.messages()).toHaveLength(count);
    expect((await stack.app.services.store.get(job.id))?.finalTries).toBe(0);
  }
});
