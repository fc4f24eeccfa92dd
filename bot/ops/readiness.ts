/**
 * The readiness checks of `/readyz` (issue 10 item 1): the database, the Bot API (getMe with a
 * deadline), disk free against the byte budget, the webhook's state in webhook mode
 * (getWebhookInfo), long polling's last answer in polling mode, and the age of the last good backup
 * (the status file of CONTRACTS.md §1). Each is a {@link CheckSpec} with its own cache lifetime, so a
 * scrape every second still asks Telegram at most twice a minute.
 */
import { stat, statfs } from "node:fs/promises";
import type { Api } from "grammy";
import { readBackupStatus } from "../backup/status.ts";
import type { IntakeActivity } from "./activity.ts";
import type { Check, CheckSpec } from "./check.ts";
import type { OutageTracker } from "./outage.ts";
import type { WebhookJudge } from "./webhook-state.ts";

const MB = 1024 * 1024;

/** How long one getMe / getWebhookInfo of a check may take, ms. */
export const BOT_API_CHECK_DEADLINE_MS = 3000;

/** `database`: the store answers a trivial query (SQLite file or PostgreSQL server). */
export function databaseCheck(ping: () => unknown): CheckSpec {
  return {
    name: "database",
    ttlMs: 0,
    deadlineMs: 2000,
    async run() {
      await ping();
      return { ok: true, detail: "SELECT 1 ok" };
    },
  };
}

/**
 * `botApi`: getMe within {@link BOT_API_CHECK_DEADLINE_MS}, cached 30 s. While start-up still waits
 * for the Bot API it reports that wait (attempts and the last cause, fresh on every ask) without
 * calling it.
 * @param startup the start-up outage state; `waiting()` is true until start-up reached the Bot API
 */
export function botApiCheck(api: Api, startup: { waiting(): boolean; tracker: OutageTracker }): CheckSpec {
  return {
    name: "botApi",
    ttlMs: () => (startup.waiting() ? 0 : 30_000),
    deadlineMs: BOT_API_CHECK_DEADLINE_MS + 500,
    async run(signal) {
      if (startup.waiting()) {
        const t = startup.tracker;
        const last = t.last ? `; last: ${t.last.cause}` : "";
        return { ok: false, detail: `start-up is waiting for the Bot API (${t.attempts} failed attempts${last})` };
      }
      try {
        const me = await api.getMe(AbortSignal.any([signal, AbortSignal.timeout(BOT_API_CHECK_DEADLINE_MS)]) as never);
        return { ok: true, detail: `getMe ok (@${me.username})` };
      } catch (err) {
        return { ok: false, detail: `getMe failed: ${(err as Error).message}` };
      }
    },
  };
}

/**
 * `disk`: the data filesystem has room for the rest of the byte budget — free bytes ≥
 * DOWNLOAD_BUDGET − bytes already reserved (reserved jobs' files are on the disk already).
 * Local mode (`botApiDir` given): the Bot API server writes every source into its own dir, and docket
 * reads it there in place without reserving it (issue 16), so that file system needs DOWNLOAD_BUDGET free
 * as well — on top of the data's need when both are one disk (the default `/var/lib/docket/bot-api`), the
 * same "twice the budget" as disk-layout.sh.
 */
export function diskCheck(dataDir: string, budget: number, reserved: () => Promise<number>, botApiDir?: string): CheckSpec {
  const mb = (n: number) => Math.floor(n / MB);
  return {
    name: "disk",
    ttlMs: 10_000,
    deadlineMs: 3000,
    async run() {
      const s = await statfs(dataDir);
      const free = s.bavail * s.bsize;
      const inUse = await reserved();
      let need = Math.max(0, budget - inUse);
      let detail = `${mb(free)} MB free on ${dataDir}, budget ${mb(budget)} MB (${mb(inUse)} MB reserved)`;
      let ok = true;
      // The server's dir out of reach is the `botApiDir` check's finding (one cause, one line); the disk
      // check then judges the data's disk alone rather than failing with a bare ENOENT/EACCES.
      const apiDev = botApiDir === undefined ? undefined : await stat(botApiDir).then((st) => st.dev, () => null);
      if (botApiDir !== undefined && apiDev === null) {
        detail += `; the Bot API server's files (${botApiDir}) could not be looked at (see the botApiDir check)`;
      } else if (botApiDir !== undefined) {
        if (apiDev === (await stat(dataDir)).dev) {
          need += budget;
          detail += `; the Bot API server's files (${botApiDir}) are on the same disk: ${mb(budget)} MB more`;
        } else {
          const b = await statfs(botApiDir);
          const bFree = b.bavail * b.bsize;
          ok = bFree >= budget;
          detail += `; ${mb(bFree)} MB free on ${botApiDir} (the Bot API server's files)${ok ? "" : `: needs ${mb(budget)} MB free`}`;
        }
      }
      ok &&= free >= need;
      return ok ? { ok: true, detail } : { ok: false, detail: `${detail}${free >= need ? "" : `: needs ${mb(need)} MB free`}; free disk space or lower DOWNLOAD_BUDGET` };
    },
  };
}

