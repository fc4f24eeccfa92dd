/**
 * What the admins read when a docket unit failed (issue 10 item 3, cause `unit_failed`; CONTRACTS.md
 * §2): the pure part of `docket notify unit_failed --unit UNIT`, which `systemd/docket-alert@.service`
 * runs from every docket unit's `OnFailure=`. systemd hands the failed run's result to a unit started
 * by `OnFailure=` as `MONITOR_SERVICE_RESULT`, `MONITOR_EXIT_CODE` and `MONITOR_EXIT_STATUS`
 * (systemd.exec(5), "Environment variables in spawned processes"); this turns them into one sentence
 * naming the cause and the next command, and says when a unit's own alert already told the admins.
 */
import { constants } from "node:os";
import { EXIT_BAD_CONFIG, EXIT_TOKEN_REFUSED } from "./exit-codes.ts";
import type { AlertCause } from "./alert-policy.ts";

/** The failed run as systemd describes it to an `OnFailure=` unit (each may be missing). */
export interface MonitorResult {
  /** `MONITOR_SERVICE_RESULT`: `exit-code`, `signal`, `core-dump`, `timeout`, `oom-kill`, `start-limit-hit`, `watchdog`, … */
  readonly result?: string | undefined;
  /** `MONITOR_EXIT_CODE`: `exited`, `killed`, `dumped`. */
  readonly code?: string | undefined;
  /** `MONITOR_EXIT_STATUS`: the exit status (exited), or the signal's name (killed, dumped). */
  readonly status?: string | undefined;
}

/** The MONITOR_* variables of `env` (the unit's environment). */
export function monitorResult(env: Readonly<Record<string, string | undefined>>): MonitorResult {
  return { result: env.MONITOR_SERVICE_RESULT || undefined, code: env.MONITOR_EXIT_CODE || undefined, status: env.MONITOR_EXIT_STATUS || undefined };
}

/** `ExecMainCode` of `systemctl show` (the CLD_* codes of waitid(2)) → MONITOR_EXIT_CODE's words. */
const CLD: Readonly<Record<string, string>> = { "1": "exited", "2": "killed", "3": "dumped" };

/**
 * The same from `systemctl show --property=Result,ExecMainCode,ExecMainStatus UNIT`, for systemd
 * before 251 (Ubuntu 22.04 has 249), which sets no MONITOR_* variables: `Result=exit-code`,
 * `ExecMainCode=1`, `ExecMainStatus=78` (a signal's number when killed).
 */
export function monitorFromShow(text: string): MonitorResult {
  const v = Object.fromEntries(text.split("\n").map((l) => l.split(/=(.*)/s).slice(0, 2) as [string, string]).filter(([k]) => k));
  const code = CLD[v.ExecMainCode ?? ""];
  const number = v.ExecMainStatus;
  const signal = code && code !== "exited" && number ? Object.entries(constants.signals).find(([, n]) => String(n) === number)?.[0] : undefined;
  return {
    result: v.Result && v.Result !== "success" ? v.Result : undefined,
    code,
    status: code === undefined ? undefined : code === "exited" ? number || undefined : (signal ?? number) || undefined,
  };
}

/** A unit name systemd could have started: `name.service` and the like, nothing a shell would read. */
export function isUnitName(s: string): boolean {
  return /^[A-Za-z0-9:_.\\@-]{1,250}\.(service|timer|socket|mount|target|path)$/.test(s);
}

/** A signal as systemd names it (`KILL`, `SIGKILL`, `9`) → `SIGKILL`. */
function signalName(s: string): string {
  return /^\d+$/.test(s) ? `signal ${s}` : s.startsWith("SIG") ? s : `SIG${s}`;
}

/** What an exit status of the bot means (bot/ops/exit-codes.ts), with its fix. */
function botExit(status: string): string {
  if (status === String(EXIT_TOKEN_REFUSED)) return "the Bot API refused the token, or BOT_API_ROOT is not a Bot API server: fix BOT_TOKEN / BOT_API_ROOT in /etc/docket/docket.env, then systemctl restart docket.service";
  if (status === String(EXIT_BAD_CONFIG)) return "invalid configuration (the journal names each variable): fix /etc/docket/docket.env, then systemctl restart docket.service";
  return "";
}

/** How the last run ended, from `code` and `status`. */
function ending(m: MonitorResult, unit: string): string {
  if (m.code === "exited" && m.status !== undefined) {
    const meaning = unit === "docket.service" ? botExit(m.status) : "";
    return `exit status ${m.status}${meaning ? ` (${meaning})` : ""}`;
  }
  if ((m.code === "killed" || m.code === "dumped") && m.status !== undefined) return `${m.code === "dumped" ? "crashed with" : "killed by"} ${signalName(m.status)}${m.code === "dumped" ? " (core dumped)" : ""}`;
  return "";
}

/**
 * The alert text for a failed unit: what systemd reported, what it means, and where to look.
 * @param unit the failed unit (`%i` of docket-alert@.service)
 */
export function unitFailureText(unit: string, m: MonitorResult): string {
  const end = ending(m, unit);
  let what: string;
  switch (m.result) {
    case "start-limit-hit":
      what = `restarted too often: systemd gave up (StartLimitBurst within StartLimitIntervalSec)${end ? `; the last run ended with ${end}` : ""}. After the fix: systemctl reset-failed ${unit}; systemctl start ${unit}`;
      break;
    case "oom-kill":
      what = `killed by the kernel's OOM killer at the unit's MemoryMax${end ? ` (${end})` : ""}: docs/sizing.md`;
      break;
    case "timeout":
      what = `did not finish in time (systemd's timeout)${end ? `; ${end}` : ""}`;
      break;
    case "watchdog":
      what = "stopped answering systemd's watchdog";
      break;
    case undefined:
    case "exit-code":
    case "signal":
    case "core-dump":
      what = end || (m.result ?? "failed (systemd gave no result)");
      break;
    default:
      what = end ? `${m.result}: ${end}` : m.result;
  }
  return `${unit} failed: ${what}. Its log: journalctl -u ${unit} -n 50; state: systemctl status ${unit}`;
}

/**
 * Units that alert the admins themselves with a more specific cause when they fail (backup.sh and
 * `docket backup verify` call `docket notify`): a unit_failed for them within {@link COVERED_WITHIN_MS}
 * of that alert would tell the admins the same failure twice.
 */
export const OWN_CAUSE: Readonly<Record<string, AlertCause>> = { "docket-backup.service": "backup_failed", "docket-backup-verify.service": "verify_failed" };

/** How long a unit's own alert covers its unit_failed, ms. */
export const COVERED_WITHIN_MS = 30 * 60_000;

/**
 * The unit's own alert recorded in the last {@link COVERED_WITHIN_MS} (so no unit_failed is needed), or null.
 * @param recent alerts recorded lately: cause and creation time (epoch ms)
 */
export function coveredBy(unit: string, recent: readonly { readonly cause: string; readonly createdAt: number }[], now: number): { readonly cause: AlertCause; readonly at: number } | null {
  const cause = OWN_CAUSE[unit];
  if (!cause) return null;
  const hit = recent.filter((a) => a.cause === cause && now - a.createdAt <= COVERED_WITHIN_MS).map((a) => a.createdAt);
  return hit.length ? { cause, at: Math.max(...hit) } : null;
}
