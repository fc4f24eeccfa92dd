/**
 * Hostile and odd input, end to end: a tester's attempts to break the bot through the
 * Bot API emulator as chat users (odd file names, lying sizes, floods, odd commands,
 * stale buttons, blocked users, injected Telegram errors). Each case asserts what a
 * mature bot must show: a clear, specific chat message (or deliberate silence), a
 * `failed` job with a reason code when a job was created, nothing lost, no crash (a
 * normal PDF and JPEG sent next still end `ready`), and the token never in the logs.
 *
 * Not expressible with the emulator (skipped): forged callback_data that no bot message
 * carries (`pressButton` requires the button to exist), an empty text message (Telegram
 * never delivers one), update kinds other than message/callback_query (stickers, edited
 * messages, channel posts, my_chat_member).
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, describe, expect, test } from "vitest";
import { closeTestPool, poolRunner } from "../support/pool.ts";
import type { ProcessRunner } from "../../bot/worker/types.ts";
import { makePdf } from "../../scripts/samples/index.ts";
import type { ChatMessage, ChatUser, SentUpdate } from "../emulator/index.ts";
import { copyRunner } from "../support/copy-runner.ts";
import { sentDocuments } from "../support/sent-documents.ts";
import { sparseFile } from "../support/files.ts";
import type { Stack } from "../support/stack.ts";
import { withStack } from "../support/with-stack.ts";

afterAll(closeTestPool);

let seq = 0;
/** A small, unique one-page PDF. */
const pdf = (label = "page") => makePdf({ pages: [[`${label} ${++seq} ${Date.now()}`]] });
/** A unique small JPEG. */
const jpeg = (w = 64, h = 48) => {
  const n = ++seq;
  return sharp({ create: { width: w, height: h, channels: 3, background: { r: (n * 37) & 255, g: (n * 91) & 255, b: (n * 13) & 255 } } }).jpeg().toBuffer();
};
const bytes = (n: number, seed = 7) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 255);

/** Wait for the job of a user message to end; returns the row. */
async function ended(s: Stack, u: ChatUser, messageId: number, timeoutMs = 30_000) {
  return s.waitJob((await s.jobFor(u.chatId, messageId)).id, ["ready", "failed", "expired"], timeoutMs);
}

/** After odd input: a normal PDF and a normal JPEG from `u` still end `ready`. */
async function stillWorks(s: Stack, u: ChatUser): Promise<void> {
  const a = await u.sendDocument({ bytes: await pdf("after"), file_name: "after.pdf" });
  const b = await u.sendDocument({ bytes: await jpeg(), file_name: "after.jpg" });
  expect((await ended(s, u, a.message_id)).status).toBe("ready");
  expect((await ended(s, u, b.message_id)).status).toBe("ready");
}

/** The bot's replies to one user message (reply_to = its id). */
const repliesTo = (msgs: ChatMessage[], id: number) => msgs.filter((m) => m.reply_to === id);
const text = (u: ChatUser) => u.transcript().join("\n");
/** True when `s` has no lone UTF-16 surrogate (Telegram needs valid UTF-8 text). */
const wellFormed = (s: string) => !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);

/** A runner (copying by default) that holds every job in processing until `open()` (jobs stay in flight). */
function heldRunner(base: ProcessRunner = copyRunner()): { runner: ProcessRunner; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return {
    open,
    runner: async (i, o, l) => {
      await opened;
      return base(i, o, l);
    },
  };
}

/**
 * Per-test bound, ms. Each test runs a whole bot and several jobs through real processors, concurrently with
 * the others of its describe; on a loaded 2-core runner one took 17 s (2.5× an idle run). A bound, not a
 * delay; the waits inside are bounded themselves (waitJob 30 s, waitFor 10–15 s).
 */
const E2E_BOUND_MS = 90_000;

