/**
 * What the chat sees while a job moves (issue 3 §12, seed 000): one status message per job,
 * edited from "processing…" and "file received, waiting" to "Done"; and the result-size check
 * before anything is uploaded (seed 000: a separate step before `ready`).
 */
import { afterEach, expect, test } from "vitest";
import type { ProcessRunner } from "../../bot/worker/types.ts";
import { copyRunner } from "../support/copy-runner.ts";
import { startStack, type Stack } from "../support/stack.ts";

let stack: Stack | null = null;
afterEach(async () => {
  await stack?.stop();
  stack = null;
});

const bytes = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 13 + seed) & 255);

/** A copying runner whose first call waits until `release()`; later calls copy at once. */
function gatedRunner(): ProcessRunner & { release: () => void } {
  const copy = copyRunner();
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  let first = true;
  const run = (async (...args: Parameters<ProcessRunner>) => {
    if (first) {
      first = false;
      await gate;
    }
    return copy(...args);
  }) as ProcessRunner & { release: () => void };
  run.release = () => open();
  return run;
}

test("one status message per job: 'processing…' while it runs, 'file received, waiting' behind it, then Done", async () => {
  const runner = gatedRunner();
  stack = await startStack({ runner, env: { PROCESS_CONCURRENCY: "1" } });
  const u = stack.em.user({ language_code: "en" });
  const a = await u.sendDocument({ bytes: bytes(3000, 1), file_name: "a.bin" });
  const jobA = await stack.jobFor(u.chatId, a.message_id);
  await stack.waitJob(jobA.id, ["processing"]);
  await u.waitFor((m) => m.some((x) => x.text === `Job #${jobA.id}: processing…`));

  const b = await u.sendDocument({ bytes: bytes(2048, 2), file_name: "b.bin" });
  const jobB = await stack.jobFor(u.chatId, b.message_id);
  await stack.waitJob(jobB.id, ["fetched"]);
  await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Job #${jobB.id}: file received (2 KB), waiting for processing`)));

  runner.release();
  for (const id of [jobA.id, jobB.id]) expect((await stack.waitJob(id)).status).toBe("ready");
  const msgs = await u.waitFor((m) => [jobA.id, jobB.id].every((id) => m.some((x) => x.text?.startsWith(`Done, job #${id}`))));
  // Each job's status lives in one message, edited in place: the progress texts are gone from the chat.
  const statusOf = (id: number) => msgs.filter((x) => x.text?.includes(`#${id}`) && !x.document);
  for (const id of [jobA.id, jobB.id]) expect(statusOf(id).map((x) => x.text!.slice(0, 12))).toEqual([`Done, job #${id}`.slice(0, 12)]);
});

test("an output over UPLOAD_LIMIT_CLOUD fails result_too_big before any upload", async () => {
  stack = await startStack({ runner: copyRunner(), env: { UPLOAD_LIMIT_CLOUD: "4000" } });
  const u = stack.em.user({ language_code: "en" });
  const sent = await u.sendDocument({ bytes: bytes(5000, 3), file_name: "big-result.bin" });
  const job = await stack.waitJob((await stack.jobFor(u.chatId, sent.message_id)).id);
  expect([job.status, job.reason]).toEqual(["failed", "result_too_big"]);
  expect(JSON.parse(job.reasonParams!)).toMatchObject({ size_bytes: 5000 });
  expect(stack.em.count("sendDocument")).toBe(0);
  const msgs = await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Job #${job.id} failed`)));
  expect(msgs.find((x) => x.text?.startsWith(`Job #${job.id} failed`))!.text).toBe(`Job #${job.id} failed: The result is 5 KB, over the 4 KB upload limit. For a PDF, split or compress it with the buttons under its result, or send fewer pages.`);
});
