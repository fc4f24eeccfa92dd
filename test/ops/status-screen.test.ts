/**
 * bot/cli/status-screen.ts, the pure half of `docket status` (issue 10 item 6): a fixed document
 * rendered exactly — a webhook bot that is not ready, a failed backup and drill, alerts and journal
 * errors of the last hour — and the exit verdict.
 */
import { expect, test } from "vitest";
import { isHealthy, renderStatus, type StatusDocument } from "../../bot/cli/status-screen.ts";
import type { BotReport } from "../../bot/ops/report.ts";

const NOW = Date.parse("2026-12-01T12:00:00Z");
const s = (iso: string) => Date.parse(iso) / 1000;

const doc: StatusDocument = {
  now: NOW,
  bot: {
    phase: "running",
    pid: 4242,
    startedAt: "2026-12-01T09:30:00.000Z",
    version: "0.2.0",
    commit: "0123456789ab",
    host: "vps-7",
    mode: "local",
    intake: "webhook",
    store: "sqlite",
    readiness: {
      database: { ok: true, detail: "SELECT 1 ok" },
      botApi: { ok: true, detail: "getMe ok (@b)" },
      webhook: { ok: false, detail: 'Telegram cannot deliver to the webhook: "Connection refused" at 2026-12-01T11:59:00Z (pending_update_count 7); check nginx and the certificate' },
    },
    liveness: { eventLoop: { ok: true, detail: "max lag 3 ms in the last 10 s" }, outbox: { ok: false, detail: "closed: chat messages are not delivered" } },
    lastUpdateAt: "2026-12-01T11:40:00.000Z",
    lastIntakeOkAt: "2026-12-01T11:59:30.000Z",
    chatsOnHold: 2,
    outboxQueue: 5,
    errors: { count: 2, last: [{ at: "2026-12-01T11:59:01.000Z", level: "error", msg: 'readiness check webhook failing: Telegram cannot deliver to the webhook: "Connection refused"' }] },
  },
  db: { jobs: { ready: 9, failed: 2, processing: 1, accepted: 3 }, budgetInUse: 300 * 1048576, failedLastHour: { too_big: 1, encrypted: 1 }, alertsLastHour: [{ cause: "webhook_error", state: "sent", createdAt: "2026-12-01T11:59:02.000Z" }] },
  budgetTotal: 4096 * 1048576,
  dataDir: "/var/lib/docket",
  diskFree: 20_000 * 1048576,
  backup: { backup: { ok: false, at: s("2026-12-01T03:15:00Z"), bytes: 0, where: "restic", error: "restic: wrong password or no key found" }, verify: { ok: false, at: s("2026-11-30T04:00:00Z"), error: "row counts differ" } },
};

test("a not-ready webhook bot with a failed backup: every concern on its line, failures spelled out", () => {
  expect(renderStatus(doc)).toEqual([
    "docket 0.2.0 (0123456789ab) on vps-7: running, NOT READY",
    "          local mode, webhook, sqlite; pid 4242 since 2026-12-01 09:30 UTC",
    "health    1 failing (ok: database, botApi)",
    '          ✗ webhook: Telegram cannot deliver to the webhook: "Connection refused" at 2026-12-01T11:59:00Z (pending_update_count 7); check nginx and the certificate',
    "          ✗ outbox (liveness): closed: chat messages are not delivered",
    "intake    last update 20 min ago; last webhook call 30 s ago",
    "jobs      accepted 3 · fetched 0 · processing 1 · ready 9 · failed 2 · expired 0 (waiting 3)",
    "budget    300 MB of 4096 MB reserved (7 %); 20000 MB free on /var/lib/docket",
    "chats     2 on hold after a 429; outbox queue 5",
    "backup    LAST BACKUP FAILED 2026-12-01 03:15 UTC: restic: wrong password or no key found; VERIFY FAILED 2026-11-30 04:00 UTC: row counts differ",
    "errors    last hour: 2 failed jobs (too_big 1, encrypted 1); alerts: webhook_error sent; 2 error lines in the journal",
    '          11:59:01 error: readiness check webhook failing: Telegram cannot deliver to the webhook: "Connection refused"',
  ]);
  expect(isHealthy(doc)).toBe(false);
});

test("healthy only when running and every readiness and liveness check passes", () => {
  const bot = doc.bot as BotReport;
  const ready: StatusDocument = { ...doc, bot: { ...bot, readiness: { database: { ok: true, detail: "" } }, liveness: { outbox: { ok: true, detail: "open" } } } };
  const readyBot = ready.bot as BotReport;
  expect(isHealthy(ready)).toBe(true);
  expect(isHealthy({ ...ready, bot: { ...readyBot, phase: "starting" } })).toBe(false);
  expect(isHealthy({ ...ready, bot: { down: "no answer on 127.0.0.1:8090 (ECONNREFUSED)" } })).toBe(false);
  expect(isHealthy({ ...ready, bot: { ...readyBot, liveness: { outbox: { ok: false, detail: "closed" } } } })).toBe(false);
});