/** Unicode bidi controls (LRE..RLO, LRI..PDI, LRM/RLM/ALM). */
const BIDI = /[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/;

describe.concurrent("hostile file names and captions", () => {
  test("path traversal name '../../etc/passwd.pdf': ready, nothing outside the data dir, no path in result names", async () => {
    await withStack({}, async (s) => {
      const u = s.em.user({ language_code: "en" });
      const sent = await u.sendDocument({ bytes: await pdf(), file_name: "../../etc/passwd.pdf" });
      const job = await ended(s, u, sent.message_id);
      expect(job.status).toBe("ready");
      for (const p of [join(s.config.dataDir, "../../etc/passwd.pdf"), join(s.config.dataDir, "../etc/passwd.pdf"), join(s.dir, "etc")]) expect(existsSync(p)).toBe(false);
      for (const d of ["downloads", "work", "results"]) for (const n of readdirSync(join(s.config.dataDir, d))) expect(n).toMatch(/^\d+-[0-9a-f]{16}/);
      const uploads = sentDocuments(s.em.calls).filter((d) => d.upload);
      expect(uploads.length).toBeGreaterThan(0);
      for (const d of uploads) expect(d.fileName).not.toMatch(/[\\/]|\.\./);
      await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${job.id}`)), 10_000);
      await stillWorks(s, u);
    });
  }, E2E_BOUND_MS);

  test("control characters and an RTL override in the name never reach chat text or result names", async () => {
    await withStack({}, async (s) => {
      const u = s.em.user({ language_code: "en" });
      const name = "invoice\u0000\u0007\u001b[31m\u202Efdp.exe\u2066x\u2069.pdf";
      const sent = await u.sendDocument({ bytes: await pdf(), file_name: name });
      const job = await ended(s, u, sent.message_id);
      expect(job.status).toBe("ready");
      await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${job.id}`)), 10_000);
      // every text the bot sent or edited, and every result file name (the status message is edited later)
      const sentTexts = [
        ...s.em.calls.filter((c) => c.chatId === u.chatId && ["sendMessage", "editMessageText"].includes(c.method)).map((c) => c.params.text),
        ...sentDocuments(s.em.calls.filter((c) => c.chatId === u.chatId)).flatMap((d) => [d.caption, d.fileName]),
      ];
      expect(sentTexts.some((t) => typeof t === "string" && t.startsWith("Got “invoice"))).toBe(true);
      for (const t of sentTexts) {
        if (typeof t !== "string") continue;
        expect(t, `control character in ${JSON.stringify(t)}`).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f]/);
        expect(t, `bidi control in ${JSON.stringify(t)}`).not.toMatch(BIDI);
      }
      await stillWorks(s, u);
    });
  }, E2E_BOUND_MS);

  test("a 300-character name and emoji at the cut: shortened, well-formed UTF-16 everywhere, ready", async () => {
    await withStack({}, async (s) => {
      const u = s.em.user({ language_code: "en" });
      // 60 ASCII + emoji: a cut at 61 or 64 UTF-16 units falls inside a surrogate pair.
      const long = `${"a".repeat(60)}${"😀".repeat(120)}.pdf`;
      expect(long.length).toBe(304);
      const sent = await u.sendDocument({ bytes: await pdf(), file_name: long });
      const job = await ended(s, u, sent.message_id);
      expect(job.status).toBe("ready");
      const msgs = await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${job.id}`)), 10_000);
      const accepted = u.transcript().find((l) => l.includes(`job #${job.id}. Queued`));
      expect(accepted).toBeDefined();
      expect(accepted!.length).toBeLessThan(200);
      for (const m of msgs) for (const t of [m.text, m.caption, m.document?.file_name]) if (t !== undefined) expect(wellFormed(t), `lone surrogate in ${JSON.stringify(t)}`).toBe(true);
      const sentTexts = [
        ...s.em.calls.filter((c) => c.method === "sendMessage" || c.method === "editMessageText").map((c) => c.params.text),
        ...sentDocuments(s.em.calls).flatMap((d) => [d.caption, d.fileName]),
      ];
      for (const v of sentTexts) if (typeof v === "string") expect(wellFormed(v), `lone surrogate sent: ${JSON.stringify(v)}`).toBe(true);
      await stillWorks(s, u);
    });
  }, E2E_BOUND_MS);

  test("markup in the caption and the name is shown literally, never parsed", async () => {
    await withStack({}, async (s) => {
      const u = s.em.user({ language_code: "en" });
      const sent = await u.sendDocument({ bytes: await pdf(), file_name: "<b>x</b>_*y*[z](tg://user?id=1).pdf", caption: "<i>hi</i> *bold* `code` [l](http://e.x)" });
      const job = await ended(s, u, sent.message_id);
      expect(job.status).toBe("ready");
      // The "Got …" announce is sent in the background and may lag the `ready` row; "Done" edits that
      // same message, so once it shows every text of this job was sent.
      await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${job.id}`)));
      expect(text(u)).toContain("Got “<b>x</b>_*y*[z](tg://user?id=1).pdf”");
      expect(s.em.calls.filter((c) => !c.ok && c.status === 400)).toEqual([]);
    });
  }, E2E_BOUND_MS);
});

describe.concurrent("lying and edge sizes, mislabeled content", () => {
  test("declared file_size 0 with real bytes: failed size_mismatch at once, a clear message, the source never kept", async () => {
    // Policy (seed 000, audit T5): the real size on disk is compared with the declared one; a difference is a
    // final failure (a new getFile cannot change the file), and the file never gets its final name.
    await withStack({}, async (s) => {
      const u = s.em.user({ language_code: "en" });
      const bytes = await pdf();
      const sent = await u.sendDocument({ bytes, file_name: "zero.pdf", file_size: 0 });
      const job = await ended(s, u, sent.message_id);
      expect([job.status, job.reason, job.realSize, job.localPath]).toEqual(["failed", "size_mismatch", null, null]);
      expect(JSON.parse(job.reasonParams!)).toEqual({ size_bytes: bytes.byteLength, declared_bytes: 0 });
      expect(s.em.count("getFile")).toBe(1);
      const msgs = await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Job #${job.id} failed: The downloaded file is`)), 10_000);
      expect(msgs.find((x) => x.text?.startsWith(`Job #${job.id} failed`))!.text).toMatch(/The downloaded file is \d+ KB, not the .+ Telegram announced\./);
      expect(readdirSync(s.app.paths.downloads).filter((n) => n.startsWith(`${job.id}-`))).toEqual([]);
      await stillWorks(s, u);
    });
  }, E2E_BOUND_MS);

  test("declared size smaller than the real one: failed size_mismatch, the message names two different sizes", async () => {
    await withStack({ runner: copyRunner() }, async (s) => {
      const u = s.em.user({ language_code: "en" });
      const sent = await u.sendDocument({ bytes: bytes(60_000), file_name: "liar.bin", file_size: 1000 });
      const job = await ended(s, u, sent.message_id);
      expect([job.status, job.reason]).toEqual(["failed", "size_mismatch"]);
      const msg = (await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Job #${job.id} failed`)), 10_000)).find((x) => x.text?.startsWith(`Job #${job.id} failed`))!;
      const m = /file is (\S+ [KM]B), not the (\S+ [KM]B)/.exec(msg.text!);
      expect(m, msg.text).not.toBeNull();
      expect(m![1], `message: ${msg.text}`).not.toBe(m![2]); // "0.1 MB, not the 0.1 MB" says nothing
    });
  }, E2E_BOUND_MS);

  test("declared size exactly at the 20 MiB cloud limit: accepted and ready (the limit is inclusive)", async () => {
    await withStack({ runner: copyRunner() }, async (s) => {
      const u = s.em.user({ language_code: "en" });
      const big = sparseFile(s.dir, 20 << 20, "edge.bin");
      const sent = await u.sendDocument({ path: big, file_name: "edge.pdf" });
      const job = await ended(s, u, sent.message_id);
      expect([job.status, job.realSize]).toEqual(["ready", 20 << 20]);
    });
  }, E2E_BOUND_MS);

  test("declared size 2^40 bytes (over 2^31): refused at intake as too_big, naming the limit, no getFile", async () => {
    await withStack({ runner: copyRunner() }, async (s) => {
      const u = s.em.user({ language_code: "en" });
      const sent = await u.sendDocument({ bytes: bytes(1000), file_name: "tera.pdf", file_size: 2 ** 40 });
      const job = await ended(s, u, sent.message_id);
      expect([job.status, job.reason]).toEqual(["failed", "too_big"]);
      await u.waitFor((m) => m.some((x) => x.text === `The file is 1,048,576 MB, over this bot’s 20 MB download limit. Job #${job.id} will not run.`), 10_000);
      expect(s.em.count("getFile")).toBe(0);
    });
  }, E2E_BOUND_MS);

  test("0-byte document: failed empty, 'The file is empty (0 bytes).'", async () => {
    await withStack({}, async (s) => {
      const u = s.em.user({ language_code: "en" });
      const sent = await u.sendDocument({ bytes: new Uint8Array(0), file_name: "nothing.pdf" });
      const job = await ended(s, u, sent.message_id);
      expect([job.status, job.reason]).toEqual(["failed", "empty"]);
      await u.waitFor((m) => m.some((x) => x.text === `Job #${job.id} failed: The file is empty (0 bytes).`), 10_000);
      await stillWorks(s, u);
    });
  }, E2E_BOUND_MS);

  test("mime image/jpeg and name .jpg but PDF bytes: processed as a PDF, the reply says so", async () => {
    await withStack({}, async (s) => {
      const u = s.em.user({ language_code: "en" });
      const sent = await u.sendDocument({ bytes: await pdf(), file_name: "holiday.jpg", mime_type: "image/jpeg" });
      const job = await ended(s, u, sent.message_id);
      expect([job.status, job.detectedType]).toEqual(["ready", "application/pdf"]);
      const msgs = await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${job.id}`)), 10_000);
      expect(msgs.find((x) => x.text?.startsWith("Done"))!.text).toContain("It was sent as “.jpg”, but the content is: PDF document.");
    });
  }, E2E_BOUND_MS);

  test("a photo with only a tiny 4×3 size: ready", async () => {
    await withStack({}, async (s) => {
      const u = s.em.user({ language_code: "en" });
      const sent = await u.sendPhoto({ bytes: await jpeg(4, 3), sizes: [[4, 3]] });
      const job = await ended(s, u, sent.message_id);
      expect(job.status).toBe("ready");
      await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${job.id}`)), 10_000);
      await stillWorks(s, u);
    });
  }, E2E_BOUND_MS);
});

