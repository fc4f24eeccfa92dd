/**
 * Intake replies through the real bot and the strict emulator (rate limits on): the refusal of a user
 * outside ALLOWED_USER_IDS at most once a day (issue 11 item 6), a declared size that is not a
 * non-negative safe integer taken as unknown (item 6), and a reply to a chat that blocked the bot given
 * up with one journal line (item 3: a reply is retried only while it can still be delivered).
 */
import { describe, test } from "vitest";
import { copyRunner } from "../support/copy-runner.ts";
import { withStack } from "../support/with-stack.ts";

/** Unique bytes (copyRunner jobs). */
let seq = 0;
const bytes = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + ++seq * 7 + (i >> 8)) & 255);

describe.concurrent("intake replies", () => {
  test("an outsider floods a group with 10 files and 10 commands: one refusal; an allowed member's /help is answered, no 429", async ({ expect }) => {
    await withStack({ runner: copyRunner(), emulator: { rateLimits: {} }, env: { ALLOWED_USER_IDS: "700000001" } }, async (s) => {
      const g = s.em.group();
      const member = g.member(s.em.user({ id: 700000001, language_code: "en" }));
      const outsider = g.member(s.em.user({ id: 700000666, language_code: "en" }));
      for (let i = 0; i < 10; i++) {
        await outsider.sendDocument({ bytes: bytes(300), file_name: `spam-${i}.bin` });
        await outsider.sendText(i % 2 ? "/help@docket_test_bot" : `/status@docket_test_bot ${i}`);
      }
      await outsider.sendText("just chatting"); // chatter: silence, as from allowed members
      await member.sendText("/help@docket_test_bot");
      await member.waitFor((m) => m.some((x) => x.text?.startsWith("I take PDFs and images")));
      await expect.poll(() => s.em.pendingUpdates()).toBe(0);
      const refusals = () => g.messages().filter((x) => x.text === "Sorry, this bot is available to invited users only.");
      await expect.poll(() => refusals().length).toBe(1);
      expect(refusals()[0]!.reply_to).toBe(g.messages({ includeUser: true }).find((x) => x.from === "user")!.message_id); // the first message
      expect(s.em.calls.filter((c) => c.status === 429)).toEqual([]);
      expect(await s.app.services.store.listByChat(g.id, 100)).toEqual([]);
      expect(s.logs.filter((l) => l.includes("already refused within 24 h"))).toHaveLength(19); // the 20 actionable messages but the first
    });
  });

  test("a forged negative file_size is taken as unknown: it lowers no one's bytes of the day, the file is checked by its real size", async ({ expect }) => {
    await withStack({ runner: copyRunner(), emulator: { rateLimits: {} }, env: { USER_MAX_BYTES_PER_DAY: "1600" } }, async (s) => {
      const u = s.em.user({ language_code: "en" });
      const a = await u.sendDocument({ bytes: bytes(1500), file_name: "a.bin" });
      expect((await s.waitJob((await s.jobFor(u.chatId, a.message_id)).id)).status).toBe("ready");
      const forged = await u.sendDocument({ bytes: bytes(100), file_name: "forged.bin", file_size: -10_000_000 });
      const f = await s.waitJob((await s.jobFor(u.chatId, forged.message_id)).id);
      expect([f.status, f.declaredSize, f.realSize]).toEqual(["ready", null, 100]);
      // 1500 + 100 bytes today: the next file is over USER_MAX_BYTES_PER_DAY (a negative size would have made room).
      await u.sendDocument({ bytes: bytes(100), file_name: "c.bin" });
      await u.waitFor((m) => m.some((x) => x.text === "In the last 24 hours you sent 0.1 MB of the allowed 0.1 MB. Please try later."));
      expect(await s.app.services.store.listByChat(u.chatId, 10)).toHaveLength(2);
    });
  });

  test("a user who blocked the bot: the reply is given up at the first 403 with one journal line, nothing left pending", async ({ expect }) => {
    await withStack({ runner: copyRunner(), emulator: { rateLimits: {} } }, async (s) => {
      const u = s.em.user({ language_code: "en" });
      u.block();
      const sent = await u.sendDocument({ bytes: bytes(800), file_name: "b.bin" });
      const { id } = await s.jobFor(u.chatId, sent.message_id);
      await expect.poll(() => s.logs.filter((l) => l.includes("intake reply not delivered; given up"))).toHaveLength(1);
      const line = JSON.parse(s.logs.find((l) => l.includes("intake reply not delivered; given up"))!) as Record<string, unknown>;
      expect(line).toMatchObject({ kind: "accepted", job: id, tries: 1 });
      expect(String(line.detail)).toContain("bot was blocked by the user");
      expect(await s.app.services.store.pendingReplies(Date.now() + 86_400_000, 10)).toEqual([]);
      await s.waitJob(id); // the job itself still ends
    });
  });
});
