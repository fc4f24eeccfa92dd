/**
 * The systemd units: `systemd-analyze verify` in a throwaway root, and the directives the
 * appliance relies on (sandbox, graceful stop, failure hook, timers).
 *
 * How verify is made to work here: `systemd-analyze verify --root=DIR` reads units and checks
 * executables under DIR. The test copies the host's /usr/lib/systemd/system (targets such as
 * sysinit.target must resolve) into DIR, installs the units into DIR/etc/systemd/system, and
 * puts stub executables at the paths the units name (/usr/local/bin/bun, the backup script,
 * the operator hook, /usr/bin/test). Nothing outside DIR is touched.
 */
import { ABORT_GRACE_MS, DRAIN_MS, INTAKE_STOP_MS, OUTBOX_CLOSE_MS, SHUTDOWN_BOUND_MS } from "../../bot/shutdown.ts";
import { EXIT_BAD_CONFIG, EXIT_TOKEN_REFUSED, NO_RESTART_STATUSES } from "../../bot/ops/exit-codes.ts";
import { cpSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTempDir, prepareVerifyRoot, removeDir, repoRoot, runCmd, writeExecutable } from "./helpers";
import { toolReady } from "../support/tools";

const unitsDir = join(repoRoot, "systemd");
const unitNames = readdirSync(unitsDir).filter((n) => /\.(service|timer)$/.test(n)).sort();

/** Parse a unit file into section → key → values (repeated keys keep every value in order). */
function parseUnit(text: string): Map<string, Map<string, string[]>> {
  const sections = new Map<string, Map<string, string[]>>();
  let current = new Map<string, string[]>();
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const sec = /^\[(.+)\]$/.exec(line);
    if (sec) {
      current = new Map();
      sections.set(sec[1]!, current);
      continue;
    }
    const eq = line.indexOf("=");
    const key = line.slice(0, eq);
    current.set(key, [...(current.get(key) ?? []), line.slice(eq + 1)]);
  }
  return sections;
}

const parsed = new Map<string, Map<string, Map<string, string[]>>>();

/** The last value of `key` in `section` (systemd's rule for single-valued settings); each unit is read once. */
function get(unit: string, section: string, key: string): string | undefined {
  let sections = parsed.get(unit);
  if (!sections) parsed.set(unit, (sections = parseUnit(readFileSync(join(unitsDir, unit), "utf8"))));
  return sections.get(section)?.get(key)?.at(-1);
}

/** Every value of a repeated `key` in `section`, in order (EnvironmentFile= may be given twice). */
function all(unit: string, section: string, key: string): string[] {
  get(unit, section, key);
  return parsed.get(unit)!.get(section)?.get(key) ?? [];
}

/** `key` → last value for each key of `expected`, to compare a run of directives in one assertion. */
function pick(unit: string, section: string, expected: Record<string, string>): Record<string, string | undefined> {
  return Object.fromEntries(Object.keys(expected).map((k) => [k, get(unit, section, k)]));
}

const ready = toolReady("systemd-analyze");
let root = "";
/** OnFailure= of every docket unit: the alert to the admins (issue 10 item 3) and the operator's hook. */
const ON_FAILURE = "docket-failure@%n.service docket-alert@%n.service";

beforeAll(() => {
  root = makeTempDir("systemd-root");
  prepareVerifyRoot(root);
  for (const n of unitNames) cpSync(join(unitsDir, n), join(root, "etc/systemd/system", n));
});
afterAll(() => removeDir(root));

describe.skipIf(!ready)("systemd-analyze verify", () => {
  it("accepts every unit with no warning at all", () => {
    expect(unitNames).toEqual([
      "docket-alert@.service",
      "docket-backup-verify.service",
      "docket-backup-verify.timer",
      "docket-backup.service",
      "docket-backup.timer",
      "docket-bot-api.service",
      "docket-failure@.service",
      "docket-janitor.service",
      "docket-janitor.timer",
      "docket-nginx.service",
      "docket.service",
    ]);
    const r = runCmd(["systemd-analyze", "verify", `--root=${root}`, ...unitNames]);
    expect(r.stderr + r.stdout).toBe("");
    expect(r.status).toBe(0);
  });

  it("fails when the executable a unit names is missing (the check can fail)", () => {
    rmSync(join(root, "usr/local/bin/bun"));
    try {
      const r = runCmd(["systemd-analyze", "verify", `--root=${root}`, "docket.service"]);
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain("/usr/local/bin/bun");
    } finally {
      writeExecutable(join(root, "usr/local/bin/bun"), "#!/bin/sh\nexit 0\n");
    }
  });
});

describe.skipIf(!toolReady("systemctl"))("systemctl enable (offline, on the throwaway root)", () => {
  it("a container unit is wanted by the bot and by dockerd: a dockerd stopped and started again brings it back", () => {
    for (const d of ["docket.service.wants", "docker.service.wants"]) rmSync(join(root, "etc/systemd/system", d), { recursive: true, force: true });
    const r = runCmd(["systemctl", `--root=${root}`, "enable", "docket-bot-api.service", "docket-nginx.service"]);
    expect(r.status).toBe(0);
    const wants = (d: string) => readdirSync(join(root, "etc/systemd/system", d)).sort();
    expect(wants("docket.service.wants")).toEqual(["docket-bot-api.service", "docket-nginx.service"]);
    expect(wants("docker.service.wants")).toEqual(["docket-bot-api.service", "docket-nginx.service"]);
  });
});

