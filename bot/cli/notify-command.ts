/**
 * `docket notify <cause> <text…>` (CONTRACTS.md §2; issue 10 item 3): record an operator alert that
 * the running bot sends to ADMIN_USER_IDS through the outbox, at most once per cause per hour, and
 * write it to the journal at warning. Callers: the OnFailure= hook (`unit_failed`), the backup and
 * verify scripts (`backup_failed`, `verify_failed`), anyone. Exit 0 once recorded, 1 when it could
 * not be recorded (the sentence names the database), 2 on bad usage (an unknown cause lists them).
 *
 * When no bot answers on the operator port (the unit failed, or it is stopped), the command sends
 * the pending alerts itself, through an outbox of its own, with the same once-per-hour rule: the
 * alert about a dead bot still reaches the admins. Best effort: a failed send is logged, and the
 * exit status stays 0 (the alert is recorded; the bot sends it when it runs again).
 * Run as root, it records as the owner of the database, so the files SQLite creates beside it
 * (`-wal`, `-shm`) stay the bot's.
 *
 * `docket notify unit_failed --unit UNIT` (systemd/docket-alert@.service, from every unit's
 * OnFailure=) writes the text itself from the MONITOR_* variables systemd sets
 * (bot/ops/unit-failure.ts); for a unit that alerts with its own cause (the backup, the drill), a
 * failure already told in the last 30 min is not recorded again.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Api } from "grammy";
import { describeUrl, passwordOf } from "../db/pg-open.ts";
import { openStore, type OpenedStore } from "../open-store.ts";
import { createLogger } from "../log.ts";
import { ALERT_CAUSES, isAlertCause } from "../ops/alert-policy.ts";
import { Alerts } from "../ops/alerts.ts";
import { coveredBy, isUnitName, monitorFromShow, monitorResult, unitFailureText, type MonitorResult } from "../ops/unit-failure.ts";
import { Outbox } from "../outbox/index.ts";
import { becomeOwnerOf } from "./become-owner.ts";
import { botConfig } from "./bot-config.ts";
import { parseOptions, usageError, type Command } from "./command.ts";
import { resolveDataDir } from "./data-dir.ts";

/** How long the command waits for the bot's /livez, ms. */
const LIVEZ_TIMEOUT_MS = 2000;
/** How long sending the alerts itself may take, ms. */
const SEND_TIMEOUT_MS = 15_000;

/** True when a bot process answers on 127.0.0.1:`port` and is not stopping (it will send the alert). */
async function botWillSend(port: number): Promise<boolean> {
  if (port === 0) return false;
  try {
    const res = await fetch(`http://127.0.0.1:${port}/livez`, { signal: AbortSignal.timeout(LIVEZ_TIMEOUT_MS) });
    const body = (await res.json()) as { phase?: unknown };
    return body.phase === "starting" || body.phase === "running";
  } catch {
    return false;
  }
}

/**
 * How `unit`'s last run ended: systemd's MONITOR_* variables (an OnFailure= unit, systemd ≥ 251), else
 * `systemctl show` of the unit (older systemd; `$SYSTEMCTL` replaces the command), else nothing known.
 */
function failedRun(unit: string): MonitorResult {
  const m = monitorResult(process.env);
  if (m.result !== undefined || m.code !== undefined) return m;
  try {
    const r = Bun.spawnSync([process.env.SYSTEMCTL || "systemctl", "show", "--property=Result,ExecMainCode,ExecMainStatus", unit], { stdout: "pipe", stderr: "ignore", timeout: 5000 });
    return r.exitCode === 0 ? monitorFromShow(r.stdout.toString()) : m;
  } catch {
    return m; // no systemctl here
  }
}

