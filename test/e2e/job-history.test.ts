/**
 * A job's history of tries end to end (issue 11 item 5: "re-arming a failed job keeps its history … shown
 * by /status to the user and by the CLI to the operator"), through the real bot and the emulator with
 * Telegram's rate limits: a retried download, a retried processing crash, a final refusal, a re-sent file
 * that re-arms the job and its run to `ready` — then `/status N` in the user's language and
 * `docket job N` as a process on the bot's live database.
 */
import { afterEach, expect, test } from "vitest";
import { dataPaths } from "../../bot/worker/paths.ts";
import type { ProcessRunner } from "../../bot/worker/types.ts";
import { ProcessingError } from "../../processors/types.ts";
import { runCmd } from "../bundle/helpers.ts";
import { copyRunner } from "../support/copy-runner.ts";
import { startStack, type Stack } from "../support/stack.ts";

let stack: Stack | null = null;
afterEach(async () => {
  await stack?.stop();
  stack = null;
});

const bytes = (n: number, seed = 5) => Uint8Array.from({ length: n }, (_, i) => (i * 13 + seed) & 255);
const minute = (iso: string) => iso.slice(0, 16).replace("T", " ");
const docket = (args: string[]) => runCmd([process.execPath, "--no-env-file", "bot/cli/main.ts", ...args], { env: { DATA_DIR: undefined, DOCKET_ENV_FILE: "/nonexistent/docket.env" } });

const MEMORY = "Processing this file needs more memory than the 512 MB limit, so it was stopped. Trying again would not help; a simpler or smaller file may work.";

/** A runner whose first calls refuse as given, then copies (test/support/copy-runner.ts). */
function scriptedRunner(refusals: ProcessingError[]): ProcessRunner & { calls: number } {
  const copy = copyRunner();
  const run = (async (...args: Parameters<ProcessRunner>) => {
    run.calls++;
    const next = refusals.shift();
    if (next) throw next;
    return copy(...args);
  }) as unknown as ProcessRunner & { calls: number };
  run.calls = 0;
  return run;
}

test("a retried download (ru): /status N lists it under «История» with a short phrase, not the re-send request", async () => {
  stack = await startStack({ runner: copyRunner(), emulator: { rateLimits: {} } });
  stack.em.failFileDownload(1);
  const u = stack.em.user({ language_code: "ru" });
  const sent = await u.sendDocument({ bytes: bytes(4000), file_name: "акт.bin" });
  const job = await stack.waitJob((await stack.jobFor(u.chatId, sent.message_id)).id);
  expect(job.status).toBe("ready");
  const history = await stack.app.services.store.attempts(job.id);
  expect(history.map((a) => [a.step, a.attempt, a.outcome, a.reason])).toEqual([["download", 1, "retry", "download_failed"]]);
  await u.sendText(`/status ${job.id}`);
  const expected = `История:\n${minute(history[0]!.at)} UTC · скачивание · повтор: скачивание не удалось`;
  const msgs = await u.waitFor((m) => m.some((x) => x.text?.startsWith(`№ ${job.id} · акт.bin · `)));
  const text = msgs.find((x) => x.text?.startsWith(`№ ${job.id} · акт.bin · `))!.text!;
  expect(text.split("\n").slice(1).join("\n")).toBe(expected);
  expect(text).not.toContain("Пришлите его ещё раз");
});

test("a crash retried, a final refusal, a re-send that re-arms: the history survives the re-arm in /status (en) and `docket job N`", async () => {
  const runner = scriptedRunner([new ProcessingError("processing_crashed", {}, "child exited with signal SIGSEGV"), new ProcessingError("too_much_memory", { limit_mb: 512 }, "child RSS over the 512 MB cap")]);
  stack = await startStack({ runner, emulator: { rateLimits: {} } });
  const u = stack.em.user({ language_code: "en" });
  const data = bytes(6000, 9);
  const first = await u.sendDocument({ bytes: data, file_name: "deed.bin" });
  const { id } = await stack.jobFor(u.chatId, first.message_id);
  const failed = await stack.waitJob(id, ["failed"], 20_000);
  expect(failed.reason).toBe("too_much_memory");
  await u.waitFor((m) => m.some((x) => x.text === `Job #${id} failed: ${MEMORY}`));

  const again = await u.sendDocument({ bytes: data, file_name: "deed.bin" });
  const rerun = await stack.waitJob(id, ["ready"], 20_000);
  expect([rerun.updateId, runner.calls]).toEqual([again.update_id, 3]);

  const history = await stack.app.services.store.attempts(id);
  expect(history.map((a) => [a.step, a.attempt, a.outcome, a.reason])).toEqual([
    ["processing", 1, "retry", "processing_crashed"],
    ["processing", 2, "failed", "too_much_memory"],
    ["intake", 2, "rearmed", "too_much_memory"],
  ]);
  await u.sendText(`/status ${id}`);
  const head = `#${id} · deed.bin · `;
  const msgs = await u.waitFor((m) => m.some((x) => x.text?.startsWith(head) && x.text.includes("\n")));
  const lines = msgs.find((x) => x.text?.startsWith(head) && x.text.includes("\n"))!.text!.split("\n");
  expect(lines.slice(1)).toEqual([
    "History:",
    `${minute(history[0]!.at)} UTC · processing · tried again: processing stopped unexpectedly`,
    `${minute(history[1]!.at)} UTC · processing · ended: ${MEMORY}`,
    `${minute(history[2]!.at)} UTC · intake · sent again: ${MEMORY}`,
  ]);

  // The operator's view, on the running bot's database (read-only).
  const dataDir = stack.config.dataDir;
  const shown = docket(["job", String(id), "--data-dir", dataDir]);
  expect([shown.status, shown.stderr]).toEqual([0, ""]);
  const out = shown.stdout.split("\n");
  expect(out[0]).toBe(`job ${id} · ready · chat ${u.chatId} · user ${u.id} · message ${again.message_id} · update ${again.update_id}`);
  expect(out).toContain("history (3):");
  const rows = out.filter((l) => l.startsWith("  "));
  expect(rows.map((l) => l.trim().split(/\s{2,}/))).toEqual([
    [history[0]!.at, "processing", "try 1", "retry", "processing_crashed", "child exited with signal SIGSEGV"],
    [history[1]!.at, "processing", "try 2", "failed", "too_much_memory", "child RSS over the 512 MB cap"],
    [history[2]!.at, "intake", "try 2", "rearmed", "too_much_memory", `a re-sent file (update ${again.update_id}) started the job again from failed`],
  ]);
  const json = docket(["job", `#${id}`, "--json", "--data-dir", dataDir]);
  expect(json.status).toBe(0);
  const parsed = JSON.parse(json.stdout) as { job: { id: number; status: string }; attempts: unknown[] };
  expect([parsed.job.id, parsed.job.status, parsed.attempts]).toEqual([id, "ready", history]);

  const missing = docket(["job", "999999", "--data-dir", dataDir]);
  expect([missing.status, missing.stdout, missing.stderr.trim()]).toEqual([1, "", `docket job: there is no job 999999 in ${dataPaths(dataDir).dbFile}`]);
  const noDb = docket(["job", "1", "--data-dir", `${dataDir}/nowhere`]);
  expect(noDb.status).toBe(1);
  expect(noDb.stderr).toContain("no database at");
  const bad = docket(["job", "twelve"]);
  expect(bad.status).toBe(2);
  expect(bad.stderr).toContain('not a job number: "twelve"');
});