describe.concurrent("floods and duplicates", () => {
  test("the same file 5 times quickly in one chat: one job, each message answered, one result set", async () => {
    // Processing (the real processors) waits until all five messages are answered, so every copy meets the
    // job in flight. Without the gate a loaded machine could finish the job before the 5th copy is handled,
    // and that copy would rightly get the stored result again (a second result set).
    const gate = heldRunner(poolRunner());
    await withStack({ runner: gate.runner }, async (s) => {
      const u = s.em.user({ language_code: "en" });
      const data = await pdf("five");
      const sent: SentUpdate[] = [];
      for (let i = 0; i < 5; i++) sent.push(await u.sendDocument({ bytes: data, file_name: `same-${i}.pdf` }));
      let msgs: ChatMessage[];
      try {
        msgs = await u.waitFor((m) => sent.every((x) => repliesTo(m, x.message_id).length > 0), 30_000);
      } finally {
        gate.open();
      }
      const job = await ended(s, u, sent[0]!.message_id);
      expect(job.status).toBe("ready");
      expect(await s.app.services.store.listByChat(u.chatId, 10)).toHaveLength(1);
      for (const x of sent.slice(1)) expect(repliesTo(msgs, x.message_id).some((r) => r.text?.includes(`job #${job.id}`)), u.transcript().join("\n")).toBe(true);
      const results = await s.app.services.store.results(job.id);
      await Bun.sleep(500);
      expect(u.messages().filter((m) => m.document).length).toBe(results.length);
    });
  }, E2E_BOUND_MS);

  test("an album of 3 documents (one media_group_id): one job (issue 13 item 5), ready, one PDF of the three", async () => {
    await withStack({}, async (s) => {
      const u = s.em.user({ language_code: "en" });
      const sent: SentUpdate[] = [];
      for (let i = 0; i < 3; i++) sent.push(await u.sendDocument({ bytes: await pdf(`album ${i}`), file_name: `album-${i}.pdf`, media_group_id: "13579" }));
      const job = await ended(s, u, sent[0]!.message_id);
      expect([job.status, job.source]).toEqual(["ready", "album"]);
      expect(JSON.parse(job.facts!)).toMatchObject({ parts: 3, pages: 3 });
      expect(await s.app.services.store.listByChat(u.chatId, 10)).toHaveLength(1);
    });
  }, E2E_BOUND_MS);

  test("the same file in two chats: two jobs, both ready, each chat gets its own result", async () => {
    await withStack({}, async (s) => {
      const a = s.em.user({ language_code: "en" });
      const b = s.em.user({ language_code: "ru" });
      const data = await pdf("shared");
      const sa = await a.sendDocument({ bytes: data, file_name: "shared.pdf" });
      const sb = await b.sendDocument({ bytes: data, file_name: "shared.pdf" });
      const [ja, jb] = await Promise.all([ended(s, a, sa.message_id), ended(s, b, sb.message_id)]);
      expect(ja.id).not.toBe(jb.id);
      expect([ja.status, jb.status]).toEqual(["ready", "ready"]);
      await a.waitFor((m) => m.some((x) => x.document) && m.some((x) => x.text?.startsWith(`Done, job #${ja.id}`)), 10_000);
      await b.waitFor((m) => m.some((x) => x.document) && m.some((x) => x.text?.startsWith(`Готово`)), 10_000);
    });
  }, E2E_BOUND_MS);

  test("30 different files from one user: 5 jobs (USER_MAX_JOBS_IN_FLIGHT), 25 clear refusals, none lost", async () => {
    const gate = heldRunner();
    await withStack({ runner: gate.runner }, async (s) => {
      const u = s.em.user({ language_code: "en" });
      const sent: SentUpdate[] = [];
      for (let i = 0; i < 30; i++) sent.push(await u.sendDocument({ bytes: bytes(2000 + i, i), file_name: `f${i}.bin` }));
      const refusal = "You already have 5 files in progress (limit 5). Send this one when some of them are done.";
      // Every one of the 30 messages gets exactly one answer: a job or a refusal.
      let msgs: ChatMessage[];
      let jobs: Awaited<ReturnType<typeof s.app.services.store.listByChat>>;
      try {
        // 30 replies in one private chat are paced at about one per second by the outbox: ≥ 30 s.
        msgs = await u.waitFor((m) => sent.every((x) => repliesTo(m, x.message_id).length > 0), 90_000);
        jobs = await s.app.services.store.listByChat(u.chatId, 100);
      } finally {
        gate.open();
      }
      expect(jobs).toHaveLength(5);
      for (const x of sent) {
        const r = repliesTo(msgs, x.message_id);
        expect(r).toHaveLength(1);
        const job = jobs.find((j) => j.messageId === x.message_id);
        if (job) expect(r[0]!.text).toContain(`job #${job.id}`);
        else expect(r[0]!.text).toBe(refusal);
      }
      for (const j of jobs) expect((await s.waitJob(j.id)).status).toBe("ready");
      await stillWorks(s, u);
    });
  }, 150_000);

  test("one user in four chats at once: the per-user in-flight limit holds across chats", async () => {
    const gate = heldRunner();
    await withStack({ runner: gate.runner }, async (s) => {
      const u = s.em.user({ language_code: "en" });
      const chats = [u, s.em.group().member(u), s.em.group().member(u), s.em.group().member(u)];
      let n = 0;
      for (let round = 0; round < 3; round++) for (const c of chats) await c.sendDocument({ bytes: bytes(3000 + n, n++), file_name: `x${n}.bin` });
      let total = 0;
      try {
        // Polling confirms a batch only after its handlers returned: no pending update = all 12 handled
        // (each handler INSERTs or refuses before it returns), so the count below is final.
        await expect.poll(() => s.em.pendingUpdates()).toBe(0);
        for (const c of chats) total += (await s.app.services.store.listByChat(c.chatId, 100)).length;
      } finally {
        gate.open(); // let held jobs finish before any assertion can throw
      }
      expect(total, "jobs accepted for one user across 4 chats (limit 5)").toBeLessThanOrEqual(5);
    });
  }, E2E_BOUND_MS);
});