/** `docket notify …` */
export const notifyCommand: Command = {
  usage: `docket notify ${Object.keys(ALERT_CAUSES).join("|")} TEXT… [--data-dir DIR] [--env FILE]\n       docket notify unit_failed --unit UNIT [TEXT…]   (OnFailure=: the text from systemd's MONITOR_* variables)`,
  async run(argv) {
    const parsed = parseOptions(argv, { "data-dir": { type: "string" }, env: { type: "string" }, unit: { type: "string" } });
    if (typeof parsed === "string") return usageError(this, parsed);
    const [cause, ...words] = parsed.positionals;
    if (cause === undefined) return usageError(this);
    if (!isAlertCause(cause)) return usageError(this, `unknown cause ${JSON.stringify(cause)}; causes: ${Object.keys(ALERT_CAUSES).join(", ")}`);
    const unit = parsed.values.unit;
    if (unit !== undefined && (cause !== "unit_failed" || !isUnitName(unit))) return usageError(this, `--unit takes a unit name (docket.service), with the cause unit_failed`);
    const said = words.join(" ").trim();
    const text = unit === undefined ? said : `${unitFailureText(unit, failedRun(unit))}${said ? ` ${said}` : ""}`;
    if (!text) return usageError(this, "say what happened: docket notify CAUSE TEXT");
    // The env file is root's: read the bot's configuration before giving up root.
    const loaded = botConfig(parsed.values.env);
    const config = "config" in loaded ? loaded.config : null;
    const dataDir = resolveDataDir(parsed.values["data-dir"]);
    const dbFile = join(dataDir, "db", "docket.sqlite");
    const pgUrl = config?.database.url ?? null;
    if (pgUrl === null && !existsSync(dbFile)) {
      console.error(`docket notify: no docket database at ${dbFile}; is DATA_DIR right (--data-dir)? The alert was not recorded.`);
      return 1;
    }
    const log = createLogger({ level: "info", ...(config ? { token: config.token } : {}) });
    let db: OpenedStore | null = null;
    try {
      // With DATABASE_URL the alert goes into PostgreSQL, where every host's bot sees it (issue 14).
      if (pgUrl === null) becomeOwnerOf(dbFile);
      db = await openStore(config ?? { database: { url: null, poolMax: 1, statementTimeoutMs: 30_000 } }, dbFile, "docket notify");
      const store = db.store;
      const host = config?.hostId ?? "this host";
      let outbox: Outbox | null = null;
      let api: Api | null = null;
      const alerts = new Alerts({
        store,
        log,
        admins: config?.adminUserIds ?? [],
        host,
        send: async (chatId, message) => {
          await outbox!.send(api!, chatId, { text: message });
        },
      });
      if (unit !== undefined) {
        const recent = (await store.alertsSince(Date.now() - 3_600_000)).map((a) => ({ cause: a.cause, createdAt: Date.parse(a.createdAt) }));
        const told = coveredBy(unit, recent, Date.now());
        if (told) {
          log.info({ unit, cause: told.cause }, `${unit} failed; the admins were told already (${told.cause} at ${new Date(told.at).toISOString()}): not recorded again`);
          return 0;
        }
      }
      await alerts.record(cause, text, "cli");
      if (!config) {
        log.warn({ problem: "problem" in loaded ? loaded.problem : "" }, "recorded; the bot sends it when it runs (no configuration here to send it now)");
        return 0;
      }
      if (await botWillSend(config.httpPort)) return 0;
      // No bot to send it: send the pending alerts now, through an outbox of our own.
      api = new Api(config.token, { apiRoot: config.apiRoot });
      outbox = new Outbox({ logger: log, options: { shutdownTimeoutMs: SEND_TIMEOUT_MS } });
      await Promise.race([alerts.deliver(), Bun.sleep(SEND_TIMEOUT_MS)]);
      await outbox.close();
      return 0;
    } catch (err) {
      const password = pgUrl === null ? null : passwordOf(pgUrl);
      const message = (err as Error).message;
      console.error(`docket notify: could not record the alert in ${pgUrl === null ? dbFile : `PostgreSQL ${describeUrl(pgUrl)}`}: ${password ? message.replaceAll(password, "***") : message}`);
      return 1;
    } finally {
      await db?.close();
    }
  },
};
