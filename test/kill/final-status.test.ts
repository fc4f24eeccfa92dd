/**
 * The final status message survives a crash (issue 14 item 6; seed 000: the last message is the truth about
 * the job). The real bot process (`bun bot/main.ts`) on the strict emulator (rate limits on): two jobs reach
 * their final commit — one `ready`, one `failed` — while every final edit in those chats answers 429, so the
 * chat still shows "processing…"; the process is SIGKILLed right after Telegram refused those edits (the
 * signal that the commit is done and the edit pending). The restarted bot must show each final status exactly
 * once, on the job's one status message, and never re-send a result.
 */
import { join } from "node:path";
import { expect, test } from "vitest";
import { botEnv } from "../../scripts/demo/bot-process.ts";
import { makePdf } from "../../scripts/samples/index.ts";
import type { ChatUser } from "../emulator/index.ts";
import { useCrashRig } from "../support/crash-rig.ts";
import { query } from "../support/sqlite-read.ts";

const rig = useCrashRig();

type Job = { id: number; chat_id: number; status: string; status_message_id: number | null; final_text: string | null; final_done_at: string | null };


/** A final status text of job `id` (en): "Done, job #N …" or "Job #N failed …". */
const isFinal = (text: unknown, id?: number) => typeof text === "string" && (id === undefined ? /^(Done, job #\d+|Job #\d+ failed)/ : new RegExp(`^(Done, job #${id}\\b|Job #${id} failed)`)).test(text);

test("SIGKILL right after the final commits, the final edits still held by a 429: the restarted bot shows each exactly once", async () => {
  const dir = rig.tempDir("docket-final-");
  const dataDir = join(dir, "data");
  const dbFile = join(dataDir, "db", "docket.sqlite");
  const em = await rig.emulator({ mode: "cloud", repeatPollRule: false, rateLimits: {} });
  const env = botEnv(em, dataDir, { LOG_LEVEL: "info", JANITOR_INTERVAL: "1h", LEASE_TTL: "30s" });
  const start = () => rig.start(env);
  const first = start();
  const good = em.user({ language_code: "en" });
  const bad = em.user({ language_code: "en" });
  const users: ChatUser[] = [good, bad];
  // Every final edit in these chats answers a flood wait until the first process is dead (progress edits pass).
  let flooded = true;
  for (const u of users) {
    em.failNext("editMessageText", { error_code: 429, description: "Too Many Requests: retry after 1", retry_after: 1 }, { chatId: u.chatId, times: Infinity, match: (p) => flooded && isFinal(p.text) });
  }
  await good.sendDocument({ bytes: await makePdf({ pages: [["Contract, page 1"], ["page 2"]] }), file_name: "contract.pdf" });
  await bad.sendDocument({ bytes: new TextEncoder().encode("plain text, not a PDF\n".repeat(10)), file_name: "notes.pdf" });

  // The signal: both jobs committed their final state with its text, and Telegram refused that text's edit.
  const jobs = () => query<Job>(dbFile, "SELECT id, chat_id, status, status_message_id, final_text, final_done_at FROM file_jobs ORDER BY id");
  await expect.poll(() => jobs().map((j) => j.status), { timeout: 60_000 }).toEqual(["ready", "failed"]);
  const refused = (u: ChatUser) => em.calls.some((c) => c.method === "editMessageText" && c.chatId === u.chatId && c.status === 429 && isFinal(c.params.text));
  await expect.poll(() => users.every(refused), { timeout: 30_000 }).toBe(true);
  await first.kill();
  const [ready, failed] = jobs();
  expect([ready!.final_text, ready!.final_done_at]).toEqual([expect.stringMatching(new RegExp(`^Done, job #${ready!.id}`)), null]);
  expect([failed!.final_text, failed!.final_done_at]).toEqual([expect.stringMatching(new RegExp(`^Job #${failed!.id} failed`)), null]);
  // The chat still shows the job in progress: no final status reached either chat.
  for (const u of users) expect(u.messages().filter((m) => isFinal(m.text))).toEqual([]);
  const resultsBefore = good.messages().filter((m) => m.document).map((m) => m.document!.file_name);
  expect(resultsBefore.length).toBeGreaterThan(0);

  flooded = false;
  const again = start();
  for (const [u, job] of [[good, ready!], [bad, failed!]] as const) {
    await u.waitFor((m) => m.some((x) => isFinal(x.text, job.id)), 30_000);
    // One status message for the job, and it is the one intake sent: edited to the final text.
    const status = u.messages().filter((m) => !m.document && m.text?.includes(`#${job.id}`));
    expect(status.map((m) => [m.message_id, isFinal(m.text, job.id)])).toEqual([[job.status_message_id, true]]);
    // Exactly one edit to the final text was applied.
    const applied = em.calls.filter((c) => c.method === "editMessageText" && c.chatId === u.chatId && c.ok && isFinal(c.params.text, job.id));
    expect(applied).toHaveLength(1);
    expect(Number(applied[0]!.params.message_id)).toBe(job.status_message_id);
  }
  // The "Done" edit carries its action keyboard (issue 15), recorded with the commit.
  const doneEdit = em.calls.find((c) => c.method === "editMessageText" && c.ok && isFinal(c.params.text, ready!.id))!;
  const markup = (typeof doneEdit.params.reply_markup === "string" ? JSON.parse(doneEdit.params.reply_markup) : doneEdit.params.reply_markup) as { inline_keyboard: Array<Array<{ callback_data: string }>> };
  expect(markup.inline_keyboard.flat().map((b) => b.callback_data)).toContain(`a:${ready!.id}:spl`);
  await expect.poll(() => jobs().map((j) => j.final_done_at !== null)).toEqual([true, true]);
  expect(again.lines.some((l) => String(l.msg).startsWith("took back 2 final status message(s)"))).toBe(true);
  // The results were not sent again.
  expect(good.messages().filter((m) => m.document).map((m) => m.document!.file_name)).toEqual(resultsBefore);
  expect(await again.stop()).toBe(0);
}, 180_000);

test("SIGKILL after a re-send's reply reached the chat, its results held by a 429: the restarted bot sends the results once, the reply not again", async () => {
  const dir = rig.tempDir("docket-final-");
  const dataDir = join(dir, "data");
  const dbFile = join(dataDir, "db", "docket.sqlite");
  const em = await rig.emulator({ mode: "cloud", repeatPollRule: false, rateLimits: {} });
  const env = botEnv(em, dataDir, { LOG_LEVEL: "info", JANITOR_INTERVAL: "1h" });
  const first = rig.start(env);
  const u = em.user({ language_code: "en" });
  const report = await makePdf({ pages: [["Quarterly report"], ["page 2"]] });
  await u.sendDocument({ bytes: report, file_name: "report.pdf" });
  await u.waitFor((m) => m.some((x) => isFinal(x.text)), 30_000);
  const results = u.messages().filter((m) => m.document).map((m) => m.document!.file_name);
  expect(results.length).toBeGreaterThan(0);

  // Every upload to the chat answers a flood wait until the first process is dead; the reply text passes.
  let flooded = true;
  for (const method of ["sendDocument", "sendMediaGroup"]) {
    em.failNext(method, { error_code: 429, description: "Too Many Requests: retry after 1", retry_after: 1 }, { chatId: u.chatId, times: Infinity, match: () => flooded });
  }
  await u.sendDocument({ bytes: report, file_name: "report again.pdf" });
  const replyText = (t: unknown) => typeof t === "string" && t.startsWith("This file was already processed");
  await u.waitFor((m) => m.some((x) => replyText(x.text)), 30_000);
  // The signal: the reply is in the chat and Telegram refused the results that follow it.
  const replyAt = em.calls.find((c) => c.method === "sendMessage" && c.ok && replyText(c.params.text))!.at;
  await expect.poll(() => em.calls.some((c) => (c.method === "sendMediaGroup" || c.method === "sendDocument") && c.status === 429 && c.at > replyAt), { timeout: 30_000 }).toBe(true);
  await first.kill();
  expect(query<{ n: number }>(dbFile, "SELECT count(*) AS n FROM chat_replies WHERE kind = 'resend' AND sent_at IS NULL AND message_id IS NOT NULL")[0]!.n).toBe(1);

  flooded = false;
  const again = rig.start(env);
  await u.waitFor((m) => m.filter((x) => x.document).length === 2 * results.length, 30_000);
  await expect.poll(() => query<{ n: number }>(dbFile, "SELECT count(*) AS n FROM chat_replies WHERE sent_at IS NULL")[0]!.n).toBe(0);
  expect(u.messages().filter((m) => replyText(m.text))).toHaveLength(1);
  expect(u.messages().filter((m) => m.document).map((m) => m.document!.file_name)).toEqual([...results, ...results]);
  expect(await again.stop()).toBe(0);
}, 180_000);
