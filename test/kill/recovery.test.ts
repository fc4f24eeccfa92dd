/**
 * Recovery in seconds (issue 11 item 4; CONTRACTS.md §6): the real bot process, SIGKILLed mid-download,
 * restarted on the same data. Each start has its own lease owner id `<HOST_ID>/<start id>`; a start on the
 * same host takes back the dead process's lease at once, so the job resumes right after the restart —
 * with LEASE_TTL at 10 minutes, a bot that waited for the lease to expire would never log the reclaim,
 * would still hold the dead lease once started, and would leave the job stuck far past the 15 s poll
 * for its end. A start under another HOST_ID leaves the lease alone (another host's
 * process may be alive). Strict emulator: Telegram's rate limits on.
 */
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { expect, test } from "vitest";
import { botEnv } from "../../scripts/demo/bot-process.ts";
import { makePdf } from "../../scripts/samples/index.ts";
import { useCrashRig } from "../support/crash-rig.ts";

type Row = { id: number; status: string; lease_owner: string | null; attempts: number; message_id: number };

const rig = useCrashRig();

/** The job row of a user's message, read from the database file as an operator would (readonly). */
function row(dbFile: string, chatId: number, messageId: number): Row | null {
  try {
    const db = new Database(dbFile, { readonly: true });
    try {
      return (db.query("SELECT id, status, lease_owner, attempts, message_id FROM file_jobs WHERE chat_id = ? AND message_id = ?").get(chatId, messageId) as Row | null) ?? null;
    } finally {
      db.close();
    }
  } catch {
    return null; // not created yet
  }
}

test("SIGKILL mid-download: a start under another HOST_ID leaves the lease alone; the same host's next start resumes the job at once", async () => {
  const dir = rig.tempDir("docket-recover-");
  const dataDir = join(dir, "data");
  const dbFile = join(dataDir, "db", "docket.sqlite");
  const em = await rig.emulator({ mode: "cloud", repeatPollRule: false, rateLimits: {} });
  const env = botEnv(em, dataDir, { LOG_LEVEL: "info", HOST_ID: "alpha", LEASE_TTL: "10m", DOWNLOAD_IDLE_TIMEOUT: "10m", JANITOR_INTERVAL: "1h" });

  // First process (host alpha): the download stalls after 500 bytes and stays open.
  em.faultFileDownload({ kind: "stall", afterBytes: 500 });
  const first = rig.start(env);
  const u = em.user({ language_code: "en" });
  const sent = await u.sendDocument({ bytes: await makePdf({ pages: [["Recovery test page 1"], ["page 2"]] }), file_name: "contract.pdf" });
  await expect.poll(() => em.calls.some((c) => c.method === "/file" && c.params.fault !== undefined), { timeout: 30_000 }).toBe(true);
  const held = row(dbFile, u.chatId, sent.message_id)!;
  expect([held.status, held.attempts]).toEqual(["accepted", 1]);
  expect(held.lease_owner).toMatch(/^alpha\/[0-9a-z]+-\d+-[0-9a-f]{8}$/);
  await first.kill();

  // Second process on another host id: it works (a new file ends ready) but does not touch alpha's lease.
  const beta = rig.start({ ...env, HOST_ID: "beta" });
  const other = await u.sendDocument({ bytes: await makePdf({ pages: [["Another file"]] }), file_name: "other.pdf" });
  await expect.poll(() => row(dbFile, u.chatId, other.message_id)?.status, { timeout: 30_000 }).toBe("ready");
  expect(row(dbFile, u.chatId, sent.message_id)).toEqual(held);
  expect(beta.lines.some((l) => String(l.msg).startsWith("reclaimed "))).toBe(false);
  await beta.kill();

  // Third process, host alpha again: the dead start's lease is taken back at once and the job resumes.
  // The signal is the reclaim itself (engine start, right after the start-up self-checks: waited for
  // with the 30 s this test gives every start-up), then the job's end. One 15 s poll from the spawn
  // covered both, and the start-up is most of it (a pool child warmed up, the PDF and OCR self-checks:
  // 5.5–7 s of the 6.5–8 s beside 3 busy loops; the resumed work ≈ 1 s): under the merge queue's load
  // it ran out with the job still `processing`.
  const again = rig.start(env);
  const reclaimLine = () => again.lines.find((l) => String(l.msg).startsWith("reclaimed "));
  await expect.poll(reclaimLine, { timeout: 30_000 }).toBeDefined();
  // At that moment the dead start's lease is gone (10 minutes before LEASE_TTL would have freed it).
  expect(row(dbFile, u.chatId, sent.message_id)!.lease_owner).not.toBe(held.lease_owner);
  await expect.poll(() => row(dbFile, u.chatId, sent.message_id)?.status).toBe("ready");
  const reclaimed = reclaimLine();
  expect(reclaimed).toMatchObject({ msg: "reclaimed 1 lease(s) held by this host's earlier process; the jobs resume by state", jobs: [held.id], states: ["accepted"], from: [held.lease_owner] });
  expect(String(reclaimed!.owner)).toMatch(/^alpha\//);
  expect(reclaimed!.owner).not.toBe(held.lease_owner);
  // The resumed try downloaded the file whole (a new getFile), and the chat got its result once.
  const downloads = em.calls.filter((c) => c.method === "/file");
  expect(downloads.map((c) => c.params.fault === undefined)).toEqual([false, true, true]);
  await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${held.id}`)));
  expect(u.messages().flatMap((x) => (x.document?.file_name?.startsWith("contract") ? [x.document.file_name] : []))).toEqual(["contract.txt", "contract-page1.jpg"]);
  expect(await again.stop()).toBe(0);
  expect(again.text()).not.toContain(em.token.split(":")[1]!);
}, 120_000);
