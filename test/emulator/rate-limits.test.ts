/** Flood control: 429 with retry_after + Retry-After per chat, per group, globally; injected holds (checklist 10; BR-06). */
import { autoRetry } from "@grammyjs/auto-retry";
import { Api } from "grammy";
import { afterEach, describe, expect, it } from "vitest";
import { startEmulator, type Emulator } from "./index.ts";
import { apiFailure, rawCall } from "./raw-call.ts";
import { manualClock } from "./clock.ts";

let em: Emulator | undefined;
afterEach(async () => {
  await em?.close();
  em = undefined;
});

describe("rate limits", () => {
  it("allows a per-chat burst of 3, then answers 429 with retry_after and a Retry-After header; edits share it", async () => {
    const clock = manualClock();
    em = await startEmulator({ now: clock.now });
    const u = em.user();
    const m = await rawCall(em, "sendMessage", { chat_id: u.chatId, text: "1" });
    await rawCall(em, "editMessageText", { chat_id: u.chatId, message_id: (m.body.result as { message_id: number }).message_id, text: "2" });
    await rawCall(em, "sendMessage", { chat_id: u.chatId, text: "3" });
    const limited = await rawCall(em, "sendMessage", { chat_id: u.chatId, text: "4" });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ ok: false, error_code: 429, description: "Too Many Requests: retry after 1", parameters: { retry_after: 1 } });
    expect(limited.retryAfter).toBe("1");
    expect(em.calls.at(-1)).toMatchObject({ method: "sendMessage", status: 429, ok: false, retryAfter: 1, chatId: u.chatId });
    // Not counted: chat actions and deletes, other chats.
    expect((await rawCall(em, "sendChatAction", { chat_id: u.chatId, action: "typing" })).status).toBe(200);
    expect((await rawCall(em, "sendMessage", { chat_id: em.user().chatId, text: "other chat" })).status).toBe(200);
    clock.advance(999);
    expect((await rawCall(em, "sendMessage", { chat_id: u.chatId, text: "4 again" })).status).toBe(429); // not yet refilled
    clock.advance(51);
    expect((await rawCall(em, "sendMessage", { chat_id: u.chatId, text: "5" })).status).toBe(200);
    expect(u.messages().map((x) => x.text)).toEqual(["2", "3", "5"]);
  });

  it("limits groups to groupPerMin in a sliding minute, with the real wait rounded up", async () => {
    em = await startEmulator({ rateLimits: { groupPerMin: 4, perChatBurst: 100, perChatPerSec: 100 } });
    const g = em.group();
    for (let i = 0; i < 4; i++) expect((await rawCall(em, "sendMessage", { chat_id: g.id, text: `g${i}` })).status).toBe(200);
    const limited = await rawCall(em, "sendMessage", { chat_id: g.id, text: "g4" });
    expect(limited.status).toBe(429);
    expect(limited.body.parameters!.retry_after).toBeGreaterThanOrEqual(59);
    expect(limited.body.parameters!.retry_after).toBeLessThanOrEqual(60);
    expect(g.messages()).toHaveLength(4);
  });

  it("limits all chats together with globalPerSec", async () => {
    em = await startEmulator({ rateLimits: { globalPerSec: 5 }, now: manualClock().now });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await rawCall(em, "sendMessage", { chat_id: em.user().chatId, text: "x" })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
  });

  it("keeps a chat on hold for retry_after seconds after an injected 429 (BR-06), and grammY sees retry_after", async () => {
    em = await startEmulator({ rateLimits: false });
    const api = new Api(em.token, { apiRoot: em.apiRoot });
    const u = em.user();
    const m = await api.sendMessage(u.chatId, "progress 1");
    em.failNext("editMessageText", { error_code: 429, description: "Too Many Requests: retry after 2", retry_after: 2 }, { chatId: u.chatId });
    expect(await apiFailure(api.editMessageText(u.chatId, m.message_id, "progress 2"))).toEqual({
      code: 429,
      description: "Too Many Requests: retry after 2",
      retryAfter: 2,
    });
    const during = await apiFailure(api.editMessageText(u.chatId, m.message_id, "progress 3"));
    expect(during.code).toBe(429);
    expect(during.retryAfter).toBeGreaterThanOrEqual(1);
    expect(em.count("editMessageText", u.chatId)).toBe(2);
    await Bun.sleep(2050);
    expect(await api.editMessageText(u.chatId, m.message_id, "progress 4")).toMatchObject({ text: "progress 4" });
  });

  it("lets grammY's auto-retry wait out retry_after from the body and succeed", async () => {
    em = await startEmulator({ rateLimits: { perChatBurst: 1 } });
    const api = new Api(em.token, { apiRoot: em.apiRoot });
    api.config.use(autoRetry());
    const u = em.user();
    await api.sendMessage(u.chatId, "first");
    const t0 = Date.now();
    await api.sendMessage(u.chatId, "second");
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
    expect(em.calls.filter((c) => c.method === "sendMessage").map((c) => c.status)).toEqual([200, 429, 200]);
    expect(u.messages().map((m) => m.text)).toEqual(["first", "second"]);
  });

  it("can be switched off and on at run time", async () => {
    em = await startEmulator({ rateLimits: false, now: manualClock().now });
    const u = em.user();
    for (let i = 0; i < 10; i++) expect((await rawCall(em, "sendMessage", { chat_id: u.chatId, text: `${i}` })).status).toBe(200);
    em.setRateLimits({ perChatBurst: 1 });
    expect((await rawCall(em, "sendMessage", { chat_id: u.chatId, text: "a" })).status).toBe(200);
    expect((await rawCall(em, "sendMessage", { chat_id: u.chatId, text: "b" })).status).toBe(429);
  });
});