/**
 * The bound holds only while the shutdown code keeps its shape: main.ts races intake against
 * INTAKE_STOP_MS and closes with DRAIN_MS; app.close waits twice with its deadline (engine.stop,
 * then the pending deliveries), then closes the outbox (OUTBOX_CLOSE_MS).
 */
function checkShutdownShape(): void {
  const main = readFileSync(join(repoRoot, "bot/main.ts"), "utf8");
  const app = readFileSync(join(repoRoot, "bot/app.ts"), "utf8");
  expect(main).toContain("Bun.sleep(INTAKE_STOP_MS)");
  expect(main).toContain("app.close(DRAIN_MS)");
  expect(app).toContain("shutdownTimeoutMs: OUTBOX_CLOSE_MS");
  const closeBody = /async close\(deadlineMs[^)]*\)\s*\{([\s\S]*?)\n\s{4}\}/.exec(app)?.[1];
  expect(closeBody).toContain("engine.stop(deadlineMs)");
  expect(closeBody).toContain("Bun.sleep(deadlineMs)");
  expect(closeBody).toContain("status.close()");
}

describe("graceful stop", () => {
  it("TimeoutStopSec exceeds the bot's own shutdown bound by at least 10 s (SIGKILL never cuts the drain)", () => {
    checkShutdownShape();
    expect(SHUTDOWN_BOUND_MS).toBe(INTAKE_STOP_MS + 2 * DRAIN_MS + ABORT_GRACE_MS + OUTBOX_CLOSE_MS);
    const bound = SHUTDOWN_BOUND_MS;
    const stop = get("docket.service", "Service", "TimeoutStopSec")!;
    expect(stop).toMatch(/^\d+$/);
    expect(Number(stop) * 1000).toBeGreaterThanOrEqual(bound + 10_000);
  });
});

