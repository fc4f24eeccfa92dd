/**
 * bench/outbox/run.ts — the same streaming workload through four senders, one run, printed table.
 *
 *   bun bench/outbox/run.ts
 *
 * Workload: CHATS private chats, each streams an answer that grows by one word every TICK_MS
 * for UPDATES updates (an LLM-like producer); all chats at once. The Bot API is the project's
 * emulator with its default enforced limits (per chat burst 3 + 1/s over sends+edits, 30/s global),
 * running in a child process so the CPU column is the client's alone.
 *   (a)  bot/outbox, edits                        (a2) bot/outbox, sendMessageDraft on
 *   (b)  naive: editMessageText on every update, @grammyjs/auto-retry + @grammyjs/transformer-throttler
 *   (c)  @grammyjs/stream (sendMessageDraft, then sendMessage), with auto-retry as its author advises
 * Columns: API calls made, 429s received, time from the last update until the final text is
 * visible (median / max over chats), client CPU per update (process CPU / updates), and for
 * the outbox the synchronous cost of one update() call.
 */
import { autoRetry } from "@grammyjs/auto-retry";
import { streamApi } from "@grammyjs/stream";
import { apiThrottler } from "@grammyjs/transformer-throttler";
import { Api } from "grammy";
import { Outbox } from "../../bot/outbox/index.ts";
import { median } from "../queue/stats.ts";
import { emulatorChild as emulator } from "./emulator-process.ts";

const CHATS = 10;
const UPDATES = 60;
const TICK_MS = 50;

function textAt(i: number): string {
  return Array.from({ length: i + 1 }, (_, k) => `word${k}`).join(" ");
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Row {
  name: string;
  calls: number;
  detail: string;
  n429: number;
  visibleMedian: number;
  visibleMax: number;
  missing: number;
  cpuPerUpdateUs: number;
  updateCallUs: number | null;
  wallS: number;
}

/** Run one sender: `produce(chatId, api)` streams UPDATES updates; returns the epoch ms of its last update. */
async function measure(name: string, makeApi: (apiRoot: string, token: string) => Api, produce: (api: Api, chatId: number, syncCost: number[]) => Promise<number>): Promise<Row> {
  const em = await emulator();
  const u = await em.rpc({ cmd: "users", n: CHATS });
  const api = makeApi(u.apiRoot as string, u.token as string);
  const chatIds = u.chatIds as number[];
  const syncCost: number[] = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const lastUpdate = await Promise.all(chatIds.map((c) => produce(api, c, syncCost)));
  const wallS = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const finals = Object.fromEntries(chatIds.map((c) => [String(c), textAt(UPDATES - 1)]));
  const rep = await em.rpc({ cmd: "report", finals });
  await em.stop();
  const visibleAt = rep.visibleAt as Record<string, number | null>;
  const lat = chatIds.map((c, i) => (visibleAt[String(c)] ?? NaN) - lastUpdate[i]!).filter((x) => !Number.isNaN(x));
  const methods = rep.methods as Record<string, number>;
  const calls = Object.values(methods).reduce((a, b) => a + b, 0);
  return {
    name,
    calls,
    detail: Object.entries(methods).map(([m, n]) => `${SHORT[m] ?? m} ${n}`).join(", "),
    n429: rep.n429 as number,
    visibleMedian: median(lat),
    visibleMax: Math.max(...lat),
    missing: chatIds.length - lat.length,
    cpuPerUpdateUs: (cpu.user + cpu.system) / (CHATS * UPDATES),
    updateCallUs: syncCost.length ? median(syncCost) * 1000 : null,
    wallS,
  };
}

const SHORT: Record<string, string> = { sendMessage: "send", editMessageText: "edit", deleteMessage: "delete", sendChatAction: "typing", sendMessageDraft: "draft" };

const plainApi = (apiRoot: string, token: string) => new Api(token, { apiRoot });

async function viaOutbox(drafts: boolean): Promise<Row> {
  let outbox!: Outbox;
  const row = await measure(
    drafts ? "(a2) outbox + drafts" : "(a) outbox",
    (root, token) => {
      outbox = new Outbox({ options: { draftsEnabled: drafts } });
      return plainApi(root, token);
    },
    async (api, chatId, cost) => {
      const s = outbox.stream(api, chatId);
      let last = 0;
      for (let i = 0; i < UPDATES; i++) {
        const text = textAt(i);
        const t = performance.now();
        s.update(text);
        cost.push(performance.now() - t);
        last = Date.now();
        await sleep(TICK_MS);
      }
      await s.finish();
      return last;
    },
  );
  await outbox.close();
  return row;
}

async function naive(): Promise<Row> {
  return measure(
    "(b) naive edit + auto-retry + throttler",
    (root, token) => {
      const api = plainApi(root, token);
      api.config.use(apiThrottler());
      api.config.use(autoRetry());
      return api;
    },
    async (api, chatId) => {
      const first = await api.sendMessage(chatId, textAt(0));
      const pending: Promise<unknown>[] = [];
      let last = Date.now();
      for (let i = 1; i < UPDATES; i++) {
        await sleep(TICK_MS);
        pending.push(api.editMessageText(chatId, first.message_id, textAt(i)).catch(() => undefined));
        last = Date.now();
      }
      await Promise.all(pending);
      return last;
    },
  );
}

async function grammyStream(): Promise<Row> {
  return measure(
    "(c) @grammyjs/stream + auto-retry",
    (root, token) => {
      const api = plainApi(root, token);
      api.config.use(autoRetry());
      return api;
    },
    async (api, chatId) => {
      let last = 0;
      async function* deltas() {
        for (let i = 0; i < UPDATES; i++) {
          yield i === 0 ? "word0" : ` word${i}`;
          last = Date.now();
          await sleep(TICK_MS);
        }
      }
      await streamApi(api.raw).streamMessage(chatId, 256 * chatId, deltas());
      return last;
    },
  );
}

const rows: Row[] = [];
for (const run of [() => viaOutbox(false), () => viaOutbox(true), naive, grammyStream]) {
  rows.push(await run());
  const r = rows.at(-1)!;
  console.error(`done: ${r.name} in ${r.wallS.toFixed(1)} s`);
}

const ms = (x: number) => (Number.isFinite(x) ? `${Math.round(x)}` : "—");
console.log(`\nbot/outbox benchmark: ${CHATS} private chats × ${UPDATES} updates every ${TICK_MS} ms; emulator limits: burst 3 + 1/s per chat (sends+edits), 30/s global\n`);
console.log("| sender | API calls | by method | 429s | final visible after last update, ms (median / max) | missing finals | client CPU per update, µs | update() call, µs (median) | wall, s |");
console.log("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |");
for (const r of rows) {
  console.log(`| ${r.name} | ${r.calls} | ${r.detail} | ${r.n429} | ${ms(r.visibleMedian)} / ${ms(r.visibleMax)} | ${r.missing} | ${r.cpuPerUpdateUs.toFixed(0)} | ${r.updateCallUs === null ? "—" : r.updateCallUs.toFixed(1)} | ${r.wallS.toFixed(1)} |`);
}
const base = rows[0]!;
console.log(`\nratios vs (a): ${rows.slice(1).map((r) => `${r.name}: calls ×${(r.calls / base.calls).toFixed(2)}, median visible ×${(r.visibleMedian / base.visibleMedian).toFixed(1)}`).join("; ")}`);
