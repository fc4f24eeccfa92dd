/**
 * Several hosts on one PostgreSQL, proven under kills (issue 14 items 3, 4 and 6): real bot processes
 * (`bun bot/main.ts`), each its own "host" — its own HOST_ID and its own data dir, no shared disk —
 * on a real PostgreSQL server (test/support/pg-server.ts) and the strict emulator with Telegram's rate
 * limits on. Asserted over all processes together: every job ends right, no result reaches a chat twice
 * (the one exception Telegram makes unavoidable is a kill between an accepted upload and its recorded
 * file_id: tolerated only when that is what the record shows — the first copy's file_id was never
 * recorded, and a killed process had processed the job without logging its results as sent), getUpdates
 * never answers 409 (never two pollers), and no 429 from the shared limits.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { botEnv } from "../../scripts/demo/bot-process.ts";
import { makePdf } from "../../scripts/samples/index.ts";
import { startEmulator, type ChatUser, type Emulator } from "../emulator/index.ts";
import { startBotProcess, type BotProcess } from "../support/bot-process.ts";
import { usePgServer, type PgServer } from "../support/pg-server.ts";
import { freshPgDatabase } from "../support/pg-store.ts";
import { toolReady } from "../support/tools.ts";

type Role = "all" | "intake" | "worker";
type Row = { id: number; chat_id: number; message_id: number; status: string; reason: string | null; lease_owner: string | null; status_message_id: number | null; final_text: string | null };

describe.skipIf(!toolReady("postgres"))("hosts sharing no disk, one PostgreSQL", () => {
  let server: PgServer;
  usePgServer((s) => (server = s));
  let em: Emulator | null = null;
  let dir = "";
  let db: postgres.Sql | null = null;
  const procs: BotProcess[] = [];
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "docket-hosts-"));
  });
  afterEach(async () => {
    for (const p of procs.splice(0)) if (p.proc.exitCode === null) await p.kill();
    await db?.end({ timeout: 1 });
    db = null;
    await em?.close();
    em = null;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A fresh database, the emulator, and a starter of bot processes on them. */
  async function setup(extra: Record<string, string> = {}) {
    const url = await freshPgDatabase(server);
    db = postgres(url, { max: 2, onnotice: () => {} });
    em = await startEmulator({ mode: "cloud", repeatPollRule: false, rateLimits: {} });
    const dataDirOf = (host: string) => join(dir, `${url.split("/").pop()}-${host}`);
    const start = (host: string, role: Role) => {
      const dataDir = dataDirOf(host);
      mkdirSync(dataDir, { recursive: true });
      const p = startBotProcess(
        botEnv(em!, dataDir, {
          LOG_LEVEL: "info",
          DATABASE_URL: url,
          DB_POOL_MAX: "2",
          DOCKET_ROLE: role,
          HOST_ID: host,
          LEASE_TTL: "4s",
          MAX_ATTEMPTS: "40",
          PROCESS_CONCURRENCY: "1",
          DOWNLOAD_CONCURRENCY: "2",
          JANITOR_INTERVAL: "1h",
          USER_MAX_JOBS_IN_FLIGHT: "1000",
          ...extra,
        }),
      );
      procs.push(p);
      return p;
    };
    const rows = async () => (await db!<Row[]>`SELECT id::int, chat_id::float8 AS chat_id, message_id::int, status, reason, lease_owner, status_message_id::int, final_text FROM file_jobs ORDER BY id`).map((r) => ({ ...r }));
    return { url, start, rows, dataDirOf };
  }

  /** Every chat's result documents by chat and file name (`<chat>:<name>`): the file_id of each copy, in chat order. */
  function copiesOf(users: readonly ChatUser[]): Map<string, string[]> {
    const seen = new Map<string, string[]>();
    for (const u of users) {
      for (const m of u.messages()) {
        if (!m.document?.file_name) continue;
        const key = `${u.chatId}:${m.document.file_name}`;
        seen.set(key, [...(seen.get(key) ?? []), m.document.file_id]);
      }
    }
    return seen;
  }

  /**
   * The chat messages that show job `id`'s status (not its result documents): exactly one is right —
   * status messages follow the job's lease across processes, adopting the intake process's first one.
   */
  function statusMessages(u: ChatUser, id: number): string[] {
    const names = new RegExp(`job #${id}(?!\\d)`, "i"); // job #1, not job #13
    return u.messages().flatMap((m) => (!m.document && !m.photo && m.text && names.test(m.text) ? [m.text] : []));
  }

  /** Assert nothing went wrong with Telegram over all processes: no second poller, no 429 (but those a test injected: `injected`). */
  function assertTelegramClean(injected: (c: Emulator["calls"][number]) => boolean = () => false): void {
    expect(em!.calls.filter((c) => c.method === "getUpdates" && c.status === 409)).toEqual([]);
    expect(em!.calls.filter((c) => c.status === 429 && !injected(c)).map((c) => `${c.method} ${c.chatId}`)).toEqual([]);
  }

  /** The final status text of job `id` (en): "Done, job #N …" or "Job #N failed …". */
  const isFinal = (text: unknown, id: number) => typeof text === "string" && new RegExp(`^(Done, job #${id}\\b|Job #${id} failed)`).test(text);

  test("a worker host dies with a job in processing (its upload held by a 429): another host resumes it, fetching the source again from its file_id, and keeps the hold", async () => {
    const { start, rows, dataDirOf } = await setup({ LEASE_TTL: "3s" });
    start("intake-1", "intake");
    const a = start("host-a", "worker");
    const u = em!.user({ language_code: "en" });
    // host-a's upload of the results meets a flood wait: the job stays in `processing` under its lease.
    em!.failNext("sendMediaGroup", { error_code: 429, description: "Too Many Requests: retry after 8", retry_after: 8 }, { chatId: u.chatId });
    const sent = await u.sendDocument({ bytes: makePdf({ pages: [["Report page 1"], ["page 2"]] }), file_name: "report.pdf" });
    await expect.poll(() => em!.calls.some((c) => c.chatId === u.chatId && c.status === 429), { timeout: 60_000 }).toBe(true);
    const hit = em!.calls.find((c) => c.chatId === u.chatId && c.status === 429)!;
    const held = (await rows()).find((r) => r.message_id === sent.message_id)!;
    expect([held.status, held.lease_owner?.split("/")[0]]).toEqual(["processing", "host-a"]);
    // The host dies and its disk with it.
    await a.kill();
    rmSync(dataDirOf("host-a"), { recursive: true, force: true });
    const b = start("host-b", "worker");
    await expect.poll(async () => (await rows()).find((r) => r.id === held.id)?.status, { timeout: 90_000, interval: 500 }).toBe("ready");
    // bot/worker/source.ts: the source is gone on this host, fetched again in place (new getFile), state and lease kept.
    const again = b.lines.find((l) => l.job === held.id && l.msg === "source fetched again");
    expect(again, b.text().slice(-3000)).toBeDefined();
    // Two downloads from Telegram: host-a's, then host-b's after a fresh getFile.
    expect(em!.calls.filter((c) => c.method === "/file").length).toBe(2);
    expect(em!.calls.filter((c) => c.method === "getFile").length).toBe(2);
    await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${held.id}`)), 30_000);
    const docs = u.messages().flatMap((m) => (m.document?.file_name ? [m.document.file_name] : []));
    expect(docs.sort()).toEqual(["report-page1.jpg", "report.txt"]);
    // One status message for the job, though three processes handled it (intake, host-a, host-b).
    expect(statusMessages(u, held.id)).toHaveLength(1);
    // Nothing went to the chat while its hold lasted, from either host; the injected 429 is the only one.
    expect(em!.calls.filter((c) => c.chatId === u.chatId && c.at > hit.at && c.at < hit.at + 8000).map((c) => c.method)).toEqual([]);
    expect(em!.calls.filter((c) => c.status === 429)).toEqual([hit]);
    expect(em!.calls.filter((c) => c.method === "getUpdates" && c.status === 409)).toEqual([]);
  }, 240_000);

  test("two worker hosts with free processing slots: each job is processed on the host that downloaded it, one getFile per job", async () => {
    const { start, rows } = await setup({ PROCESS_CONCURRENCY: "2" });
    start("intake-1", "intake");
    const workers = [start("host-a", "worker"), start("host-b", "worker")];
    const u = em!.user({ language_code: "en" });
    const JOBS = 6;
    // One at a time, so every download ends with both hosts' processing slots free: whichever host
    // downloads a job has a slot for it (the other host's idle loops hear the same wake-ups).
    for (let i = 0; i < JOBS; i++) {
      await u.sendDocument({ bytes: makePdf({ pages: [[`Affinity ${i}`]] }), file_name: `aff_${i}.pdf` });
      await expect.poll(async () => (await rows()).filter((r) => r.status === "ready").length, { timeout: 60_000, interval: 200 }).toBe(i + 1);
    }
    // JobStore.handOver: the download's write took the processing claim on the same host, so no host
    // processed a file another host downloaded (that would be a second getFile, "source fetched again").
    const host = (w: BotProcess, msg: string) => new Set(w.lines.filter((l) => l.msg === msg).map((l) => l.job as number));
    for (const w of workers) {
      expect(w.lines.filter((l) => l.msg === "source fetched again")).toEqual([]);
      expect([...host(w, "ready")].sort(), w.text().slice(-2000)).toEqual([...host(w, "fetched")].sort());
    }
    expect(workers.map((w) => host(w, "fetched").size).reduce((a, b) => a + b, 0)).toBe(JOBS);
    expect(workers.flatMap((w) => w.lines.filter((l) => l.msg === "fetched").map((l) => l.handed_over))).toEqual(Array(JOBS).fill(true));
    expect(em!.calls.filter((c) => c.method === "getFile").length).toBe(JOBS);
    assertTelegramClean();
  }, 240_000);

  test("queue positions come from the process receiving updates only: each waiting job's position is edited once, not once per host", async () => {
    // Every job reserves the floor, and two never fit: while job 1's download is held, the others wait.
    const { start, rows } = await setup({ QUEUE_POSITIONS_INTERVAL: "300ms", DOWNLOAD_BUDGET: "10000", BUDGET_MULTIPLIER: "2", BUDGET_MIN_RESERVATION: "6000" });
    start("host-1", "all");
    start("host-a", "worker");
    start("host-b", "worker");
    const u = em!.user({ language_code: "en" });
    const hold = em!.holdGetFile();
    await u.sendDocument({ bytes: makePdf({ pages: [["Queue 1"]] }), file_name: "q1.pdf" });
    await hold.arrived;
    await u.sendDocument({ bytes: makePdf({ pages: [["Queue 2"]] }), file_name: "q2.pdf" });
    await u.sendDocument({ bytes: makePdf({ pages: [["Queue 3"]] }), file_name: "q3.pdf" });
    await expect.poll(async () => (await rows()).map((r) => r.status), { timeout: 30_000, interval: 100 }).toEqual(["accepted", "accepted", "accepted"]);
    const [, j2, j3] = (await rows()).map((r) => r.id);
    const edits = (id: number) => em!.calls.filter((c) => c.method === "editMessageText" && String(c.params.text ?? "").startsWith(`Job #${id}: queued for download`)).map((c) => String(c.params.text));
    await expect.poll(() => [edits(j2!), edits(j3!)], { timeout: 30_000, interval: 100 }).toEqual([[`Job #${j2}: queued for download, position 1.`], [`Job #${j3}: queued for download, position 2.`]]);
    // Many refresh intervals of every process later: still one edit each (three engines used to make three).
    await Bun.sleep(3000);
    expect([edits(j2!), edits(j3!)]).toEqual([[`Job #${j2}: queued for download, position 1.`], [`Job #${j3}: queued for download, position 2.`]]);
    hold.release();
    await expect.poll(async () => (await rows()).map((r) => r.status), { timeout: 60_000, interval: 200 }).toEqual(["ready", "ready", "ready"]);
    assertTelegramClean();
  }, 180_000);

  test("one all + two workers, random SIGKILLs mid-run: every job ready, each result once, never a second poller", async () => {
    const { start, rows } = await setup();
    const hosts: Array<{ host: string; role: Role }> = [
      { host: "h1", role: "all" },
      { host: "h2", role: "worker" },
      { host: "h3", role: "worker" },
    ];
    const running = new Map(hosts.map((h) => [h.host, start(h.host, h.role)]));
    const users = Array.from({ length: 6 }, (_, k) => em!.user({ language_code: k % 2 ? "ru" : "en" }));
    const expected: Array<{ chatId: number; messageId: number; name: string }> = [];
    const JOBS = 18;
    /** The processes SIGKILLed, with their journals. */
    const killed: BotProcess[] = [];
    // A seeded choice of victims (reproducible): mulberry32.
    let seed = 0x14;
    const random = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const sending = (async () => {
      for (let i = 0; i < JOBS; i++) {
        const u = users[i % users.length]!;
        const name = `doc_${i}`;
        const s = await u.sendDocument({ bytes: makePdf({ pages: [[`Document ${i}`], [`page 2 of ${i}`]] }), file_name: `${name}.pdf` });
        expected.push({ chatId: u.chatId, messageId: s.message_id, name });
        if (i % 4 === 3) await Bun.sleep(300);
      }
    })();
    // Five kills spread over the run: each once a job is in flight and another has finished since the
    // last kill; the victim is restarted on its own data dir. The seeded order takes the leader too.
    const victims: string[] = [];
    let readyAtKill = -1;
    for (let k = 0; k < 5; k++) {
      await expect
        .poll(async () => {
          const r = await rows();
          return r.some((x) => ["accepted", "fetched", "processing"].includes(x.status)) && r.filter((x) => x.status === "ready").length > readyAtKill;
        }, { timeout: 120_000, interval: 100 })
        .toBe(true);
      readyAtKill = (await rows()).filter((x) => x.status === "ready").length;
      const victim = hosts[Math.floor(random() * hosts.length)]!;
      victims.push(victim.host);
      const dying = running.get(victim.host)!;
      killed.push(dying);
      await dying.kill();
      running.set(victim.host, start(victim.host, victim.role));
    }
    expect(victims).toContain("h1");
    expect(new Set(victims).size).toBeGreaterThan(1);
    await sending;
    await expect
      .poll(async () => (await rows()).filter((r) => r.status === "ready").length, { timeout: 180_000, interval: 1000 })
      .toBe(JOBS);
    const all = await rows();
    expect(all.map((r) => [r.status, r.reason])).toEqual(all.map(() => ["ready", null]));
    expect(all.map((r) => `${r.chat_id}:${r.message_id}`).sort()).toEqual(expected.map((e) => `${e.chatId}:${e.messageId}`).sort());
    // Each result exactly once in its chat. The one repeat Telegram makes unavoidable: the process that
    // uploaded the first copy died before it recorded that copy's file_id, and the job's next holder sent it
    // again. Tolerated only when the records say exactly that — the first copy's file_id is not the one
    // recorded (a later copy's is), and a killed process had processed the job and never logged its results
    // as sent (delivery.ts logs that after the file_ids are written).
    for (const e of expected) {
      const u = users.find((x) => x.chatId === e.chatId)!;
      await u.waitFor((m) => ["txt", "jpg"].every((ext) => m.some((x) => x.document?.file_name === (ext === "txt" ? `${e.name}.txt` : `${e.name}-page1.jpg`))), 30_000);
    }
    const recorded = await db!<Array<{ job_id: number; file_name: string; telegram_file_id: string | null }>>`SELECT job_id::int, file_name, telegram_file_id FROM job_results`;
    const sentBy = (p: BotProcess, id: number) => p.lines.some((l) => l.job === id && (l.msg === "result sent" || l.msg === "results sent as an album"));
    for (const [key, copies] of copiesOf(users)) {
      if (copies.length === 1) continue;
      const name = key.slice(key.indexOf(":") + 1);
      const e = expected.find((x) => `${x.chatId}` === key.slice(0, key.indexOf(":")) && (name === `${x.name}.txt` || name === `${x.name}-page1.jpg`))!;
      const id = all.find((r) => r.chat_id === e.chatId && r.message_id === e.messageId)!.id;
      const fileId = recorded.find((r) => r.job_id === id && r.file_name === name)?.telegram_file_id;
      const why = `${key} (job ${id}) arrived ${copies.length}×`;
      expect(copies.slice(1), `${why}: the file_id recorded is ${fileId}, not a later copy's`).toContain(fileId);
      expect(killed.some((p) => p.lines.some((l) => l.job === id && l.msg === "processed") && !sentBy(p, id)), `${why}: no killed process had processed it without recording it sent`).toBe(true);
    }
    // Every job's one status message (the bot's one text reply to the file) ends on the final text its
    // commit recorded, in the user's language, whichever process died after the commit.
    for (const r of all) {
      const u = users.find((x) => x.chatId === r.chat_id)!;
      expect(r.final_text, `job ${r.id}`).toMatch(/^(Done, job|Готово, задача)/);
      await u.waitFor((m) => m.some((x) => x.message_id === r.status_message_id && x.text === r.final_text), 30_000);
      const replies = u.messages().filter((m) => m.from === "bot" && !m.document && m.reply_to === r.message_id);
      const why = `job ${r.id}\n${u.transcript().join("\n")}`;
      expect(replies.filter((m) => m.message_id === r.status_message_id), why).toHaveLength(1);
      // The reply's own at-least-once window: the intake process died after Telegram accepted the "Got …"
      // reply and before it recorded its message_id, and the next intake process sent it again from the
      // record. Tolerated only when that is what happened: each extra copy came before the recorded one and
      // was never edited, an intake process was killed, and a later one sent replies left pending.
      const extra = replies.filter((m) => m.message_id !== r.status_message_id);
      if (extra.length > 0) {
        expect(extra.map((m) => [m.message_id < r.status_message_id!, m.edits, /^(Got “|Принял файл «)/.test(m.text ?? "")]), why).toEqual(extra.map(() => [true, 0, true]));
        expect(killed.some((p) => p.lines.some((l) => String(l.msg).startsWith("this process holds the intake lock"))), why).toBe(true);
        expect(procs.some((p) => p.lines.some((l) => l.msg === "sending intake replies left pending by an earlier process or a failed try")), why).toBe(true);
      }
    }
    assertTelegramClean();
    // The work was shared: jobs ended ready on more than one host.
    const readyBy = new Set(procs.flatMap((p) => p.lines.filter((l) => l.msg === "ready").map((l) => String(p.lines.find((x) => x.msg === "docket starting")?.data_dir).split("-").pop())));
    expect(readyBy.size, `ready on ${[...readyBy].join(", ")}; victims ${victims.join(", ")}`).toBeGreaterThan(1);
  }, 400_000);

  test("the leader is killed right after its first job's ready commit, its Done edit refused: another all process takes over intake within seconds and shows that Done once", async () => {
    const { start, rows } = await setup();
    const first = start("lead-1", "all");
    await expect.poll(() => first.lines.some((l) => String(l.msg).startsWith("this process holds the intake lock")), { timeout: 60_000 }).toBe(true);
    const u = em!.user({ language_code: "en" });
    // The first job's final edit answers a flood wait until the leader is dead: its Done waits in its record.
    let flooded = true;
    const injected = (c: Emulator["calls"][number]) => c.method === "editMessageText" && c.chatId === u.chatId && typeof c.params.text === "string" && c.params.text.startsWith("Done, job #") && c.at <= takenAt;
    em!.failNext("editMessageText", { error_code: 429, description: "Too Many Requests: retry after 1", retry_after: 1 }, { chatId: u.chatId, times: Infinity, match: (p) => flooded && String(p.text).startsWith("Done, job #") });
    const before = await u.sendDocument({ bytes: makePdf({ pages: [["Before the leader died"]] }), file_name: "before.pdf" });
    await expect.poll(async () => (await rows()).find((r) => r.message_id === before.message_id)?.status, { timeout: 60_000, message: "the first job ready" }).toBe("ready");
    const beforeId = (await rows()).find((r) => r.message_id === before.message_id)!.id;
    // The signal: the commit is done and Telegram refused its Done edit.
    await expect.poll(() => em!.calls.some((c) => c.method === "editMessageText" && c.status === 429 && isFinal(c.params.text, beforeId)), { timeout: 30_000, message: "the first job's Done edit refused (429)" }).toBe(true);
    // The second `all` process starts only now: with both engines up, either could claim the first job,
    // and the job must be the leader's (its Done in the leader's record when the leader dies).
    expect(first.lines.filter((l) => l.msg === "ready").map((l) => l.job)).toEqual([beforeId]);
    const second = start("lead-2", "all");
    await expect.poll(() => second.lines.some((l) => String(l.msg).startsWith("waiting for the intake lock")), { timeout: 60_000, message: "the second process waits for the intake lock" }).toBe(true);
    // Only the leader polled so far.
    expect(second.lines.some((l) => String(l.msg).startsWith("this process holds the intake lock"))).toBe(false);
    await first.kill();
    const killedAt = Date.now();
    // A request the leader wrote before it died still reaches Telegram after the kill (the socket holds it),
    // and an unrefused late Done edit of the dead leader would be the one shown. So the Done edit stays
    // refused until the survivor has taken the leader's record (its hold ran out): from then on only the
    // survivor's edit can be applied.
    await expect.poll(() => second.lines.some((l) => l.msg === "showing final status messages left by an earlier process or a failed try"), { timeout: 30_000, message: "the survivor takes the dead leader's final record" }).toBe(true);
    expect(u.messages().filter((m) => isFinal(m.text, beforeId))).toEqual([]);
    const takenAt = Date.now();
    flooded = false;
    await expect.poll(() => second.lines.some((l) => String(l.msg).startsWith("this process holds the intake lock")), { timeout: 15_000, message: "the survivor takes the intake lock" }).toBe(true);
    const after = await u.sendDocument({ bytes: makePdf({ pages: [["After the leader died"]] }), file_name: "after.pdf" });
    await expect.poll(async () => (await rows()).find((r) => r.message_id === after.message_id)?.status, { timeout: 60_000, message: "the second job ready" }).toBe("ready");
    // Both jobs end on "Done", each on its one status message; the dead leader's Done came from its record,
    // shown by the survivor once its hold ran out (LEASE_TTL), with exactly one edit applied.
    const afterId = (await rows()).find((r) => r.message_id === after.message_id)!.id;
    for (const id of [beforeId, afterId]) {
      await u.waitFor((m) => m.some((x) => isFinal(x.text, id)), 30_000);
      expect(statusMessages(u, id)).toHaveLength(1);
      expect(em!.calls.filter((c) => c.method === "editMessageText" && c.ok && isFinal(c.params.text, id))).toHaveLength(1);
    }
    expect(second.lines.some((l) => l.msg === "showing final status messages left by an earlier process or a failed try")).toBe(true);
    // The survivor's first getUpdates came after the kill: never two pollers.
    const polls = em!.calls.filter((c) => c.method === "getUpdates");
    expect(polls.some((c) => c.at > killedAt)).toBe(true);
    assertTelegramClean(injected);
    expect(await second.stop()).toBe(0);
  }, 240_000);
});