describe.concurrent("commands with odd arguments", () => {
  test("odd /status, /cancel, /resend, /delete arguments get usage or not-found answers; another chat's job is untouched", async () => {
    await withStack({}, async (s) => {
      const owner = s.em.user({ language_code: "en" });
      const u = s.em.user({ language_code: "en" });
      const theirs = await ended(s, owner, (await owner.sendDocument({ bytes: await pdf(), file_name: "theirs.pdf" })).message_id);
      expect(theirs.status).toBe("ready");
      const cases: Array<[string, (t: string) => boolean]> = [
        ["/status -1", (t) => t === "Give a job number, e.g. /status 12"],
        ["/status 99999999999999999999", (t) => t === "Give a job number, e.g. /status 12" || t === "Job #99999999999999999999 was not found in this chat."],
        ["/status 0", (t) => t === "Job #0 was not found in this chat." || t === "Give a job number, e.g. /status 12"],
        ["/cancel abc", (t) => t === "Give a job number, e.g. /cancel 12"],
        ["/resend", (t) => t === "Give a job number, e.g. /resend 12"],
        [`/delete ${theirs.id}`, (t) => t === `Job #${theirs.id} was not found in this chat.`],
        [`/cancel ${theirs.id}`, (t) => t === `Job #${theirs.id} was not found in this chat.`],
        [`/resend ${theirs.id}`, (t) => t === `Job #${theirs.id} was not found in this chat.`],
        [`/status@docket_test_bot ${theirs.id}`, (t) => t === `Job #${theirs.id} was not found in this chat.`],
        ["/status   #1   ", (t) => t === "Job #1 was not found in this chat."],
      ];
      for (const [cmd, ok] of cases) {
        const before = u.messages().length;
        await u.sendText(cmd);
        const msgs = await u.waitFor((m) => m.length > before, 10_000);
        expect(ok(msgs.at(-1)!.text ?? ""), `${cmd} → ${msgs.at(-1)!.text}`).toBe(true);
      }
      const after = (await s.app.services.store.get(theirs.id))!;
      expect(after.status).toBe("ready");
      expect(readdirSync(join(s.config.dataDir, "results")).some((x) => x.startsWith(`${theirs.id}-`))).toBe(true);
      // the owner can still /status it with the bot suffix
      await owner.sendText(`/status@docket_test_bot ${theirs.id}`);
      await owner.waitFor((m) => m.some((x) => x.text === `#${theirs.id} · theirs.pdf · ready`), 10_000);
    });
  }, E2E_BOUND_MS);

  test("unknown command and a 4096-character text: a clear answer pointing to /help, bot keeps working", async () => {
    await withStack({}, async (s) => {
      const u = s.em.user({ language_code: "en" });
      await u.sendText("/frobnicate now");
      const first = await u.waitFor((m) => m.length >= 1, 10_000);
      expect(first[0]!.text, "unknown command answer").toContain("/help");
      await u.sendText("x".repeat(4096));
      const second = await u.waitFor((m) => m.length >= 2, 10_000);
      expect(second[1]!.text).toBe("Send a document (a PDF or an image) as a file — I’ll process it and send the result back.");
      await stillWorks(s, u);
    });
  }, E2E_BOUND_MS);
});

