/** Emulator routing, envelopes, parameter encodings, auth, logOut/close (botapi-facts.md §3, §4; checklist 1–4, 13). */
import { Api } from "grammy";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startEmulator, type Emulator } from "./index.ts";
import { apiFailure, rawCall } from "./raw-call.ts";

let em: Emulator;
beforeEach(async () => {
  em = await startEmulator({ rateLimits: false });
});
afterEach(async () => {
  await em.close();
});

describe("routes", () => {
  it("answers getMe to real grammY with the bot user", async () => {
    const me = await new Api(em.token, { apiRoot: em.apiRoot }).getMe();
    expect(me).toMatchObject({ id: 123456789, is_bot: true, username: "docket_test_bot", can_join_groups: true });
    expect(em.apiRoot).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it("treats method names case-insensitively and logs the canonical name", async () => {
    const a = await rawCall(em, "GETME");
    expect(a.status).toBe(200);
    expect(a.body.ok).toBe(true);
    expect(em.calls.at(-1)!.method).toBe("getMe");
  });

  it("answers 404 Not Found outside /bot<token>/ and for unknown methods", async () => {
    const other = await fetch(`${em.apiRoot}/something`);
    expect(other.status).toBe(404);
    expect(await other.json()).toEqual({ ok: false, error_code: 404, description: "Not Found" });
    const unknown = await rawCall(em, "sendTelepathy");
    expect(unknown).toMatchObject({ status: 404, body: { ok: false, error_code: 404, description: "Not Found: method not found" } });
  });

  it("answers 401 Unauthorized for another token", async () => {
    const a = await rawCall({ apiRoot: em.apiRoot, token: "987654321:AAE-some-other-token-aaaaaaaaaaaa" }, "getMe");
    expect(a).toMatchObject({ status: 401, body: { ok: false, error_code: 401, description: "Unauthorized" } });
    const f = await apiFailure(new Api("987654321:AAE-some-other-token-aaaaaaaaaaaa", { apiRoot: em.apiRoot }).getMe());
    expect(f).toEqual({ code: 401, description: "Unauthorized" });
  });

  it("reads parameters from JSON, urlencoded bodies and the query string alike", async () => {
    const u = em.user();
    for (const as of ["json", "form", "query"] as const) {
      const a = await rawCall(em, "sendMessage", { chat_id: u.chatId, text: `via ${as}`, reply_markup: { inline_keyboard: [[{ text: "k", callback_data: "d" }]] } }, as);
      expect(a.status).toBe(200);
      expect(a.body.result).toMatchObject({ text: `via ${as}`, reply_markup: { inline_keyboard: [[{ text: "k", callback_data: "d" }]] } });
    }
    expect(u.messages().map((m) => m.text)).toEqual(["via json", "via form", "via query"]);
  });

  it("answers a 501 for a real but unimplemented method instead of a fake success", async () => {
    const a = await rawCall(em, "sendPoll", { chat_id: 1 });
    expect(a.status).toBe(501);
    expect(a.body.ok).toBe(false);
  });

  it("never records the token in the call log", async () => {
    const u = em.user();
    await rawCall(em, "sendMessage", { chat_id: u.chatId, text: "x" });
    await rawCall(em, "getFile", { file_id: "nope" });
    expect(JSON.stringify(em.calls)).not.toContain(em.token);
    expect(JSON.stringify(em.calls)).not.toContain(em.token.split(":")[1]);
  });
});

describe("injected errors", () => {
  it("fails the next matching call with the given envelope, then recovers", async () => {
    const u = em.user();
    em.failNext("SENDMESSAGE", { error_code: 500, description: "Internal Server Error: restart" }, { chatId: u.chatId });
    const a = await rawCall(em, "sendMessage", { chat_id: u.chatId, text: "x" });
    expect(a).toMatchObject({ status: 500, body: { ok: false, error_code: 500, description: "Internal Server Error: restart" } });
    expect((await rawCall(em, "sendMessage", { chat_id: u.chatId, text: "x" })).status).toBe(200);
  });

  it("honours times and match", async () => {
    em.failNext("getFile", { error_code: 400, description: "Bad Request: wrong file_id or the file is temporarily unavailable" }, {
      times: 2,
      match: (p) => p.file_id === "A",
    });
    expect((await rawCall(em, "getFile", { file_id: "B" })).body.description).toBe("Bad Request: invalid file_id");
    expect((await rawCall(em, "getFile", { file_id: "A" })).body.description).toBe(
      "Bad Request: wrong file_id or the file is temporarily unavailable",
    );
    expect((await rawCall(em, "getFile", { file_id: "A" })).status).toBe(400);
    expect((await rawCall(em, "getFile", { file_id: "A" })).body.description).toBe("Bad Request: invalid file_id");
  });

  it("lets `after` matching calls through first (the 3rd edit fails, BR-06)", async () => {
    const u = em.user();
    const m = await rawCall(em, "sendMessage", { chat_id: u.chatId, text: "p0" });
    const id = (m.body.result as { message_id: number }).message_id;
    em.failNext("editMessageText", { error_code: 429, description: "Too Many Requests: retry after 5", retry_after: 5 }, { after: 2 });
    const statuses: number[] = [];
    for (let i = 1; i <= 4; i++) statuses.push((await rawCall(em, "editMessageText", { chat_id: u.chatId, message_id: id, text: `p${i}` })).status);
    // The 4th is still 429: the injected 429 holds the chat for 5 s like Telegram's flood wait.
    expect(statuses).toEqual([200, 200, 429, 429]);
    const third = em.calls.filter((c) => c.method === "editMessageText")[2]!;
    expect(third).toMatchObject({ status: 429, retryAfter: 5, description: "Too Many Requests: retry after 5" });
  });
});

describe("logOut and close", () => {
  it("answers 400 Logged out to every request after logOut", async () => {
    const api = new Api(em.token, { apiRoot: em.apiRoot });
    expect(await api.logOut()).toBe(true);
    expect(await apiFailure(api.getMe())).toEqual({ code: 400, description: "Logged out" });
    expect(await rawCall(em, "getUpdates")).toMatchObject({ status: 400, body: { ok: false, error_code: 400, description: "Logged out" } });
  });

  it("close without a launched instance, or a second close, answers already closed", async () => {
    const api = new Api(em.token, { apiRoot: em.apiRoot });
    expect(await apiFailure(api.close())).toEqual({ code: 400, description: "Bad Request: the bot has already been closed" });
    await api.getMe(); // launches the bot on this server
    expect(await api.close()).toBe(true);
    expect(await apiFailure(api.close())).toEqual({ code: 400, description: "Bad Request: the bot has already been closed" });
  });
});
