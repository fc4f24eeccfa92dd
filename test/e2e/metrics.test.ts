/**
 * `/metrics` worth scraping (issue 10 item 2): the real bot (engine, processor child, outbox) against
 * the emulator, with the bot's own Ops. Each family is checked for the value the run produced:
 * build info, intake times, jobs by state and by reason, step durations, the child's peak RSS, the
 * budget, the outbox queue and held chats after a 429, 429s by method, backup figures from the
 * status file, the janitor's last pass, readiness verdicts, process figures.
 */
import { afterEach, expect, test } from "vitest";
import { writeBackupStatus } from "../../bot/backup/status.ts";
import { buildInfo } from "../../bot/ops/build-info.ts";
import type { Ops } from "../../bot/ops/runtime.ts";
import { makePdf } from "../../scripts/samples/index.ts";
import { families, sample } from "../support/prom-text.ts";
import { startStack, type Stack } from "../support/stack.ts";
import { runningOps } from "../support/ops.ts";

let stack: Stack | null = null;
let ops: Ops | null = null;
afterEach(async () => {
  await ops?.close();
  await stack?.stop();
  stack = null;
  ops = null;
});

test("after a PDF, a refused file, a 429 and a janitor pass, every family says what happened", async () => {
  const t0 = Date.now() / 1000;
  stack = await startStack();
  const s = stack;
  const started = runningOps(s);
  ops = started.ops;
  const base = started.base;
  const scrape = async () => (await fetch(`${base}/metrics`)).text();

  const u = s.em.user({ language_code: "en" });
  const pdf = await u.sendDocument({ bytes: makePdf({ pages: [["Metrics page 1"], ["Metrics page 2"]] }), file_name: "m.pdf", mime_type: "application/pdf" });
  expect((await s.waitJob((await s.jobFor(u.chatId, pdf.message_id)).id)).status).toBe("ready");
  const big = await u.sendDocument({ bytes: new Uint8Array(100).fill(1), file_name: "big.pdf", file_size: 26_214_400 });
  expect((await s.waitJob((await s.jobFor(u.chatId, big.message_id)).id)).reason).toBe("too_big");
  // A chat Telegram holds for 30 s: its reply waits in the outbox.
  const held = s.em.user({ language_code: "en" });
  s.em.failNext("sendMessage", { error_code: 429, description: "Too Many Requests: retry after 30", retry_after: 30 }, { chatId: held.chatId });
  await held.sendText("/jobs");
  await expect.poll(async () => sample(await scrape(), "docket_chats_on_hold")).toBe(1);
  const now = Math.floor(Date.now() / 1000);
  writeBackupStatus(s.config.dataDir, { backup: { ok: true, at: now - 100, bytes: 12_345, where: "local" }, verify: { ok: false, at: now - 50, error: "row counts differ" } });
  await s.app.janitorPass();
  await fetch(`${base}/readyz`);
  await expect.poll(async () => sample(await scrape(), "docket_budget_in_use_bytes")).toBe(0);
  // The first chat's status messages drain (paced edits); the held chat's reply stays queued for 30 s.
  await expect.poll(async () => sample(await scrape(), "docket_outbox_queue_depth")).toBe(1);

  const m = await scrape();
  const { version, commit } = buildInfo();
  expect(commit).toMatch(/^([0-9a-f]{12}|unknown)$/);
  expect(sample(m, "docket_build_info", { version, commit, mode: "cloud", store: "sqlite" })).toBe(1);
  const lastUpdate = sample(m, "docket_last_update_timestamp_seconds")!;
  expect(lastUpdate).toBeGreaterThanOrEqual(t0);
  expect(lastUpdate).toBeLessThanOrEqual(Date.now() / 1000);
  expect(sample(m, "docket_intake_last_success_timestamp_seconds", { intake: "polling" })).toBeGreaterThanOrEqual(t0);

  expect(sample(m, "docket_jobs", { state: "ready" })).toBe(1);
  expect(sample(m, "docket_jobs", { state: "failed" })).toBe(1);
  expect(sample(m, "docket_jobs_failed", { reason: "too_big" })).toBe(1);
  expect(sample(m, "docket_jobs_ended_total", { status: "failed", reason: "too_big" })).toBe(1);
  expect(sample(m, "docket_queue_depth")).toBe(0);
  for (const step of ["download", "processing", "delivery"]) {
    expect([step, sample(m, "docket_step_duration_seconds_count", { step, outcome: "ok" })]).toEqual([step, 1]);
    expect(sample(m, "docket_step_duration_seconds_sum", { step, outcome: "ok" })).toBeGreaterThan(0);
  }
  expect(sample(m, "docket_processing_seconds_count", { type: "application/pdf" })).toBe(1);
  // The processor child (bun + pdf.js) peaks well above a bare runtime and below PROCESS_MEMORY_MB.
  expect(sample(m, "docket_processing_child_peak_rss_bytes_count")).toBe(1);
  const peak = sample(m, "docket_processing_child_peak_rss_bytes_sum")!;
  expect(peak).toBeGreaterThan(20 * 1048576);
  expect(peak).toBeLessThan(s.config.processMemoryMb * 1048576);
  expect(sample(m, "docket_budget_total_bytes")).toBe(s.config.downloadBudget);
  expect(sample(m, "docket_disk_free_bytes")).toBeGreaterThan(0);

  expect(sample(m, "docket_chats_on_hold")).toBe(1);
  expect(sample(m, "docket_chat_holds_total")).toBe(1);
  expect(sample(m, "docket_outbox_queue_depth")).toBe(1);
  expect(sample(m, "docket_telegram_429_total", { method: "sendMessage" })).toBe(1);

  expect(sample(m, "docket_backup_last_success_timestamp_seconds")).toBe(now - 100);
  expect(sample(m, "docket_backup_last_size_bytes")).toBe(12_345);
  expect(sample(m, "docket_backup_last_run_ok", { kind: "backup", where: "local" })).toBe(1);
  expect(sample(m, "docket_backup_last_run_timestamp_seconds", { kind: "backup" })).toBe(now - 100);
  expect(sample(m, "docket_backup_last_run_timestamp_seconds", { kind: "verify" })).toBe(now - 50);
  expect(sample(m, "docket_backup_last_run_ok", { kind: "verify" })).toBe(0);
  expect(sample(m, "docket_janitor_runs_total", { result: "ok" })).toBe(1);
  expect(sample(m, "docket_janitor_last_run_timestamp_seconds")).toBeGreaterThanOrEqual(t0);

  expect(sample(m, "docket_ready_check", { check: "database" })).toBe(1);
  expect(sample(m, "docket_ready_check", { check: "botApi" })).toBe(1);
  expect(sample(m, "nodejs_eventloop_lag_max_seconds")).toBeGreaterThanOrEqual(0); // since the previous scrape; measured in test/ops/process-metrics.test.ts
  expect(sample(m, "process_resident_memory_bytes")).toBeGreaterThan(30 * 1048576);
  expect(sample(m, "process_open_fds")).toBeGreaterThan(5);

  const all = families(m);
  expect(all.filter((f) => f.startsWith("docket_")).length).toBeGreaterThanOrEqual(15);
  expect(new Set(all).size).toBe(all.length);
}, 60_000);
