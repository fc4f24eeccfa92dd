/** getUpdates, long polling, 409 conflicts, webhooks, redelivery (botapi-facts.md §2; checklist 5; BR-04). */
import { Api, Bot } from "grammy";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startEmulator, type Emulator } from "./index.ts";
import { apiFailure, rawCall } from "./raw-call.ts";

let em: Emulator;
let api: Api;
/** Set: the emulator's clock stands still (tests of TBA's 0.5 s / 3 s poll windows); unset: real time. */
let frozenAt: number | undefined;
beforeEach(async () => {
  em = await startEmulator({ rateLimits: false, mode: "local", localDir: "/tmp/docket-emu-unused", now: () => frozenAt ?? Date.now() });
  api = new Api(em.token, { apiRoot: em.apiRoot });
});
afterEach(async () => {
  frozenAt = undefined;
  await em.close();
});

describe("getUpdates", () => {
  it("numbers updates from a positive id by one and confirms them by offset", async () => {
    frozenAt = Date.now(); // the two polls below are "within 0.5 s" however slow the machine is
    const u = em.user();
    const a = await u.sendText("one");
    const b = await u.sendText("two");
    const c = await u.sendText("three");
    expect(a.update_id).toBe(1000); // the default firstUpdateId
    expect([b.update_id - a.update_id, c.update_id - b.update_id]).toEqual([1, 1]);
    expect((await api.getUpdates({ timeout: 0, limit: 2 })).map((x) => x.message!.text)).toEqual(["one", "two"]);
    // Unconfirmed updates come again; the same offset again within 0.5 s gets limit 1 (TBA anti-busy-loop rule).
    expect((await api.getUpdates({ timeout: 0 })).map((x) => x.update_id)).toEqual([a.update_id]);
    // offset confirms everything below it.
    expect((await api.getUpdates({ offset: b.update_id, timeout: 0 })).map((x) => x.update_id)).toEqual([b.update_id, c.update_id]);
    expect(em.pendingUpdates()).toBe(2);
    expect(await api.getUpdates({ offset: c.update_id + 1, timeout: 0 })).toEqual([]);
    expect(em.pendingUpdates()).toBe(0);
  });

  it("stretches a repeated short poll with the same offset to 3 s (TBA)", async () => {
    frozenAt = Date.now(); // the repeat is "within 3 s" however slow the machine is; the wait itself is real
    await api.getUpdates({ offset: 7, timeout: 0 });
    const t0 = Date.now();
    const poll = api.getUpdates({ offset: 7, timeout: 0 });
    setTimeout(() => void em.user().sendText("late"), 300);
    expect((await poll).map((x) => x.message!.text)).toEqual(["late"]);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
  });

  it("skips that rule with repeatPollRule: false", async () => {
    const plain = await startEmulator({ rateLimits: false, repeatPollRule: false });
    try {
      const papi = new Api(plain.token, { apiRoot: plain.apiRoot });
      const u = plain.user();
      await u.sendText("a");
      await u.sendText("b");
      await papi.getUpdates({ timeout: 0 });
      const t0 = Date.now();
      expect(await papi.getUpdates({ timeout: 0 })).toHaveLength(2);
      expect(await papi.getUpdates({ offset: 1, timeout: 0 })).toHaveLength(2);
      expect(await papi.getUpdates({ offset: 1, timeout: 0 })).toHaveLength(2);
      expect(Date.now() - t0).toBeLessThan(1000);
    } finally {
      await plain.close();
    }
  });

  it("keeps only the last N with a negative offset and clamps limit to 1..100", async () => {
    const u = em.user();
    for (let i = 0; i < 5; i++) await u.sendText(`m${i}`);
    expect((await rawCall(em, "getUpdates", { limit: 0 })).body.result).toHaveLength(1);
    const last2 = await api.getUpdates({ offset: -2, timeout: 0 });
    expect(last2.map((x) => x.message!.text)).toEqual(["m3", "m4"]);
    expect(em.pendingUpdates()).toBe(2);
  });

  it("wakes a long poll as soon as an update arrives", async () => {
    const u = em.user();
    const t0 = Date.now();
    const poll = api.getUpdates({ timeout: 10 });
    setTimeout(() => void u.sendText("wake"), 100);
    const got = await poll;
    expect(got.map((x) => x.message!.text)).toEqual(["wake"]);
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it("answers the older of two concurrent polls with 409 terminated by other getUpdates request", async () => {
    const older = apiFailure(api.getUpdates({ timeout: 5 }));
    await expect.poll(() => em.count("getUpdates")).toBe(1); // the older poll is waiting in the emulator
    // A different offset than the older poll, so TBA's "same offset within 3 s → timeout 3" rule does not apply.
    const newer = api.getUpdates({ offset: 1, timeout: 1 });
    expect(await older).toEqual({
      code: 409,
      description: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
    });
    expect(await newer).toEqual([]);
  });

  it("paces 409s like TBA: a second conflict within 3 s is answered 3 s late (fail_query_conflict)", async () => {
    const first = apiFailure(api.getUpdates({ offset: 1, timeout: 10 }));
    await Bun.sleep(50);
    const second = apiFailure(api.getUpdates({ offset: 2, timeout: 10 }));
    expect((await first).code).toBe(409);
    const t0 = Date.now();
    const third = api.getUpdates({ offset: 3, timeout: 1 });
    expect(await second).toEqual({
      code: 409,
      description: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
    });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2900);
    expect(await third).toEqual([]);
  });

  it("answers 409 while a webhook is set and deletes it with the exact descriptions", async () => {
    expect((await rawCall(em, "deleteWebhook")).body).toEqual({ ok: true, result: true, description: "Webhook is already deleted" });
    const set = await rawCall(em, "setWebhook", { url: "http://127.0.0.1:9/hook" });
    expect(set.body).toEqual({ ok: true, result: true, description: "Webhook was set" });
    expect(await apiFailure(api.getUpdates({ timeout: 0 }))).toEqual({
      code: 409,
      description: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
    });
    expect((await rawCall(em, "deleteWebhook")).body).toEqual({ ok: true, result: true, description: "Webhook was deleted" });
    expect(await api.getUpdates({ timeout: 0 })).toEqual([]);
  });

  it("persists allowed_updates until a new list is given; [] means the default set", async () => {
    const u = em.user();
    await api.getUpdates({ offset: 1, timeout: 0, allowed_updates: ["callback_query"] });
    await u.sendText("filtered out");
    expect(await api.getUpdates({ offset: 2, timeout: 0 })).toEqual([]);
    const b = await u.sendText("delivered");
    const got = await api.getUpdates({ offset: 3, timeout: 0, allowed_updates: [] });
    expect(got.map((x) => x.update_id)).toEqual([b.update_id]);
  });

  it("ends a pending poll with 409 terminated by setWebhook request", async () => {
    const poll = apiFailure(api.getUpdates({ timeout: 5 }));
    await expect.poll(() => em.count("getUpdates")).toBe(1); // the poll is waiting in the emulator
    await api.setWebhook("http://127.0.0.1:9/hook");
    expect(await poll).toEqual({ code: 409, description: "Conflict: terminated by setWebhook request" });
  });

  it("delivers group members' messages in the group chat", async () => {
    const g = em.group({ title: "Team" });
    const alice = em.user({ first_name: "Alice" });
    const inGroup = g.member(alice);
    expect(inGroup.chatId).toBe(g.id);
    expect(g.id).toBeLessThan(0);
    await inGroup.sendText("hello group");
    const [up] = await api.getUpdates({ timeout: 0 });
    expect(up!.message).toMatchObject({ chat: { id: g.id, type: "group", title: "Team" }, from: { id: alice.id, first_name: "Alice" } });
    expect((await rawCall(em, "sendMessage", { chat_id: g.id, text: "hi all" })).status).toBe(200);
    expect(g.messages().map((m) => m.text)).toEqual(["hi all"]);
    expect(g.transcript()).toEqual(["user Alice: hello group", "bot #2: hi all"]);
  });

  it("serves a redelivered update once more", async () => {
    const u = em.user();
    const a = await u.sendText("again");
    await api.getUpdates({ offset: a.update_id + 1, timeout: 0 });
    em.redeliver(a.update_id);
    const got = await api.getUpdates({ offset: a.update_id + 1, timeout: 0 });
    expect(got.map((x) => [x.update_id, x.message!.text])).toEqual([[a.update_id, "again"]]);
    expect(em.pendingUpdates()).toBe(1);
    expect(await api.getUpdates({ offset: a.update_id + 2, timeout: 0 })).toEqual([]);
    expect(em.pendingUpdates()).toBe(0);
  });

  it("runs a real grammY Bot: start() polls, handles a document, stop() ends", async () => {
    const bot = new Bot(em.token, { client: { apiRoot: em.apiRoot } });
    bot.on("message:document", (ctx) => ctx.reply(`got ${ctx.message.document.file_name}`));
    const u = em.user();
    await u.sendDocument({ bytes: new Uint8Array([1, 2, 3]), file_name: "a.pdf" });
    const started = bot.start({ drop_pending_updates: false });
    const msgs = await u.waitFor((m) => m.length > 0, 5000);
    expect(msgs[0]!.text).toBe("got a.pdf");
    await bot.stop();
    await started;
    const names = em.calls.map((c) => c.method);
    expect(names.slice(0, 3)).toEqual(["getMe", "deleteWebhook", "getUpdates"]);
    expect(em.pendingUpdates()).toBe(0);
  });
});

describe("webhooks", () => {
  it("validates secret_token and, in cloud mode, the URL scheme", async () => {
    expect((await rawCall(em, "setWebhook", { url: "http://127.0.0.1:9/h", secret_token: "bad token!" })).body.description).toBe(
      "Bad Request: secret token contains unallowed characters",
    );
    expect((await rawCall(em, "setWebhook", { url: "http://127.0.0.1:9/h", secret_token: "a".repeat(257) })).body.description).toBe(
      "Bad Request: secret token is too long",
    );
    expect((await rawCall(em, "setWebhook", { url: "not a url" })).body.description).toBe("Bad Request: invalid webhook URL specified");
    const cloud = await startEmulator({ rateLimits: false });
    try {
      expect((await rawCall(cloud, "setWebhook", { url: "http://127.0.0.1:9/h" })).body.description).toBe(
        "Bad Request: bad webhook: An HTTPS URL must be provided for webhook",
      );
    } finally {
      await cloud.close();
    }
  });

  it("POSTs each update with the secret header and retries after a non-2xx answer", async () => {
    const seen: Array<{ secret: string | null; body: { update_id: number } }> = [];
    let fail = 1;
    const hook = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: async (req) => {
        seen.push({ secret: req.headers.get("x-telegram-bot-api-secret-token"), body: (await req.json()) as { update_id: number } });
        if (fail-- > 0) return new Response("oops", { status: 500 });
        return new Response("ok");
      },
    });
    try {
      const u = em.user();
      await u.sendText("queued before the webhook");
      const set = await api.setWebhook(`http://127.0.0.1:${hook.port}/hook`, { secret_token: "s3cret_-" });
      expect(set).toBe(true);
      const b = await u.sendText("after");
      const deadline = Date.now() + 5000;
      while (em.webhookDeliveries.length < 2 && Date.now() < deadline) await Bun.sleep(20);
      expect(em.webhookDeliveries.map((x) => (x as { message: { text: string } }).message.text)).toEqual([
        "queued before the webhook",
        "after",
      ]);
      expect(seen.length).toBe(3); // one failed attempt, then two deliveries
      expect(seen.every((s) => s.secret === "s3cret_-")).toBe(true);
      expect(seen.at(-1)!.body.update_id).toBe(b.update_id);
      const info = await api.getWebhookInfo();
      expect(info).toMatchObject({ url: `http://127.0.0.1:${hook.port}/hook`, pending_update_count: 0 });
    } finally {
      await hook.stop(true);
    }
  });

  it("executes a method returned in the webhook reply body", async () => {
    const u = em.user();
    const hook = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () => Response.json({ method: "sendMessage", chat_id: u.chatId, text: "reply via webhook" }),
    });
    try {
      await api.setWebhook(`http://127.0.0.1:${hook.port}/`);
      await u.sendText("hi");
      expect((await u.waitFor((m) => m.length > 0, 3000))[0]!.text).toBe("reply via webhook");
    } finally {
      await hook.stop(true);
    }
  });
});