describe.concurrent("buttons", () => {
  test("a stale /settings message's button still works and every press is answered", async () => {
    await withStack({}, async (s) => {
      const u = s.em.user({ language_code: "en" });
      await u.sendText("/settings");
      await u.waitFor((m) => m.filter((x) => x.reply_markup).length === 1, 10_000);
      await u.sendText("/settings");
      const menus = (await u.waitFor((m) => m.filter((x) => x.reply_markup).length === 2, 10_000)).filter((x) => x.reply_markup);
      const stale = menus[0]!;
      await u.pressButton(stale.message_id, "settings:pdf:pages");
      await u.waitFor((m) => JSON.stringify(m.find((x) => x.message_id === stale.message_id)?.reply_markup).includes("✅ Every page"), 10_000);
      expect((await s.app.services.store.getSettings(u.chatId)).pdfAction).toBe("pages");
      // pressing the already-chosen option again on the fresh menu (edit would change nothing)
      await u.pressButton(menus[1]!.message_id, "settings:pdf:default");
      await u.pressButton(menus[1]!.message_id, "settings:pdf:default");
      await expect.poll(() => s.em.calls.filter((c) => c.method === "answerCallbackQuery").length).toBeGreaterThanOrEqual(3);
      expect(s.em.calls.filter((c) => c.method === "answerCallbackQuery" && c.ok)).toHaveLength(3);
      expect((await s.app.services.store.getSettings(u.chatId)).pdfAction).toBe("default");
      expect(s.logs.some((l) => l.includes("handler error"))).toBe(false);
      await stillWorks(s, u);
    });
  }, E2E_BOUND_MS);
});

