/**
 * Retry policy of processor failures through the real bot (audit of issue 5, gap 4): a child
 * killed at the memory cap is final after one try (`too_much_memory`, a truthful chat text), and
 * a child past the wall clock is retried once, not MAX_ATTEMPTS times. Real pool children with
 * the test fault switch (processors/pool/protocol.ts `ChildFault`, sent with the job).
 */
import { afterAll, afterEach, expect, test } from "vitest";
import type { ChildFault } from "../../processors/pool/index.ts";
import { makePdf } from "../../scripts/samples/index.ts";
import { closeTestPool, poolRunner } from "../support/pool.ts";
import { startStack, type Stack } from "../support/stack.ts";

afterAll(closeTestPool);

let stack: Stack | null = null;
afterEach(async () => {
  await stack?.stop();
  stack = null;
});

/** Start a bot whose children all fail with `fault`, send one PDF, wait until its job failed. */
async function failedJob(fault: ChildFault, env: Record<string, string>) {
  stack = await startStack({ runner: poolRunner(fault), env: { MAX_ATTEMPTS: "3", ...env } });
  const u = stack.em.user({ language_code: "en" });
  const sent = await u.sendDocument({ bytes: makePdf({ pages: [[`${fault} stand-in`]] }), file_name: "file.pdf" });
  return { u, job: await stack.waitJob((await stack.jobFor(u.chatId, sent.message_id)).id, ["failed"], 60_000) };
}

test("memory cap: failed too_much_memory after 1 attempt (MAX_ATTEMPTS 3); the chat names the limit", async () => {
  const { u, job } = await failedJob("allocate", { PROCESS_MEMORY_MB: "200", PROCESS_RECYCLE_RSS_MB: "100" });
  expect([job.status, job.reason, job.attempts]).toEqual(["failed", "too_much_memory", 1]);
  expect(JSON.parse(job.reasonParams!)).toEqual({ limit_mb: 200 });
  const msgs = await u.waitFor((m) => m.some((x) => x.text?.includes("more memory than")));
  expect(msgs.find((x) => x.text?.includes("more memory than"))!.text).toContain("needs more memory than the 200 MB limit");
}, 90_000);

test("wall clock: failed processing_timeout after 2 attempts, not 3", async () => {
  const { job } = await failedJob("hang", { PROCESS_TIMEOUT: "1s" });
  expect([job.status, job.reason, job.attempts]).toEqual(["failed", "processing_timeout", 2]);
}, 90_000);
