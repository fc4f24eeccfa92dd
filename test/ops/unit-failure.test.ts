/**
 * The text of a unit_failed alert from what systemd hands an OnFailure= unit (bot/ops/unit-failure.ts),
 * and which failures a unit's own alert already reported.
 */
import { describe, expect, test } from "vitest";
import { COVERED_WITHIN_MS, coveredBy, isUnitName, monitorFromShow, monitorResult, unitFailureText } from "../../bot/ops/unit-failure.ts";

const tail = (u: string) => `. Its log: journalctl -u ${u} -n 50; state: systemctl status ${u}`;

describe("unitFailureText", () => {
  test("the bot's own exit statuses are spelled out with their fix", () => {
    expect(unitFailureText("docket.service", { result: "exit-code", code: "exited", status: "78" })).toBe(
      "docket.service failed: exit status 78 (the Bot API refused the token, or BOT_API_ROOT is not a Bot API server: fix BOT_TOKEN / BOT_API_ROOT in /etc/docket/docket.env, then systemctl restart docket.service)" +
        tail("docket.service"),
    );
    expect(unitFailureText("docket.service", { result: "exit-code", code: "exited", status: "2" })).toContain("exit status 2 (invalid configuration (the journal names each variable)");
    // Another unit's exit status 78 means nothing in particular.
    expect(unitFailureText("docket-backup.service", { result: "exit-code", code: "exited", status: "78" })).toBe(`docket-backup.service failed: exit status 78${tail("docket-backup.service")}`);
  });

  test("gave up restarting, OOM, signals, timeouts, and nothing known", () => {
    expect(unitFailureText("docket.service", { result: "start-limit-hit", code: "exited", status: "1" })).toBe(
      "docket.service failed: restarted too often: systemd gave up (StartLimitBurst within StartLimitIntervalSec); the last run ended with exit status 1. After the fix: systemctl reset-failed docket.service; systemctl start docket.service" +
        tail("docket.service"),
    );
    expect(unitFailureText("docket.service", { result: "oom-kill", code: "killed", status: "KILL" })).toBe(
      `docket.service failed: killed by the kernel's OOM killer at the unit's MemoryMax (killed by SIGKILL): docs/sizing.md${tail("docket.service")}`,
    );
    expect(unitFailureText("docket-nginx.service", { result: "core-dump", code: "dumped", status: "SEGV" })).toBe(`docket-nginx.service failed: crashed with SIGSEGV (core dumped)${tail("docket-nginx.service")}`);
    expect(unitFailureText("docket-janitor.service", { result: "timeout", code: "killed", status: "TERM" })).toBe(`docket-janitor.service failed: did not finish in time (systemd's timeout); killed by SIGTERM${tail("docket-janitor.service")}`);
    expect(unitFailureText("docket.service", {})).toBe(`docket.service failed: failed (systemd gave no result)${tail("docket.service")}`);
  });

  test("monitorResult reads the MONITOR_* variables; empty ones are missing", () => {
    expect(monitorResult({ MONITOR_SERVICE_RESULT: "exit-code", MONITOR_EXIT_CODE: "exited", MONITOR_EXIT_STATUS: "78", OTHER: "x" })).toEqual({ result: "exit-code", code: "exited", status: "78" });
    expect(monitorResult({ MONITOR_SERVICE_RESULT: "", MONITOR_EXIT_STATUS: "" })).toEqual({ result: undefined, code: undefined, status: undefined });
  });

  test("older systemd (no MONITOR_*): systemctl show's Result and ExecMain* read the same way", () => {
    expect(monitorFromShow("Result=exit-code\nExecMainCode=1\nExecMainStatus=78\n")).toEqual({ result: "exit-code", code: "exited", status: "78" });
    expect(monitorFromShow("Result=signal\nExecMainCode=2\nExecMainStatus=9\n")).toEqual({ result: "signal", code: "killed", status: "SIGKILL" });
    expect(monitorFromShow("Result=core-dump\nExecMainCode=3\nExecMainStatus=11\n")).toEqual({ result: "core-dump", code: "dumped", status: "SIGSEGV" });
    expect(monitorFromShow("Result=start-limit-hit\nExecMainCode=0\nExecMainStatus=0\n")).toEqual({ result: "start-limit-hit", code: undefined, status: undefined });
    expect(unitFailureText("docket.service", monitorFromShow("Result=signal\nExecMainCode=2\nExecMainStatus=9"))).toMatch(/^docket\.service failed: killed by SIGKILL\. /);
  });

  test("only unit names are taken as --unit", () => {
    expect(["docket.service", "docket-bot-api.service", "docket-failure@docket.service.service", "docket-backup.timer"].every(isUnitName)).toBe(true);
    expect(["docket", "docket.service; rm -rf /", "../x.service", "", "a b.service"].some(isUnitName)).toBe(false);
  });
});

describe("coveredBy: a unit that alerts by itself", () => {
  const now = 10 * 3_600_000;
  test("a backup_failed of the last 30 min covers docket-backup.service's failure; an older one or another cause does not", () => {
    expect(coveredBy("docket-backup.service", [{ cause: "backup_failed", createdAt: now - 60_000 }], now)).toEqual({ cause: "backup_failed", at: now - 60_000 });
    expect(coveredBy("docket-backup.service", [{ cause: "backup_failed", createdAt: now - COVERED_WITHIN_MS - 1 }], now)).toBeNull();
    expect(coveredBy("docket-backup.service", [{ cause: "verify_failed", createdAt: now }], now)).toBeNull();
    expect(coveredBy("docket-backup-verify.service", [{ cause: "verify_failed", createdAt: now }], now)).toEqual({ cause: "verify_failed", at: now });
  });
  test("the bot's and the containers' units are never covered", () => {
    expect(coveredBy("docket.service", [{ cause: "backup_failed", createdAt: now }, { cause: "unit_failed", createdAt: now }], now)).toBeNull();
  });
});