describe.concurrent("group chats", () => {
  test("in a group: chatter and a command addressed to another bot get silence", async () => {
    await withStack({ emulator: { rateLimits: {} } }, async (s) => {
      const g = s.em.group();
      const u = g.member(s.em.user({ language_code: "en" }));
      await u.sendText("hello everyone, lunch at 1?");
      await u.sendText("/status@other_bot 1");
      // Both handled (a batch is confirmed only after its handlers returned) …
      await expect.poll(() => s.em.pendingUpdates()).toBe(0);
      // … and nothing is said, not even late through the outbox.
      await Bun.sleep(2500);
      expect(g.messages(), g.transcript().join("\n")).toEqual([]);
    });
  }, E2E_BOUND_MS);

  test("in a group: a document works, /status@docket_test_bot answers, messages paced (no 429)", async () => {
    await withStack({ emulator: { rateLimits: {} } }, async (s) => {
      const g = s.em.group();
      const u = g.member(s.em.user({ language_code: "en" }));
      const sent = await u.sendDocument({ bytes: await pdf("group"), file_name: "group.pdf" });
      const job = await ended(s, u, sent.message_id);
      expect(job.status).toBe("ready");
      await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${job.id}`)) && m.some((x) => x.document), 20_000);
      await u.sendText(`/status@docket_test_bot ${job.id}`);
      await u.waitFor((m) => m.some((x) => x.text === `#${job.id} · group.pdf · ready`), 15_000);
      expect(s.em.calls.filter((c) => c.chatId === g.id && c.status === 429)).toEqual([]);
    });
  }, E2E_BOUND_MS);
});