/** `webhook` (webhook mode): getWebhookInfo judged by {@link WebhookJudge}, cached 60 s. */
export function webhookCheck(api: Api, judge: WebhookJudge, activity: IntakeActivity, now: () => number = Date.now): CheckSpec {
  return {
    name: "webhook",
    ttlMs: 60_000,
    deadlineMs: BOT_API_CHECK_DEADLINE_MS + 500,
    async run(signal) {
      try {
        const info = await api.getWebhookInfo(AbortSignal.any([signal, AbortSignal.timeout(BOT_API_CHECK_DEADLINE_MS)]) as never);
        return judge.judge(info, now(), activity.lastUpdateAt);
      } catch (err) {
        return { ok: false, detail: `getWebhookInfo failed: ${(err as Error).message}` };
      }
    },
  };
}

/**
 * `polling` (long polling): a getUpdates answered within `staleMs` (the poll waits 30 s, so a
 * healthy poller answers at least that often).
 * @param since epoch ms from which a missing answer counts (the start of polling)
 */
export function pollingCheck(activity: IntakeActivity, tracker: OutageTracker, since: () => number, staleMs = 120_000, now: () => number = Date.now): CheckSpec {
  return {
    name: "polling",
    ttlMs: 0,
    deadlineMs: 1000,
    run(): Check {
      const last = activity.lastPollOkAt ?? since();
      const age = now() - last;
      const failing = tracker.last ? ` (${tracker.attempts} failed polls; last: ${tracker.last.cause})` : "";
      if (age <= staleMs) return { ok: true, detail: activity.lastPollOkAt === null ? "long polling started" : `last getUpdates answer ${Math.round(age / 1000)} s ago` };
      return { ok: false, detail: `no getUpdates answer for ${Math.round(age / 1000)} s${failing}` };
    },
  };
}

/**
 * `backup`: the last backup run succeeded and is at most `maxAgeMs` old. Before the first backup,
 * the database's age stands in for it: a new install is ready until it has been up `maxAgeMs`
 * without a backup.
 * @param dbFile the database file (its creation time when no backup ran yet)
 */
export function backupCheck(dataDir: string, dbFile: string, maxAgeMs: number, now: () => number = Date.now): CheckSpec {
  const hours = (ms: number) => `${Math.round(ms / 360_000) / 10} h`;
  return {
    name: "backup",
    ttlMs: 60_000,
    deadlineMs: 3000,
    async run(): Promise<Check> {
      const status = await readBackupStatus(dataDir);
      const limit = `BACKUP_MAX_AGE ${hours(maxAgeMs)}`;
      const b = status.backup;
      if (!b) {
        const s = await stat(dbFile);
        const age = now() - (s.birthtimeMs > 0 ? s.birthtimeMs : s.mtimeMs);
        return age <= maxAgeMs
          ? { ok: true, detail: `no backup has run yet (the database is ${hours(age)} old; ${limit})` }
          : { ok: false, detail: `no backup in the ${hours(age)} since the database was created (${limit}): is docket-backup.timer enabled?` };
      }
      const at = new Date(b.at * 1000).toISOString();
      if (!b.ok) return { ok: false, detail: `the last backup failed at ${at}${b.error ? `: ${b.error}` : ""}` };
      const age = now() - b.at * 1000;
      const verify = status.verify ? `; last verify ${status.verify.ok ? "passed" : "FAILED"} at ${new Date(status.verify.at * 1000).toISOString()}` : "";
      const what = `last good backup at ${at} (${hours(age)} ago, ${Math.ceil(b.bytes / MB)} MB, ${b.where}${verify})`;
      return age <= maxAgeMs ? { ok: true, detail: what } : { ok: false, detail: `${what} is older than ${limit}: is docket-backup.timer running?` };
    },
  };
}
