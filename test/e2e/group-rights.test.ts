/**
 * Who may do what in a group (issue 11 item 6), through the real bot and the strict emulator with
 * Telegram's rate limits:
 * - a job belongs to `sender_chat` when there is one: anonymous admins (from GroupAnonymousBot
 *   1087968824) own their group's jobs, a channel (from Channel_Bot 136817688) its own — so anonymous
 *   admins of two groups no longer share one user's limits, and a member cannot cancel their jobs;
 *   ALLOWED_USER_IDS may name a group to admit its anonymous admins;
 * - a group's creator and administrators (getChatMember, cached) may /delete anyone's job and change
 *   /settings; members are told that only admins can; a member's press on an admin's keyboard changes
 *   nothing;
 * - a handler never waits on getChatMember: with it stuck in a 429 (retry_after 20), another user's
 *   /help is answered at once; the check gives up after its bound and says so in the journal.
 */
import { expect, test } from "vitest";
import { ADMIN_CHECK_BOUND_MS } from "../../bot/intake/chat-admins.ts";
import type { ProcessRunner } from "../../bot/worker/types.ts";
import type { ChatUser } from "../emulator/index.ts";
import { copyRunner } from "../support/copy-runner.ts";
import { withStack } from "../support/with-stack.ts";

const BOUND = 120_000;
const NEWS = -1_002_000_000_501;
type Keyboard = { inline_keyboard: Array<Array<{ text: string; callback_data: string }>> };
const bytes = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 17 + seed) & 255);
const said = (u: ChatUser, text: string, ms = 30_000) => u.waitFor((m) => m.some((x) => x.text === text), ms);

/** A runner that holds every job until `open()` (so /cancel meets a live job). */
function heldRunner(): { runner: ProcessRunner; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  const copy = copyRunner();
  return {
    open,
    runner: async (i, o, l) => {
      await new Promise<void>((resolve, reject) => {
        void opened.then(resolve);
        l.signal?.addEventListener("abort", () => reject(new Error("aborted while held")), { once: true });
      });
      return copy(i, o, l);
    },
  };
}

test("anonymous admins and channels own their jobs by sender_chat: per-group limits, a member cannot cancel them, the admin can", async () => {
  const gate = heldRunner();
  await withStack({ runner: gate.runner, emulator: { rateLimits: {} }, env: { USER_MAX_JOBS_IN_FLIGHT: "1" } }, async (s) => {
    const [gA, gB] = [s.em.group(), s.em.group()];
    const anonA = gA.anonymousAdmin();
    const anonB = gB.anonymousAdmin();
    const member = gA.member(s.em.user({ language_code: "en" }));
    const news = gA.channel({ id: NEWS, title: "News" });
    const other = gA.channel({ title: "Other" });

    const a = await anonA.sendDocument({ bytes: bytes(3000, 1), file_name: "a.bin" });
    const b = await anonB.sendDocument({ bytes: bytes(3000, 2), file_name: "b.bin" });
    const c = await news.sendDocument({ bytes: bytes(3000, 3), file_name: "c.bin" });
    const [ja, jb, jc] = [await s.jobFor(gA.id, a.message_id), await s.jobFor(gB.id, b.message_id), await s.jobFor(gA.id, c.message_id)];
    // One in flight per sender, and all three were accepted (a limit refusal creates no job): each group's
    // anonymous admins and the channel are senders of their own. Before, they were users 1087968824 and
    // 136817688 of every group, and the second file was refused by the first one's limit.
    expect([ja.userId, jb.userId, jc.userId]).toEqual([gA.id, gB.id, NEWS]);

    await member.sendText(`/cancel ${ja.id}`); // a plain member: getChatMember says member
    await other.sendText(`/cancel ${jc.id}`); // another channel: refused without asking anyone
    await said(member, `Job #${ja.id} belongs to another member of this chat; only they, an admin of this group or the bot’s admin can do that.`);
    // Stand-in senders carry no language_code: Russian, the default.
    await said(other, `Задача № ${jc.id} принадлежит другому участнику чата; это может сделать только он, администратор группы или администратор бота.`);
    await anonA.sendText(`/cancel ${ja.id}`);
    await said(anonA, `Задача № ${ja.id} отменена.`);
    expect((await s.waitJob(ja.id, ["failed"], 10_000)).reason).toBe("cancelled");
    gate.open();
    expect((await s.waitJob(jc.id, ["ready"], 60_000)).status).toBe("ready");
    expect((await s.waitJob(jb.id, ["ready"], 60_000)).status).toBe("ready");
    expect(s.em.calls.filter((x) => x.method === "getChatMember").map((x) => [x.params.chat_id, x.params.user_id])).toEqual([[gA.id, member.id]]);
    expect(s.em.calls.filter((x) => x.status === 429)).toEqual([]);
  });
}, BOUND);