describe.concurrent("blocked users and Telegram errors", () => {
  test("a user blocks the bot right after sending: the job ends (ready or failed delivery_failed), the bot keeps running", async () => {
    await withStack({}, async (s) => {
      const u = s.em.user({ language_code: "en" });
      const sent = await u.sendDocument({ bytes: await pdf("blocked"), file_name: "blocked.pdf" });
      u.block();
      const job = await ended(s, u, sent.message_id, 30_000);
      if (job.status === "failed") expect(job.reason).toBe("delivery_failed");
      else expect(job.status).toBe("ready");
      const other = s.em.user({ language_code: "en" });
      await stillWorks(s, other);
      u.unblock();
      await stillWorks(s, u);
    });
  }, E2E_BOUND_MS);

  test("sendDocument of the result answers 500 twice, then OK: ready, the result arrives exactly once", async () => {
    await withStack({ runner: copyRunner() }, async (s) => {
      const u = s.em.user({ language_code: "en" });
      s.em.failNext("sendDocument", { error_code: 500, description: "Internal Server Error: restart" }, { times: 2 });
      const sent = await u.sendDocument({ bytes: bytes(5000, 3), file_name: "five-hundred.bin" });
      const job = await ended(s, u, sent.message_id, 30_000);
      expect(job.status).toBe("ready");
      await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${job.id}`)), 10_000);
      expect(u.messages().filter((m) => m.document)).toHaveLength(1);
      expect(s.em.calls.filter((c) => c.method === "sendDocument").map((c) => c.status)).toEqual([500, 500, 200]);
    });
  }, E2E_BOUND_MS);

  test("413 on the result upload: failed result_too_big with a message that states real sizes", async () => {
    await withStack({ runner: copyRunner() }, async (s) => {
      const u = s.em.user({ language_code: "en" });
      s.em.failNext("sendDocument", { error_code: 413, description: "Request Entity Too Large" });
      const sent = await u.sendDocument({ bytes: bytes(5000, 4), file_name: "huge-result.bin" });
      const job = await ended(s, u, sent.message_id);
      expect([job.status, job.reason]).toEqual(["failed", "result_too_big"]);
      const msg = (await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Job #${job.id} failed`)), 10_000)).find((x) => x.text?.startsWith(`Job #${job.id} failed`))!;
      expect(msg.text).toMatch(/^Job #\d+ failed: The result is [\d.]+ (KB|MB), over the 50 MB upload limit\. For a PDF, split or compress it with the buttons under its result, or send fewer pages\.$/);
      await stillWorks(s, u);
    });
  }, E2E_BOUND_MS);

  test("403 on the status message: the job still ends ready, the result and 'Done' still reach the chat", async () => {
    await withStack({}, async (s) => {
      const u = s.em.user({ language_code: "en" });
      s.em.failNext("sendMessage", { error_code: 403, description: "Forbidden: bot was blocked by the user" }, { chatId: u.chatId });
      const sent = await u.sendDocument({ bytes: await pdf("forbidden"), file_name: "status403.pdf" });
      const job = await ended(s, u, sent.message_id);
      expect(job.status).toBe("ready");
      await u.waitFor((m) => m.some((x) => x.document) && m.some((x) => x.text?.startsWith(`Done, job #${job.id}`)), 15_000);
      await stillWorks(s, u);
    });
  }, E2E_BOUND_MS);
});
