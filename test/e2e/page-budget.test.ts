/**
 * A real PDF page past PDF_PAGE_BUDGET through the real bot (issue 5 §3): the job fails
 * `processing_timeout` after one try (the same page with the same budget would fail again),
 * and the chat is told which page.
 */
import { afterEach, expect, test } from "vitest";
import { makePdf, textShowOps } from "../../scripts/samples/index.ts";
import { startStack, type Stack } from "../support/stack.ts";

let stack: Stack | null = null;
afterEach(async () => {
  await stack?.stop();
  stack = null;
});

test("heavy page 2 over a 1 s page budget: failed/processing_timeout in 1 attempt, the chat names page 2", async () => {
  // Page 2 takes seconds to extract (5 M text operators); the wall clock stays far away (60 s).
  stack = await startStack({ env: { PDF_PAGE_BUDGET: "1s", PROCESS_TIMEOUT: "60s", MAX_ATTEMPTS: "3" } });
  const u = stack.em.user({ language_code: "en" });
  const pdf = makePdf({ pages: [["light page"], ["heavy page"]], contents: [null, textShowOps(5_000_000)] });
  const sent = await u.sendDocument({ bytes: pdf, file_name: "heavy.pdf" });
  const job = await stack.waitJob((await stack.jobFor(u.chatId, sent.message_id)).id, undefined, 60_000);
  expect([job.status, job.reason, job.attempts]).toEqual(["failed", "processing_timeout", 1]);
  expect(JSON.parse(job.reasonParams!)).toEqual({ seconds: 1, page: 2 });
  const msgs = await u.waitFor((m) => m.some((x) => x.text?.includes("took longer than")));
  expect(msgs.find((x) => x.text?.includes("took longer than"))!.text).toContain("Page 2 took longer than 1 s to process and was stopped.");
}, 90_000);
