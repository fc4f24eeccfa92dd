/**
 * Replies that survive a crash (issue 11 item 3): every reply intake decides on — accepted, duplicate,
 * re-send of a live result, per-user limit, refusal of an outsider — is recorded in the intake
 * transaction and sent from that record. The real bot process is SIGKILLed right after the batch with
 * those messages was confirmed to Telegram (the emulator has no pending update left) while every send
 * to those chats answers 429, so no reply has gone out yet. Telegram will never deliver those updates again; the
 * restarted bot must still answer each message exactly once. Strict emulator: rate limits on.
 */
import { join } from "node:path";
import { expect, test } from "vitest";
import { botEnv } from "../../scripts/demo/bot-process.ts";
import { makePdf } from "../../scripts/samples/index.ts";
import { useCrashRig } from "../support/crash-rig.ts";
import { query } from "../support/sqlite-read.ts";

const rig = useCrashRig();

type Job = { id: number; status: string; status_message_id: number | null };


test("SIGKILL after the batch was confirmed, every reply still held by a 429: the restarted bot answers each message exactly once", async () => {
  const dir = rig.tempDir("docket-replies-");
  const dataDir = join(dir, "data");
  const dbFile = join(dataDir, "db", "docket.sqlite");
  const em = await rig.emulator({ mode: "cloud", repeatPollRule: false, rateLimits: {} });
  const user = (first_name: string) => em.user({ first_name, language_code: "en" });
  const [resender, duplicate, limited, newcomer, outsider] = [user("Ann"), user("Bob"), user("Cid"), user("Dan"), user("Eve")];
  const env = botEnv(em, dataDir, {
    LOG_LEVEL: "info",
    ALLOWED_USER_IDS: [resender, duplicate, limited, newcomer].map((u) => u.id).join(","),
    USER_MAX_BYTES_PER_DAY: "900", // the two-page PDF below (970 B) uses up the day
    JANITOR_INTERVAL: "1h",
  });
  const start = () => rig.start(env);
  const first = start();

  // Before: a ready job to re-send, a job that failed for good (a re-send is a duplicate), and a day's bytes used up.
  const report = await makePdf({ pages: [["Quarterly report"]] });
  const sentReport = await resender.sendDocument({ bytes: report, file_name: "report.pdf" });
  const notPdf = new TextEncoder().encode("plain text, not a PDF\n".repeat(10));
  await duplicate.sendDocument({ bytes: notPdf, file_name: "notes.pdf" });
  const big = await makePdf({ pages: [["A file for the day"], ["page 2"]] });
  expect(big.length).toBeGreaterThan(900);
  await limited.sendDocument({ bytes: big, file_name: "big.pdf" });
  for (const u of [resender, duplicate, limited]) await u.waitFor((m) => m.some((x) => /^(Done, job|Job #\d+ failed)/.test(x.text ?? "")), 30_000);
  const reportJob = query<Job>(dbFile, "SELECT id, status, status_message_id FROM file_jobs WHERE chat_id = ?", resender.chatId)[0]!;
  const resultsBefore = resender.messages().filter((x) => x.document).length;
  expect(resultsBefore).toBeGreaterThan(0);

  // Every chat on a flood wait until the first process is dead: each try of the replies below answers 429
  // (retry after 1 s), however long the machine takes to get there; lifted before the restart.
  const users = [resender, duplicate, limited, newcomer, outsider];
  let flooded = true;
  for (const u of users) em.failNext("sendMessage", { error_code: 429, description: "Too Many Requests: retry after 1", retry_after: 1 }, { chatId: u.chatId, times: Infinity, match: () => flooded });
  const before = new Map(users.map((u) => [u.chatId, u.messages().length]));
  const updates = [
    await resender.sendDocument({ bytes: report, file_name: "report again.pdf" }),
    await duplicate.sendDocument({ bytes: notPdf, file_name: "notes again.pdf" }),
    await limited.sendDocument({ bytes: await makePdf({ pages: [["small"]] }), file_name: "small.pdf" }),
    await newcomer.sendDocument({ bytes: await makePdf({ pages: [["New contract"]] }), file_name: "contract.pdf" }),
    await outsider.sendDocument({ bytes: await makePdf({ pages: [["Not invited"]] }), file_name: "spam.pdf" }),
  ];
  // The batch is confirmed (Telegram will not send these updates again) and every chat's reply hit its 429.
  await expect.poll(() => em.pendingUpdates()).toBe(0);
  await expect.poll(() => users.every((u) => em.calls.some((c) => c.method === "sendMessage" && c.status === 429 && c.chatId === u.chatId))).toBe(true);
  expect(users.map((u) => u.messages().length)).toEqual(users.map((u) => before.get(u.chatId)));
  const lastUpdate = Math.max(...updates.map((s) => s.update_id));
  expect(em.calls.some((c) => c.method === "getUpdates" && Number(c.params.offset ?? 0) > lastUpdate)).toBe(true);
  await first.kill();
  expect(query<{ n: number }>(dbFile, "SELECT count(*) AS n FROM chat_replies WHERE sent_at IS NULL")[0]!.n).toBe(5);

  // The restarted bot sends what the dead one recorded.
  flooded = false;
  const again = start();
  const newJob = query<Job>(dbFile, "SELECT id, status, status_message_id FROM file_jobs WHERE chat_id = ?", newcomer.chatId)[0]!;
  const texts = (u: (typeof users)[number]) => u.messages().slice(before.get(u.chatId)).map((x) => x.text ?? `[document ${x.document?.file_name}]`);
  await resender.waitFor((m) => m.filter((x) => x.document).length === 2 * resultsBefore, 30_000);
  await duplicate.waitFor((m) => m.some((x) => x.text?.startsWith("I already have this file")), 30_000);
  await limited.waitFor((m) => m.some((x) => x.text?.startsWith("In the last 24 hours")), 30_000);
  await outsider.waitFor((m) => m.some((x) => x.text?.startsWith("Sorry")), 30_000);
  await newcomer.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${newJob.id}`)), 30_000);
  await expect.poll(() => query<{ n: number }>(dbFile, "SELECT count(*) AS n FROM chat_replies WHERE sent_at IS NULL")[0]!.n).toBe(0);

  expect(texts(resender)).toEqual([`This file was already processed (job #${reportJob.id}). Sending the result again.`, "[document report.txt]", "[document report-page1.jpg]"]);
  expect(texts(duplicate)).toEqual([expect.stringMatching(/^I already have this file: job #\d+, status — failed\.$/)]);
  expect(texts(limited)).toEqual(["In the last 24 hours you sent 0.1 MB of the allowed 0.1 MB. Please try later."]);
  expect(texts(outsider)).toEqual(["Sorry, this bot is available to invited users only."]);
  // The accepted reply is the new job's status message: it was edited to "Done", no second status message.
  const statusId = query<Job>(dbFile, "SELECT id, status, status_message_id FROM file_jobs WHERE id = ?", newJob.id)[0]!.status_message_id;
  const newcomerTexts = newcomer.messages().slice(before.get(newcomer.chatId)).filter((x) => !x.document);
  expect(newcomerTexts.map((x) => x.message_id)).toEqual([statusId]);
  expect(newcomerTexts[0]!.text).toMatch(new RegExp(`^Done, job #${newJob.id}`));
  expect(again.lines.some((l) => l.msg === "sending intake replies left pending by an earlier process or a failed try" && l.replies === 5)).toBe(true);
  expect(await again.stop()).toBe(0);
  expect(reportJob.status).toBe("ready");
  expect(sentReport.message_id).toBeGreaterThan(0);
}, 180_000);
