/**
 * BR-06 in docket: a long PDF's progress edits ("processing page n/N") go through
 * the outbox; a progress editMessageText of the chat answers 429 retry_after 5.
 * Asserts: the outbox itself saw the 429 (ChatHold → docket_chat_holds_total = 1;
 * its Api has no auto-retry, seed 002: one action → exactly one API call), no
 * request to that chat during the hold (uploads included), the text that got the
 * 429 is not re-sent after the hold (edits collapse to the latest text), unchanged
 * text is never sent, the result arrives after the hold and the job ends ready.
 */
import { afterEach, expect, test } from "vitest";
import { makePdf } from "../../scripts/samples/index.ts";
import { sentDocuments } from "../support/sent-documents.ts";
import { startStack, type Stack } from "../support/stack.ts";

let stack: Stack | null = null;
afterEach(async () => {
  await stack?.stop();
  stack = null;
});

test("BR-06: 429 on a progress edit holds the whole chat for retry_after; the job still ends ready", async () => {
  stack = await startStack({ emulator: { rateLimits: {} }, env: { MAX_PDF_PAGES: "6000", PROCESS_TIMEOUT: "300s" } });
  const u = stack.em.user({ language_code: "en" });
  // The first progress edit ("processing page n/N") gets the 429: mid-stream, whatever the timing.
  stack.em.failNext("editMessageText", { error_code: 429, description: "Too Many Requests: retry after 2", retry_after: 2 }, { chatId: u.chatId, match: (p) => /processing page/.test(String(p.text)) });
  // ~2 MB, ~4 s of text extraction: outlasts the 2 s hold, so progress edits follow it.
  const pdf = await makePdf({ pages: Array.from({ length: 5000 }, (_, i) => Array.from({ length: 40 }, (_, l) => `Page ${i + 1} line ${l} lorem ipsum dolor sit amet`)) });
  const sent = await u.sendDocument({ bytes: pdf, file_name: "many.pdf" });
  const { id } = await stack.jobFor(u.chatId, sent.message_id);
  // Bounds, not delays: ~7 s idle, 81 s seen on a starved 2-core runner (the 90 s / 120 s bounds were too close).
  const job = await stack.waitJob(id, ["ready", "failed"], 240_000);
  expect(job.status).toBe("ready");
  expect(JSON.parse(job.facts!).pages).toBe(5000);
  await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${id}`)), 20_000);

  const calls = stack.em.calls.filter((c) => c.chatId === u.chatId);
  const hold = calls.find((c) => c.status === 429 && c.method === "editMessageText");
  expect(hold).toBeDefined();
  const during = calls.filter((c) => c.at > hold!.at && c.at < hold!.at + 2000);
  expect(during.map((c) => c.method)).toEqual([]);
  expect(calls.filter((c) => c.status === 429)).toHaveLength(1);
  // the outbox itself saw the 429 (one call per action, no auto-retry underneath): ChatHold → metric + log
  const holds = await stack.app.services.metrics.chatHolds.get();
  expect(holds.values.map((v) => v.value)).toEqual([1]);
  expect(stack.logs.filter((l) => l.includes('"chat hold after 429"'))).toHaveLength(1);
  // the text that got the 429 is stale after the hold: never re-sent; the first edit after it is newer
  const staleText = String(hold!.params.text);
  const after = calls.filter((c) => c.method === "editMessageText" && c.ok && c.at > hold!.at).map((c) => String(c.params.text));
  expect(after.length).toBeGreaterThan(0);
  expect(after).not.toContain(staleText);
  const pageOf = (t: string) => Number(/processing page (\d+)\//.exec(t)?.[1] ?? Number.POSITIVE_INFINITY);
  expect(pageOf(after[0]!)).toBeGreaterThan(pageOf(staleText));
  // the chat saw page progress, and never the same text twice in a row
  const edits = calls.filter((c) => c.method === "editMessageText" && c.ok).map((c) => String(c.params.text));
  expect(edits.some((t) => /processing page \d+\/5000/.test(t))).toBe(true);
  for (let i = 1; i < edits.length; i++) expect(edits[i]).not.toBe(edits[i - 1]);
  // results were uploaded (outside the hold, checked above) and "Done" was shown after the hold
  expect(sentDocuments(calls.filter((c) => c.ok)).map((d) => d.method)).toEqual(["sendMediaGroup", "sendMediaGroup"]); // text + page-1 preview, one album
  const done = calls.find((c) => c.method === "editMessageText" && c.ok && String(c.params.text).startsWith(`Done, job #${id}`));
  expect(done!.at).toBeGreaterThanOrEqual(hold!.at + 2000 - 50);
}, 300_000);
