/**
 * Button presses through the real bot and the strict emulator (issue 11 items 1 and 6):
 * - the /settings keyboard edit is a chat-bound call: it goes through the outbox, so it waits out the
 *   chat's 429 hold like every message (before, it went straight to the chat during the hold);
 * - a handler never awaits answerCallbackQuery: a 429 (retry_after 20) on a stranger's button press
 *   does not hold the update batch, so another user's command is answered at once.
 */
import { expect, test } from "vitest";
import { withStack } from "../support/with-stack.ts";

type Keyboard = { inline_keyboard: Array<Array<{ text: string; callback_data: string }>> };

test("the /settings keyboard edit waits out the chat's 429 hold (no call to the chat during it)", async () => {
  await withStack({}, async (s) => {
    const u = s.em.user({ language_code: "en" });
    await u.sendText("/settings");
    const [menu] = (await u.waitFor((m) => m.some((x) => x.reply_markup))).filter((x) => x.reply_markup);
    // The reply to /help meets a 429 retry_after 3: the chat is held for 3 s.
    s.em.failNext("sendMessage", { error_code: 429, description: "Too Many Requests: retry after 3", retry_after: 3 }, { chatId: u.chatId });
    await u.sendText("/help");
    const held = () => s.em.calls.find((c) => c.chatId === u.chatId && c.status === 429);
    await expect.poll(held, { timeout: 10_000 }).toBeDefined();
    const hit = held()!;
    await u.pressButton(menu!.message_id, "settings:pdf:pages");
    await u.waitFor((m) => ((m.find((x) => x.message_id === menu!.message_id)?.reply_markup as Keyboard | undefined)?.inline_keyboard[1]?.[0]?.text.startsWith("✅") ?? false), 15_000);
    // answerCallbackQuery names no chat (only the query): it is not chat-bound and may go at once.
    const during = s.em.calls.filter((c) => c.chatId === u.chatId && c.method !== "answerCallbackQuery" && c.at > hit.at && c.at < hit.at + 3000);
    expect(during.map((c) => c.method)).toEqual([]);
    const edit = s.em.calls.find((c) => c.method === "editMessageReplyMarkup" && c.chatId === u.chatId)!;
    expect([edit.status, edit.at >= hit.at + 3000]).toEqual([200, true]);
    expect(s.em.calls.filter((c) => c.status === 429)).toHaveLength(1); // the edit never met the hold itself
  });
}, 60_000);

test("a 429 (retry_after 20) on a stranger's button press does not hold other users' updates", async () => {
  const admin = 700_000_001; // the emulator's first user id
  await withStack({ env: { ALLOWED_USER_IDS: String(admin), ADMIN_USER_IDS: String(admin) } }, async (s) => {
    const a = s.em.user({ language_code: "en" });
    expect(a.id).toBe(admin);
    const stranger = s.em.user({ language_code: "en" });
    const g = s.em.group();
    const ga = g.member(a);
    const gs = g.member(stranger);
    await ga.sendText("/settings");
    const [menu] = (await ga.waitFor((m) => m.some((x) => x.reply_markup))).filter((x) => x.reply_markup);
    s.em.failNext("answerCallbackQuery", { error_code: 429, description: "Too Many Requests: retry after 20", retry_after: 20 });
    await gs.pressButton(menu!.message_id, "settings:pdf:pages");
    await expect.poll(() => s.em.calls.some((c) => c.method === "answerCallbackQuery" && c.status === 429), { timeout: 10_000 }).toBe(true);
    // The stranger's handler returned at once: the next batch (a's /help) is fetched and answered now,
    // well inside the 20 s that auto-retry waits before answering the stranger's button.
    await a.sendText("/help");
    await a.waitFor((m) => m.some((x) => x.text !== undefined), 10_000);
    expect(s.em.calls.filter((c) => c.method === "answerCallbackQuery" && c.ok)).toEqual([]); // still waiting out its 429
    // the stranger changed nothing
    expect((await s.app.services.store.getSettings(g.id)).pdfAction).toBe("default");
  });
}, 60_000);
