/**
 * Intake benchmark: updates/s and per-update latency through the real grammY `Bot` built by
 * `createApp` (sequentialize → i18n → accessControl → `fileIntake`), into a real SQLite file.
 * The status reporter is a no-op {@link StatusReporter}, so a measured update is the handler's
 * checks + fairness queries + one INSERT (seed 000: "одна вставка … и ответ"); the reply that the
 * real reporter sends through the outbox is not measured. Logs go through docket's pino logger
 * (level info, one "accepted" line per job) into a discarding sink.
 */
import { startPolling } from "../../bot/intake/polling.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Update, UserFromGetMe } from "grammy/types";
import { createApp, type App } from "../../bot/app.ts";
import { loadConfig } from "../../bot/config.ts";
import type { FileJob } from "../../bot/db/schema.ts";
import { createLogger } from "../../bot/log.ts";
import type { StatusReporter } from "../../bot/status/reporter.ts";
import type { FinalShown } from "../../bot/status/final-rules.ts";
import type { ProcessRunner } from "../../bot/worker/types.ts";
import { startEmulator } from "../../test/emulator/index.ts";
import { seedDocketHistory } from "./history.ts";
import { benchJob } from "./payload.ts";
import { median, percentile, rate } from "./stats.ts";

/** A StatusReporter that sends nothing (benchmark: measure intake, not the chat reply). */
class NoopStatus implements StatusReporter {
  adopt(_job: FileJob, _messageId: Promise<number | null>): void {}
  update(_job: FileJob, _text: string): void {}
  async shown(_job: FileJob): Promise<void> {}
  async final(_job: FileJob, _text: string): Promise<FinalShown> {
    return { status: "ok" };
  }
  async close(): Promise<void> {}
}

const BOT_INFO: UserFromGetMe = {
  id: 123456789,
  is_bot: true,
  first_name: "Docket",
  username: "docket_bench_bot",
  can_join_groups: true,
  can_read_all_group_messages: false,
  supports_inline_queries: false,
  can_connect_to_business: false,
  has_main_web_app: false,
  has_topics_enabled: false,
  allows_users_to_create_topics: false,
} as UserFromGetMe;

const neverRuns: ProcessRunner = async () => {
  throw new Error("the intake benchmark never starts the engine");
};

/** Build the app over a fresh data dir; `apiRoot` is never called in the direct variants. */
async function benchApp(dir: string, apiRoot = "http://127.0.0.1:9", token = BOT_TOKEN): Promise<App> {
  const config = loadConfig({ BOT_TOKEN: token, BOT_API_ROOT: apiRoot, DATA_DIR: join(dir, "data"), LOCAL_BOT_API_DIR: join(dir, "bot-api"), HTTP_PORT: "0" });
  const log = createLogger({ level: "info", token, write: () => {}, journald: false });
  return createApp({ config, log, runner: neverRuns, statusReporter: () => new NoopStatus() });
}

const BOT_TOKEN = "123456789:AAE-bench-token-docket-intake_xyz0";

/** The Bot API `Update` of a private-chat document message for {@link benchJob} `i`. */
function documentUpdate(i: number, chats: number): Update {
  const j = benchJob(i, chats);
  return {
    update_id: j.updateId,
    message: {
      message_id: j.messageId,
      date: Math.floor(Date.now() / 1000),
      chat: { id: j.chatId, type: "private", first_name: `User${j.chatId}` },
      from: { id: j.userId, is_bot: false, first_name: `User${j.chatId}`, language_code: j.languageCode ?? undefined },
      document: { file_id: j.fileId, file_unique_id: j.fileUniqueId, file_name: j.declaredName ?? undefined, mime_type: j.declaredMime ?? undefined, file_size: j.declaredSize ?? undefined },
    },
  } as Update;
}

/** One intake run; rates updates/s, latencies ms. */
interface IntakeRun {
  rate: number;
  p50: number | null;
  p99: number | null;
}

/** An intake variant: how updates reach `bot.handleUpdate`. */
export type IntakeVariant = "direct-sequential" | "direct-concurrent" | "emulator-http";

/** Updates in flight in the concurrent direct variant (as @grammyjs/runner hands them out). */
const CONCURRENCY = 64;

