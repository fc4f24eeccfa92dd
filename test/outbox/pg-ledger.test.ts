/**
 * Telegram's limits across processes (issue 14 item 5): three outboxes — three processes' worth, each
 * with its own PostgreSQL pool — send to the same chats through one shared ledger
 * (bot/outbox/pg-ledger.ts) on a real server (test/support/pg-server.ts), judged by the strict
 * emulator: per-chat pacing held over all three, a 429 hold met by one process keeps the other two
 * silent until it ends, and the bot-wide cap counts every process's sends. The same three outboxes
 * each on its own in-memory ledger overrun the chat's pace (the emulator answers 429): the test can fail.
 */
import { Api } from "grammy";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { openPg, type OpenPg } from "../../bot/db/pg-open.ts";
import { makeOptions, Outbox } from "../../bot/outbox/index.ts";
import { epochClock, PgLedger } from "../../bot/outbox/pg-ledger.ts";
import { usePgServer, type PgServer } from "../support/pg-server.ts";
import { freshPgDatabase, TEST_PG_OPTIONS } from "../support/pg-store.ts";
import { toolReady } from "../support/tools.ts";
import type { Emulator } from "../emulator/index.ts";
import { maxInWindow, useEmulator } from "./core-helpers.ts";

describe.skipIf(!toolReady("postgres"))("the outbox's rate state shared through PostgreSQL", () => {
  let server: PgServer;
  usePgServer((s) => (server = s));
  let em: Emulator;
  useEmulator((e) => (em = e));
  const pools: OpenPg[] = [];
  let url = "";
  beforeAll(async () => {
    url = await freshPgDatabase(server);
  }, 60_000);
  afterAll(async () => {
    for (const p of pools.splice(0)) await p.close(1);
  });

  /** `n` outboxes ("processes"), each on its own pool and ledger, or each on its own memory ledger. */
  async function outboxes(n: number, shared: boolean): Promise<Outbox[]> {
    const made: Outbox[] = [];
    for (let i = 0; i < n; i++) {
      if (!shared) {
        made.push(new Outbox());
        continue;
      }
      const db = await openPg({ url, ...TEST_PG_OPTIONS });
      pools.push(db);
      const o = makeOptions();
      made.push(new Outbox({ ledger: new PgLedger(db.sql, o.timingsCapacity, o.globalPerSecond), clock: epochClock }));
    }
    return made;
  }

  /** Each outbox sends `each` messages to the chat at once; resolves once all are delivered. */
  async function burst(boxes: Outbox[], chatId: number, each: number): Promise<void> {
    const api = new Api(em.token, { apiRoot: em.apiRoot });
    await Promise.all(boxes.flatMap((o, p) => Array.from({ length: each }, (_, i) => o.send(api, chatId, `p${p} m${i}`))));
  }

  test("three processes, one chat: every message delivered, paced as one (no 429)", async () => {
    const boxes = await outboxes(3, true);
    const u = em.user();
    await burst(boxes, u.chatId, 4);
    await Promise.all(boxes.map((o) => o.close()));
    expect(em.calls.filter((c) => c.chatId === u.chatId && c.status === 429)).toEqual([]);
    expect(u.messages().map((m) => m.text).sort()).toEqual(["p0", "p1", "p2"].flatMap((p) => [0, 1, 2, 3].map((i) => `${p} m${i}`)).sort());
    // Burst 3, then one per second, over all processes: 12 sends take at least 9 s, never more than 3 in a second.
    const at = em.calls.filter((c) => c.chatId === u.chatId && c.method === "sendMessage").map((c) => c.at);
    expect(maxInWindow(at, 1000)).toBeLessThanOrEqual(3);
  }, 60_000);

  test("the same three on memory ledgers overrun the chat's pace (the emulator answers 429)", async () => {
    const boxes = await outboxes(3, false);
    const u = em.user();
    await burst(boxes, u.chatId, 4);
    await Promise.all(boxes.map((o) => o.close()));
    expect(em.calls.filter((c) => c.chatId === u.chatId && c.status === 429).length).toBeGreaterThan(0);
  }, 60_000);

  test("a 429 hold one process met keeps the others silent in that chat until it ends", async () => {
    const boxes = await outboxes(3, true);
    const api = new Api(em.token, { apiRoot: em.apiRoot });
    const u = em.user();
    em.failNext("sendMessage", { error_code: 429, description: "Too Many Requests: retry after 3", retry_after: 3 }, { chatId: u.chatId });
    // The first process meets the flood wait; the others start sending once it has.
    const first = boxes[0]!.send(api, u.chatId, "first");
    await expect.poll(() => em.calls.some((c) => c.chatId === u.chatId && c.status === 429)).toBe(true);
    const hit = em.calls.find((c) => c.chatId === u.chatId && c.status === 429)!;
    // …and once its hold is in the shared row (the ledger records it right after the answer).
    const key = `${em.token.split(":")[0]}:${u.chatId}`;
    await expect.poll(async () => ((await pools[0]!.sql<{ h: number | null }[]>`SELECT hold_until AS h FROM outbox_chat_rates WHERE key = ${key}`)[0]?.h ?? 0) > hit.at).toBe(true);
    await Promise.all([first, boxes[1]!.send(api, u.chatId, "second"), boxes[2]!.send(api, u.chatId, "third")]);
    await Promise.all(boxes.map((o) => o.close()));
    const toChat = em.calls.filter((c) => c.chatId === u.chatId && c.method === "sendMessage");
    // Nothing reached the chat during the hold (the emulator keeps answering 429 for those 3 s).
    expect(toChat.filter((c) => c.at > hit.at && c.at < hit.at + 3000)).toEqual([]);
    expect(toChat.filter((c) => c.status === 429)).toHaveLength(1);
    expect(u.messages().map((m) => m.text).sort()).toEqual(["first", "second", "third"]);
  }, 60_000);

  test("the bot-wide cap counts every process: 3 × 40 chats, never more than 30 sends in a second", async () => {
    const boxes = await outboxes(3, true);
    const api = new Api(em.token, { apiRoot: em.apiRoot });
    const users = Array.from({ length: 40 }, () => em.user());
    await Promise.all(boxes.flatMap((o, p) => users.map((u) => o.send(api, u.chatId, `bulk ${p}`))));
    await Promise.all(boxes.map((o) => o.close()));
    const sends = em.calls.filter((c) => c.method === "sendMessage" && users.some((u) => u.chatId === c.chatId));
    expect(sends.filter((c) => c.status === 429)).toEqual([]);
    expect(sends.filter((c) => c.ok)).toHaveLength(120);
    expect(maxInWindow(sends.map((c) => c.at), 1000)).toBeLessThanOrEqual(30);
  }, 60_000);
});