describe("unit directives", () => {
  it("docket.service runs the bot as docket, sandboxed, with a graceful stop", () => {
    const s = "docket.service";
    const service = {
      User: "docket",
      SupplementaryGroups: "docket-botapi",
      ExecStart: "/usr/local/bin/bun bot/main.ts",
      WorkingDirectory: "/opt/docket/current",
      EnvironmentFile: "/etc/docket/docket.env",
      NoNewPrivileges: "yes",
      ProtectSystem: "strict",
      PrivateTmp: "yes",
      Restart: "on-failure",
      RestartPreventExitStatus: NO_RESTART_STATUSES.join(" "),
      KillSignal: "SIGTERM",
      StandardOutput: "journal",
      ReadOnlyPaths: "-/var/lib/docket/bot-api",
    };
    expect(pick(s, "Service", service)).toEqual(service);
    expect(get(s, "Unit", "OnFailure")).toBe(ON_FAILURE);
    const rw = get(s, "Service", "ReadWritePaths")!.split(/\s+/).sort();
    expect(rw).toEqual(["/var/lib/docket/db", "/var/lib/docket/downloads", "/var/lib/docket/results", "/var/lib/docket/work"]);
  });

  it("the bot is never restarted on a bad config (2) or a refused token (78): CONTRACTS.md §3", () => {
    expect(NO_RESTART_STATUSES).toEqual([EXIT_BAD_CONFIG, EXIT_TOKEN_REFUSED]);
    expect([EXIT_BAD_CONFIG, EXIT_TOKEN_REFUSED]).toEqual([2, 78]);
    expect(get("docket.service", "Service", "RestartPreventExitStatus")).toBe("2 78");
  });

  it("janitor and backup are timer-driven one-shots that report failures", () => {
    expect(get("docket-janitor.service", "Service", "Type")).toBe("oneshot");
    expect(get("docket-janitor.service", "Service", "ExecStart")).toBe("/usr/local/bin/bun bot/janitor/cli.ts");
    expect(get("docket-backup.service", "Service", "ExecStart")).toBe("/opt/docket/current/scripts/backup.sh $BACKUP_ARGS");
    expect(get("docket-backup.service", "Service", "ReadWritePaths")).toBe("/var/lib/docket/db /var/lib/docket/backups");
    for (const u of ["docket-janitor.service", "docket-backup.service"]) {
      expect(get(u, "Unit", "OnFailure")).toBe(ON_FAILURE);
    }
    expect(get("docket-janitor.timer", "Timer", "OnCalendar")).toBe("hourly");
    expect(get("docket-backup.timer", "Timer", "Persistent")).toBe("true");
    expect(get("docket-backup.timer", "Install", "WantedBy")).toBe("timers.target");
  });

  it("the backup and the weekly restore drill get restic's settings and password, the bot never (issue 10 items 4, 5)", () => {
    const service = {
      Type: "oneshot",
      User: "docket",
      ExecStart: "/usr/local/bin/bun bot/cli/main.ts backup verify",
      WorkingDirectory: "/opt/docket/current",
      ReadWritePaths: "/var/lib/docket/db /var/lib/docket/backups",
      NoNewPrivileges: "yes",
      ProtectSystem: "strict",
    };
    expect(pick("docket-backup-verify.service", "Service", service)).toEqual(service);
    expect(get("docket-backup-verify.service", "Unit", "OnFailure")).toBe(ON_FAILURE);
    for (const u of ["docket-backup.service", "docket-backup-verify.service"]) {
      expect(all(u, "Service", "EnvironmentFile")).toEqual(["/etc/docket/docket.env", "-/etc/docket/restic.env"]);
      expect(pick(u, "Service", { LoadCredential: "", SetCredential: "", CacheDirectory: "" })).toEqual({
        LoadCredential: "restic-password:/etc/docket/restic-password",
        SetCredential: "restic-password:\\x00",
        CacheDirectory: "docket",
      });
    }
    for (const u of ["docket.service", "docket-janitor.service"]) {
      expect(get(u, "Service", "LoadCredential")).toBeUndefined();
      expect(all(u, "Service", "EnvironmentFile")).toEqual(["/etc/docket/docket.env"]);
    }
    expect(pick("docket-backup-verify.timer", "Timer", { OnCalendar: "", Persistent: "" })).toEqual({ OnCalendar: "Sun *-*-* 05:00:00", Persistent: "true" });
    expect(get("docket-backup-verify.timer", "Install", "WantedBy")).toBe("timers.target");
  });

  it("the containers run under systemd: healthy before the bot starts, their failures reach the same hook (issue 9 item 8)", () => {
    for (const [u, svc] of [["docket-bot-api.service", "bot-api"], ["docket-nginx.service", "nginx"]] as const) {
      const unit = {
        Requires: "docker.service",
        Before: "docket.service",
        OnFailure: ON_FAILURE,
        StartLimitBurst: "5",
      };
      expect(pick(u, "Unit", unit)).toEqual(unit);
      const service = {
        ExecStartPre: `/opt/docket/current/scripts/container.sh start ${svc}`,
        ExecStart: `/opt/docket/current/scripts/container.sh watch ${svc}`,
        ExecStop: `/opt/docket/current/scripts/container.sh stop ${svc}`,
        Restart: "on-failure",
      };
      expect(pick(u, "Service", service)).toEqual(service);
      // Enabled means: starting the bot starts it, and so does dockerd coming back (install.sh enables it in its mode only).
      expect(get(u, "Install", "WantedBy")).toBe("docket.service docker.service");
    }
    expect(get("docket-nginx.service", "Service", "ExecReload")).toBe("/opt/docket/current/scripts/container.sh reload nginx");
    // The bot is ordered after both, so it starts once the server is healthy (the unit is active only then).
    expect(get("docket.service", "Unit", "After")!.split(/\s+/)).toEqual(expect.arrayContaining(["docket-bot-api.service", "docket-nginx.service"]));
    // A container's failure never stops the bot: no Requires=/BindsTo= on them.
    expect([get("docket.service", "Unit", "Requires"), get("docket.service", "Unit", "BindsTo")]).toEqual([undefined, undefined]);
  });

  it("every unit that can fail starts both the alert to the admins and the operator's hook; neither of those has one", () => {
    const failing = unitNames.filter((n) => n.endsWith(".service") && !n.includes("@"));
    expect(failing.map((u) => [u, get(u, "Unit", "OnFailure")])).toEqual(failing.map((u) => [u, ON_FAILURE]));
    expect([get("docket-alert@.service", "Unit", "OnFailure"), get("docket-failure@.service", "Unit", "OnFailure")]).toEqual([undefined, undefined]);
  });

  it("the alert unit runs docket notify as the bot's user, writing only the database (issue 10 item 3)", () => {
    const service = {
      Type: "oneshot",
      User: "docket",
      Group: "docket",
      EnvironmentFile: "/etc/docket/docket.env",
      WorkingDirectory: "/opt/docket/current",
      ExecStart: "/usr/local/bin/bun bot/cli/main.ts notify unit_failed --unit %i",
      ReadWritePaths: "/var/lib/docket/db",
      NoNewPrivileges: "yes",
      ProtectSystem: "strict",
      CapabilityBoundingSet: "",
    };
    expect(pick("docket-alert@.service", "Service", service)).toEqual(service);
    expect(get("docket-alert@.service", "Service", "LoadCredential")).toBeUndefined();
  });

  it("the failure unit runs the operator hook only when it exists", () => {
    const u = "docket-failure@.service";
    expect(get(u, "Service", "ExecCondition")).toBe("/usr/bin/test -x /etc/docket/hooks/on-failure");
    expect(get(u, "Service", "ExecStart")).toBe("/etc/docket/hooks/on-failure %i");
    expect(get(u, "Service", "Environment")).toBe("FAILED_UNIT=%i");
  });
});