test("ALLOWED_USER_IDS naming a group admits its anonymous admins; another group's anonymous admins are refused once a day as one sender", async () => {
  const LISTED = -4_100_000_001;
  await withStack({ runner: copyRunner(), emulator: { rateLimits: {} }, env: { ALLOWED_USER_IDS: String(LISTED) } }, async (s) => {
    const listed = s.em.group({ id: LISTED }).anonymousAdmin();
    const other = s.em.group({ id: -4_100_000_002 }).anonymousAdmin();
    const ok = await listed.sendDocument({ bytes: bytes(2000, 7), file_name: "in.bin" });
    expect((await s.waitJob((await s.jobFor(LISTED, ok.message_id)).id)).status).toBe("ready");
    await other.sendDocument({ bytes: bytes(2000, 8), file_name: "out-1.bin" });
    await other.sendText("/jobs");
    await said(other, "Извините, этот бот доступен только приглашённым пользователям.");
    await expect.poll(() => s.em.pendingUpdates(), { timeout: 15_000 }).toBe(0);
    expect(other.messages().map((m) => m.text)).toEqual(["Извините, этот бот доступен только приглашённым пользователям."]);
    expect(await s.app.services.store.listByChat(-4_100_000_002, 10)).toEqual([]);
  });
}, BOUND);

test("a group's administrator (getChatMember, cached) may /delete a member's job and change /settings; a member is told only admins can", async () => {
  await withStack({ runner: copyRunner(), emulator: { rateLimits: {} } }, async (s) => {
    const g = s.em.group();
    const alice = g.member(s.em.user({ language_code: "en" }));
    const bob = g.member(s.em.user({ language_code: "en" }), "administrator");
    const carol = g.member(s.em.user({ language_code: "en" }));
    const sent = await alice.sendDocument({ bytes: bytes(2000, 4), file_name: "alice.bin" });
    const job = await s.waitJob((await s.jobFor(g.id, sent.message_id)).id);
    expect(job.status).toBe("ready");

    await bob.sendText(`/delete ${job.id}`);
    await said(bob, `Job #${job.id}: source and result deleted.`);
    expect((await s.app.services.store.get(job.id))?.status).toBe("expired");

    await carol.sendText("/settings");
    await said(carol, "In a group, only its admins can change /settings.");
    await bob.sendText("/settings"); // bob's answer is cached: no second getChatMember
    const [menu] = (await bob.waitFor((m) => m.some((x) => x.reply_markup))).filter((x) => x.reply_markup);
    await carol.pressButton(menu!.message_id, "settings:pdf:pages"); // carol's answer is cached too
    await expect.poll(() => s.em.calls.find((x) => x.method === "answerCallbackQuery" && x.ok)?.params.text, { timeout: 15_000 }).toBe("In a group, only its admins can change /settings.");
    expect((await s.app.services.store.getSettings(g.id)).pdfAction).toBe("default");
    await bob.pressButton(menu!.message_id, "settings:pdf:pages");
    await bob.waitFor((m) => ((m.find((x) => x.message_id === menu!.message_id)?.reply_markup as Keyboard | undefined)?.inline_keyboard[1]?.[0]?.text.startsWith("✅") ?? false), 30_000);
    expect((await s.app.services.store.getSettings(g.id)).pdfAction).toBe("pages");
    expect(s.em.calls.filter((x) => x.method === "getChatMember").map((x) => x.params.user_id)).toEqual([bob.id, carol.id]);
  });
}, BOUND);

test("getChatMember stuck in a 429 (retry_after 20) never holds the batch: another user's /help is answered at once; the check gives up after its bound", async () => {
  await withStack({ emulator: { rateLimits: {} } }, async (s) => {
    const g = s.em.group();
    const m = g.member(s.em.user({ language_code: "en" }));
    const p = s.em.user({ language_code: "en" });
    s.em.failNext("getChatMember", { error_code: 429, description: "Too Many Requests: retry after 20", retry_after: 20 }, { times: Number.POSITIVE_INFINITY });
    await m.sendText("/settings");
    await expect.poll(() => s.em.calls.some((x) => x.method === "getChatMember" && x.status === 429), { timeout: 10_000 }).toBe(true);
    await p.sendText("/help");
    await p.waitFor((msgs) => msgs.some((x) => x.text !== undefined), 10_000);
    expect(s.em.calls.filter((x) => x.method === "getChatMember" && x.ok)).toEqual([]); // still waiting out its 429
    await expect.poll(() => s.logs.some((l) => l.includes("getChatMember failed; the member is treated as not an admin")), { timeout: ADMIN_CHECK_BOUND_MS + 10_000 }).toBe(true);
  });
}, BOUND);
