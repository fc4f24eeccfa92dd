/**
 * bench/outbox/jobs.ts — a burst of small files through the whole bot: calls per job, 429s, time to
 * the final message, docket's outbox against a naive sender.
 *
 *   bun bench/outbox/jobs.ts [--chats 66] [--runs 3]
 *
 * Workload: CHATS private chats each send one small document within one second. The real bot
 * (createApp, long polling, the job engine, SQLite on disk) processes each with a runner that copies
 * the file into two results (like a PDF's text + preview, without the CPU of PDF processing: this
 * measures delivery, not processors). The Bot API is the project's emulator with Telegram's limits
 * (per chat burst 3 + 1/s over sends and edits, groups 20/min, 30/s bot-wide; an album of n counts
 * n), in a child process.
 *   docket  — the product: status message and results through bot/outbox (one pace and hold per
 *             chat, bot-wide limiter, albums, results before progress edits).
 *   naive   — the same bot and job engine, but each status update is an editMessageText at once and
 *             each result its own sendDocument, through @grammyjs/auto-retry + @grammyjs/transformer-throttler
 *             (its defaults: 30/s global, 1/s per chat, 20/min per group).
 * Columns: chat-bound calls per job (everything with a chat_id), 429s, time from the user's message to
 * the job's "Done" edit (median / p95 / max), wall time of the burst. Medians over runs.
 */
import { autoRetry } from "@grammyjs/auto-retry";
import { apiThrottler } from "@grammyjs/transformer-throttler";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir, loadavg } from "node:os";
import { join } from "node:path";
import { Api, InputFile } from "grammy";
import { createApp } from "../../bot/app.ts";
import { loadConfig } from "../../bot/config.ts";
import type { FileJob } from "../../bot/db/schema.ts";
import { Delivery } from "../../bot/deliver/delivery.ts";
import { startPolling } from "../../bot/intake/polling.ts";
import { createLogger } from "../../bot/log.ts";
import type { JobStore } from "../../bot/jobs/store.ts";
import type { StatusReporter } from "../../bot/status/reporter.ts";
import type { FinalShown } from "../../bot/status/final-rules.ts";
import { copyRunner } from "../../test/support/copy-runner.ts";
import { median, percentile } from "../queue/stats.ts";
import { emulatorChild } from "./emulator-process.ts";

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const CHATS = arg("chats", 66);
const RUNS = arg("runs", 3);

/** A plain Api as a naive bot has it: throttled and retried by the grammY plugins. */
function naiveApi(token: string, apiRoot: string): Api {
  const api = new Api(token, { apiRoot });
  api.config.use(apiThrottler());
  api.config.use(autoRetry());
  return api;
}

/** Status messages the naive way: every update is an edit right away (the throttler queues it). */
class NaiveStatus implements StatusReporter {
  private readonly ids = new Map<number, Promise<number | null>>();
  constructor(private readonly api: Api) {}
  /** The first status message is intake's recorded reply (bot/intake/replies.ts, through the outbox in both variants): keep its id. */
  adopt(job: FileJob, messageId: Promise<number | null>): void {
    this.ids.set(job.id, messageId);
  }
  update(job: FileJob, text: string): void {
    void this.edit(job, text).catch(() => undefined);
  }
  async final(job: FileJob, text: string): Promise<FinalShown> {
    await this.edit(job, text).catch(() => undefined);
    return { status: "ok" };
  }
  shown(job: FileJob): Promise<void> {
    return (this.ids.get(job.id) ?? Promise.resolve(null)).then(() => undefined);
  }
  async close(): Promise<void> {}
  private async edit(job: FileJob, text: string): Promise<void> {
    const id = await (this.ids.get(job.id) ?? Promise.resolve(job.statusMessageId));
    if (id) await this.api.editMessageText(job.chatId, id, text);
  }
}

/** Results the naive way: one sendDocument per result. */
class NaiveDelivery extends Delivery {
  constructor(
    private readonly naive: Api,
    private readonly jobs: JobStore,
    base: ConstructorParameters<typeof Delivery>,
  ) {
    super(...base);
  }
  override async sendResults(job: FileJob): Promise<void> {
    for (const r of await this.jobs.results(job.id)) {
      if (r.telegramFileId) continue;
      const m = await this.naive.sendDocument(job.chatId, new InputFile(r.path, r.fileName), { caption: `Job #${job.id}: ${r.fileName}`, reply_parameters: { message_id: job.messageId, allow_sending_without_reply: true } });
      await this.jobs.setResultFileId(job.id, r.idx, m.document.file_id);
    }
  }
}

interface Run {
  readonly callsPerJob: number;
  readonly n429: number;
  readonly finalMs: number[];
  readonly wallS: number;
  readonly byMethod: Record<string, number>;
}

