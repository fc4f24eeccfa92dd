/**
 * `docket status [--json] [--data-dir DIR] [--env FILE]` (issue 10 item 6): one screen for the
 * operator — mode and version, polling or webhook and its health, jobs by state, budget in use,
 * chats on hold, the last backup and its verify result, errors in the last hour. It asks the running
 * bot (`/status` on 127.0.0.1:HTTP_PORT) and reads the database and the backup status file itself,
 * so it still shows the jobs and the backups when the bot is down. Exit 0 when the bot runs and is
 * ready, 1 otherwise (not running, starting, stopping, a readiness check failing), 2 on bad usage.
 */
import { existsSync } from "node:fs";
import { statfs } from "node:fs/promises";
import { join } from "node:path";
import { readBackupStatus, type BackupStatus } from "../backup/status.ts";
import { openDbReadOnly } from "../db/open.ts";
import { SqliteJobStore } from "../jobs/sqlite-store.ts";
import { PgJobStore } from "../jobs/pg-store.ts";
import type { JobStore } from "../jobs/store.ts";
import { describeUrl, passwordOf, pgPools } from "../db/pg-open.ts";
import { redactSecrets } from "../log.ts";
import { becomeOwnerOf } from "./become-owner.ts";
import { botConfig } from "./bot-config.ts";
import { parseOptions, usageError, type Command } from "./command.ts";
import { resolveDataDir } from "./data-dir.ts";
import type { BotReport } from "../ops/report.ts";
import { isHealthy, renderStatus, type StatusDocument } from "./status-screen.ts";

/** How long the command waits for the bot's answer, ms. */
const STATUS_TIMEOUT_MS = 5000;
/** HTTP_PORT's default (bot/config.ts), when no configuration is readable. */
const DEFAULT_HTTP_PORT = 8090;

/** The running bot's `/status`, or why there is none. */
async function askBot(port: number): Promise<BotReport | { down: string }> {
  if (port === 0) return { down: "HTTP_PORT=0: the operator port is off" };
  try {
    const res = await fetch(`http://127.0.0.1:${port}/status`, { signal: AbortSignal.timeout(STATUS_TIMEOUT_MS) });
    if (res.status === 503) return { down: "it is stopping" };
    if (!res.ok) return { down: `127.0.0.1:${port}/status answered HTTP ${res.status}` };
    return (await res.json()) as BotReport;
  } catch (err) {
    const e = err as { name?: string; code?: string; message?: string };
    return { down: `no answer on 127.0.0.1:${port} (${e.name === "TimeoutError" ? "timed out" : (e.code ?? e.message)})` };
  }
}

/** `docket status …` */
export const statusCommand: Command = {
  usage: "docket status [--json] [--data-dir DIR] [--env FILE]",
  async run(argv) {
    const parsed = parseOptions(argv, { json: { type: "boolean", default: false }, "data-dir": { type: "string" }, env: { type: "string" } });
    if (typeof parsed === "string") return usageError(this, parsed);
    if (parsed.positionals.length > 0) return usageError(this);
    // The env file is root's: read the configuration before dropping root for the database.
    const loaded = botConfig(parsed.values.env);
    const config = "config" in loaded ? loaded.config : null;
    const dataDir = parsed.values["data-dir"] ? resolveDataDir(parsed.values["data-dir"]) : (config?.dataDir ?? resolveDataDir());
    const now = Date.now();
    const bot = await askBot(config?.httpPort ?? DEFAULT_HTTP_PORT);
    const dbFile = join(dataDir, "db", "docket.sqlite");
    let db: StatusDocument["db"];
    const pgUrl = config?.database.url ?? null;
    /** What the screen shows from a store. */
    const read = async (store: JobStore): Promise<StatusDocument["db"]> => ({
      jobs: await store.countByState(),
      budgetInUse: await store.budgetInUse(),
      failedLastHour: await store.countFailedByReason(now - 3_600_000),
      alertsLastHour: (await store.alertsSince(now - 3_600_000)).map((a) => ({ cause: a.cause, state: a.state, createdAt: a.createdAt })),
    });
    if (pgUrl !== null) {
      // PostgreSQL (DATABASE_URL): read through a client of its own, never migrating (issue 14).
      const pools = pgPools({ url: pgUrl, poolMax: 2, statementTimeoutMs: STATUS_TIMEOUT_MS, connectTimeoutMs: STATUS_TIMEOUT_MS, applicationName: "docket status" });
      try {
        db = await read(new PgJobStore(pools));
      } catch (err) {
        const password = passwordOf(pgUrl);
        const message = (err as Error).message;
        db = { error: `PostgreSQL ${describeUrl(pgUrl)}: ${redactSecrets(password ? message.replaceAll(password, "***") : message)}` };
      } finally {
        await pools.close(1);
      }
    } else if (!existsSync(dbFile)) db = { error: `no database at ${dbFile} (is DATA_DIR right? --data-dir)` };
    else {
      try {
        becomeOwnerOf(dbFile);
        const open = openDbReadOnly(dbFile);
        try {
          db = await read(new SqliteJobStore(open.db));
        } finally {
          open.close();
        }
      } catch (err) {
        db = { error: redactSecrets((err as Error).message) };
      }
    }
    let backup: BackupStatus = {};
    try {
      backup = readBackupStatus(dataDir);
    } catch {
      backup = {};
    }
    let diskFree: number | null = null;
    try {
      const s = await statfs(dataDir);
      diskFree = s.bavail * s.bsize;
    } catch {
      diskFree = null;
    }
    const doc: StatusDocument = { now, bot, db, budgetTotal: config?.downloadBudget ?? 0, dataDir, diskFree, backup };
    if (parsed.values.json) console.log(JSON.stringify(doc, null, 2));
    else console.log(renderStatus(doc).join("\n"));
    if (!config && !parsed.values.json) console.log(`(no configuration: ${"problem" in loaded ? loaded.problem : ""})`);
    return isHealthy(doc) ? 0 : 1;
  },
};