async function direct(updates: number, chats: number, concurrent: boolean, history: number): Promise<IntakeRun> {
  const dir = mkdtempSync(join(tmpdir(), "docket-bench-intake-"));
  const app = await benchApp(dir);
  try {
    seedDocketHistory(app.db!.sqlite, history);
    app.bot.botInfo = BOT_INFO;
    const list = Array.from({ length: updates }, (_, i) => documentUpdate(i, chats));
    const lat: number[] = [];
    const one = async (u: Update) => {
      const t = performance.now();
      await app.bot.handleUpdate(u);
      lat.push(performance.now() - t);
    };
    const t0 = performance.now();
    if (!concurrent) for (const u of list) await one(u);
    else {
      let next = 0;
      await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
        while (next < list.length) await one(list[next++]!);
      }));
    }
    const s = (performance.now() - t0) / 1000;
    await check(app, updates);
    return { rate: updates / s, p50: percentile(lat, 50), p99: percentile(lat, 99) };
  } finally {
    await app.close(1000);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every update must have become one `accepted` job (no refusals, no duplicates). */
async function check(app: App, updates: number): Promise<void> {
  const counts = await app.services.store.countByState();
  if (counts.accepted !== updates || counts.failed !== undefined) throw new Error(`intake: expected ${updates} accepted jobs, got ${JSON.stringify(counts)}`);
}

/**
 * Through the emulator over HTTP: the updates are queued first (distinct small documents), then
 * @grammyjs/runner long-polls and the timer runs until the last job row exists. Latency here is
 * `bot.handleUpdate` time under the runner's concurrency.
 */
async function viaEmulator(updates: number, chats: number): Promise<IntakeRun> {
  const dir = mkdtempSync(join(tmpdir(), "docket-bench-intake-"));
  const em = await startEmulator({ rateLimits: false, repeatPollRule: false });
  const app = await benchApp(dir, em.apiRoot, em.token);
  try {
    const users = Array.from({ length: chats }, () => em.user({ language_code: "ru" }));
    for (let i = 0; i < updates; i++) {
      const bytes = new TextEncoder().encode(`%PDF-1.4 bench document ${i}\n%%EOF\n`);
      await users[i % chats]!.sendDocument({ bytes, file_name: `report-${i}.pdf` });
    }
    await app.bot.init();
    const lat: number[] = [];
    const handle = app.bot.handleUpdate.bind(app.bot);
    app.bot.handleUpdate = async (u, w) => {
      const t = performance.now();
      await handle(u, w);
      lat.push(performance.now() - t);
    };
    const t0 = performance.now();
    const runner = startPolling(app.bot, app.services.log, { runner: { fetch: { timeout: 1 }, silent: true } });
    while (lat.length < updates) await Bun.sleep(2);
    const s = (performance.now() - t0) / 1000;
    await Promise.race([runner.stop(), Bun.sleep(2000)]);
    await check(app, updates);
    return { rate: updates / s, p50: percentile(lat, 50), p99: percentile(lat, 99) };
  } finally {
    await app.close(1000);
    await em.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One intake configuration. */
export interface IntakeCase {
  readonly variant: IntakeVariant;
  readonly updates: number;
  /** `expired` rows inserted before the run (history.ts); direct variants only. */
  readonly history: number;
}

/** Median result of one variant, updates/s and ms. */
export interface IntakeResult extends IntakeCase {
  readonly rate: number;
  readonly p50: number;
  readonly p99: number;
}

/**
 * Run each variant `runs` times (interleaved) and take medians of the per-run rate, p50 and p99.
 * @throws when a run does not end with exactly one `accepted` job per update
 */
export async function benchIntake(variants: readonly IntakeCase[], chats: number, runs: number): Promise<IntakeResult[]> {
  const per = variants.map(() => [] as IntakeRun[]);
  await direct(300, chats, false, 0); // warm-up (discarded): JIT, i18n bundles, drizzle
  for (let r = 0; r < runs; r++) {
    for (const [k, v] of variants.entries()) {
      const res = v.variant === "emulator-http" ? await viaEmulator(v.updates, chats) : await direct(v.updates, chats, v.variant === "direct-concurrent", v.history);
      per[k]!.push(res);
      console.error(`intake run ${r + 1}/${runs} ${v.variant} (${v.history} rows first): ${rate(res.rate)} updates/s, p50 ${res.p50?.toFixed(2)} ms, p99 ${res.p99?.toFixed(2)} ms`);
    }
  }
  return variants.map((v, k) => ({
    ...v,
    rate: median(per[k]!.map((x) => x.rate)),
    p50: median(per[k]!.map((x) => x.p50 ?? NaN)),
    p99: median(per[k]!.map((x) => x.p99 ?? NaN)),
  }));
}

const LABEL: Record<IntakeVariant, string> = {
  "direct-sequential": "bot.handleUpdate, one at a time",
  "direct-concurrent": `bot.handleUpdate, ${CONCURRENCY} in flight`,
  "emulator-http": "emulator over HTTP, @grammyjs/runner long polling",
};

/** The markdown table of {@link benchIntake} results. */
export function intakeTable(results: readonly IntakeResult[], chats: number, runs: number): string {
  const lines = [
    `Intake: distinct file_unique_id per update, ${chats} private chats, medians of ${runs} runs; status reporter = no-op (intake + INSERT only)`,
    "",
    "| path | updates per run | updates/s | p50 per update, ms | p99 per update, ms |",
    "| --- | ---: | ---: | ---: | ---: |",
  ];
  for (const r of results) lines.push(`| ${LABEL[r.variant]}${r.history > 0 ? `; ${rate(r.history)} expired rows first` : ""} | ${r.updates} | ${rate(r.rate)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} |`);
  return lines.join("\n");
}