/** One burst through the whole bot with `sender`. */
async function burst(sender: "docket" | "naive"): Promise<Run> {
  const em = await emulatorChild();
  const { apiRoot, token, chatIds } = await em.rpc({ cmd: "users", n: CHATS });
  const dir = mkdtempSync(join(tmpdir(), "docket-bench-jobs-"));
  const config = loadConfig({ BOT_TOKEN: token as string, BOT_API_ROOT: apiRoot as string, DATA_DIR: join(dir, "data"), HTTP_PORT: "0", DOWNLOAD_CONCURRENCY: "8", USER_MAX_JOBS_IN_FLIGHT: "5" });
  const log = createLogger({ level: "warn", token: config.token, write: () => {}, journald: false });
  const naive = naiveApi(config.token, config.apiRoot);
  const app = await createApp({
    config,
    log,
    runner: copyRunner({ outputs: 2 }),
    ...(sender === "naive"
      ? {
          statusReporter: () => new NaiveStatus(naive),
          delivery: (base) => new NaiveDelivery(naive, base[2], base),
        }
      : {}),
  });
  await app.bot.init();
  const runner = startPolling(app.bot, app.services.log, { runner: { fetch: { timeout: 1 }, silent: true } });
  app.engine.start();
  const t0 = Date.now();
  const sent = (await em.rpc({ cmd: "burst", withinMs: 1000 })).sent as Record<string, number>;
  const jobs = new Map<number, number>();
  for (const chatId of chatIds as number[]) {
    for (;;) {
      const row = (await app.services.store.listByChat(chatId, 5))[0];
      if (row && (row.status === "ready" || row.status === "failed")) {
        jobs.set(chatId, row.id);
        break;
      }
      await Bun.sleep(50);
    }
  }
  const rep = await em.rpc({ cmd: "jobs", jobs: Object.fromEntries(jobs), waitMs: 60_000 });
  const wallS = (Date.now() - t0) / 1000;
  await runner.stop();
  await app.close(2000);
  await em.stop();
  rmSync(dir, { recursive: true, force: true });
  const doneAt = rep.doneAt as Record<string, number | null>;
  const finalMs = Object.entries(doneAt).flatMap(([c, at]) => (at === null ? [] : [at - sent[c]!]));
  return { callsPerJob: (rep.chatBound as number) / CHATS, n429: rep.n429 as number, finalMs, wallS, byMethod: rep.byMethod as Record<string, number> };
}

const results: Record<string, Run[]> = { docket: [], naive: [] };
for (let r = 0; r < RUNS; r++) {
  for (const sender of ["docket", "naive"] as const) {
    const run = await burst(sender);
    results[sender]!.push(run);
    console.error(`run ${r + 1}/${RUNS} ${sender}: ${run.callsPerJob.toFixed(2)} calls/job, ${run.n429} × 429, final median ${median(run.finalMs).toFixed(0)} ms, ${run.wallS.toFixed(1)} s`);
  }
}

const ms = (x: number) => (Number.isFinite(x) ? String(Math.round(x)) : "—");
console.log(`\nbench/outbox/jobs.ts: ${CHATS} private chats each send one small file within 1 s; 2 results per job; emulator with Telegram's limits; ${RUNS} runs, medians (load average ${loadavg().map((x) => x.toFixed(1)).join(" ")})\n`);
console.log("| sender | chat-bound calls per job | by method (per job) | 429s | user's message → \"Done\", ms (median / p95 / max) | burst wall, s |");
console.log("| --- | ---: | --- | ---: | ---: | ---: |");
for (const [name, runs] of Object.entries(results)) {
  const all = runs.flatMap((r) => r.finalMs);
  const methods = [...new Set(runs.flatMap((r) => Object.keys(r.byMethod)))].sort();
  const by = methods.map((m) => `${m} ${(median(runs.map((r) => r.byMethod[m] ?? 0)) / CHATS).toFixed(2)}`).join(", ");
  console.log(`| ${name} | ${median(runs.map((r) => r.callsPerJob)).toFixed(2)} | ${by} | ${median(runs.map((r) => r.n429))} (${runs.map((r) => r.n429).join(", ")}) | ${ms(median(all))} / ${ms(percentile(all, 95))} / ${ms(Math.max(...all))} | ${median(runs.map((r) => r.wallS)).toFixed(1)} |`);
}
const d = results.docket!;
const n = results.naive!;
console.log(`\nratio naive/docket: calls per job ×${(median(n.map((r) => r.callsPerJob)) / median(d.map((r) => r.callsPerJob))).toFixed(2)}, median time to Done ×${(median(n.flatMap((r) => r.finalMs)) / median(d.flatMap((r) => r.finalMs))).toFixed(2)}`);
