/**
 * `docket mode cloud|local` against two emulators (a cloud server and a local one) that answer as
 * Telegram does (test/emulator/bot-instance.ts: close 429 in the first 10 minutes after a launch,
 * "Logged out" for 10 minutes after logOut), on one manual clock shared by the emulators and the
 * command, with a recording systemctl:
 * - the Bot API steps in order (deleteWebhook, logOut before going local, close before leaving a
 *   local server, getMe on the new one), the env file rewritten only after the new server answered;
 * - the new server (and a local server being left) probed first without the token, so a server that
 *   is down refuses the switch before the bot is stopped or logged out (audit of issue 6, gap 6);
 * - once the bot is stopped, any failed step rolls back: the env file's old text, the service
 *   started again in the old mode, and a sentence naming the step and the way out (issue 9 item 5);
 * - Telegram's windows refuse the switch before anything is stopped, or are waited out with
 *   --wait; --force leaves a dead local server;
 * - the `docket` command itself as a process: usage errors exit 2, an unreadable env file exits 1
 *   saying to run as root, a pending window exits 75 — never a stack trace (gap 9).
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Api } from "grammy";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { applyEnv, parseEnv } from "../../bot/env-file.ts";
import { ModeSwitchError, ModeWindowError, switchMode, type ModeOptions } from "../../bot/cli/mode.ts";
import { readModeState } from "../../bot/cli/mode-state.ts";
import { SERVER_WINDOW_MS } from "../emulator/bot-instance.ts";
import { manualClock, type ManualClock } from "../emulator/clock.ts";
import { asUser, NOBODY, reachableRepoRoot } from "../support/unprivileged";
import { startEmulator, type Emulator } from "../emulator/index.ts";

const MIN = 60_000;
let dir: string;
let clock: ManualClock;
let cloud: Emulator;
let local: Emulator;
let envFile: string;
let recorder: string;
const lines: string[] = [];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "docket-mode-"));
  clock = manualClock();
  cloud = await startEmulator({ mode: "cloud", now: clock.now });
  local = await startEmulator({ mode: "local", localDir: join(dir, "bot-api"), token: cloud.token, now: clock.now });
  envFile = join(dir, "docket.env");
  writeFileSync(envFile, `# docket\nBOT_TOKEN=${cloud.token}\nBOT_API_MODE=cloud\nBOT_API_ROOT=${cloud.apiRoot}\nDATA_DIR=/var/lib/docket\n`, { mode: 0o600 });
  recorder = join(dir, "systemctl.log");
  // Records every call; FAIL_START=N makes the N-th `start` fail (exit 1) once.
  writeFileSync(
    join(dir, "systemctl"),
    `#!/bin/sh\necho "$@" >> ${recorder}\nif [ "$1" = start ] && [ -n "$FAIL_START" ]; then n=$(grep -c '^start' ${recorder}); [ "$n" = "$FAIL_START" ] && { echo "Job for docket.service failed" >&2; exit 1; }; fi\nexit 0\n`,
  );
  chmodSync(join(dir, "systemctl"), 0o755);
  lines.length = 0;
});
afterEach(async () => {
  await cloud.close();
  await local.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Calls made after the last {@link forget} (the emulator's call log is read-only). */
const seen = new WeakMap<Emulator, number>();
const methods = (em: Emulator) => em.calls.slice(seen.get(em) ?? 0).map((c) => c.method);
const forget = (...ems: Emulator[]) => ems.forEach((em) => seen.set(em, em.calls.length));
const systemctlCalls = () => (existsSync(recorder) ? readFileSync(recorder, "utf8") : "");
const env = () => parseEnv(readFileSync(envFile, "utf8"));
const goLocal = () => writeFileSync(envFile, applyEnv(readFileSync(envFile, "utf8"), { BOT_API_MODE: "local", BOT_API_ROOT: local.apiRoot }));
const opts = (target: "cloud" | "local", apiRoot: string, more: Partial<ModeOptions> = {}): ModeOptions => ({
  target,
  envFile,
  apiRoot,
  systemctl: [join(dir, "systemctl")],
  out: (l: string) => void lines.push(l),
  now: clock.now,
  sleep: async (ms: number) => clock.advance(ms),
  ...more,
});
/** The bot running on the local server: its first call there launches it (at the clock's time). */
const launchOnLocal = () => new Api(cloud.token, { apiRoot: local.apiRoot }).getMe();

describe("docket mode: the Bot API steps", () => {
  test("cloud → local: stop, deleteWebhook + logOut on the cloud, getMe on local, env rewritten, start; the logOut is recorded", async () => {
    await switchMode(opts("local", local.apiRoot));
    expect(methods(cloud)).toEqual(["deleteWebhook", "logOut"]);
    expect(methods(local)).toEqual(["getMe"]);
    expect([env().BOT_API_MODE, env().BOT_API_ROOT, env().DATA_DIR, env().BOT_TOKEN]).toEqual(["local", local.apiRoot, "/var/lib/docket", cloud.token]);
    expect(readFileSync(envFile, "utf8").startsWith("# docket\n")).toBe(true);
    expect(statSync(envFile).mode & 0o777).toBe(0o600);
    expect(systemctlCalls()).toBe("stop docket.service\nstart docket.service\n");
    expect(readModeState(join(dir, "mode-state.json"))).toEqual({ logOut: { at: clock.now(), root: cloud.apiRoot }, launch: { at: clock.now(), root: local.apiRoot } });
    // after logOut the cloud answers "Logged out", as Telegram does
    const r = await fetch(`${cloud.apiRoot}/bot${cloud.token}/getMe`);
    expect(await r.json()).toEqual({ ok: false, error_code: 400, description: "Logged out" });
  });

  test("local → cloud: both servers probed, close on the local server (not logOut), getMe on the cloud", async () => {
    goLocal();
    await launchOnLocal();
    clock.advance(SERVER_WINDOW_MS);
    forget(local);
    await switchMode(opts("cloud", cloud.apiRoot));
    expect(methods(local)).toEqual(["deleteWebhook", "close"]);
    expect(methods(cloud)).toEqual(["getMe"]);
    expect(env().BOT_API_MODE).toBe("cloud");
    expect(lines.slice(0, 2).map((l) => l.replace(/\d+/g, "N"))).toEqual([
      "N. probe http://N.N.N.N:N/ (no token): the server answers",
      "N. probe http://N.N.N.N:N/ (no token): the server being left answers",
    ]);
  });

  test("the local server is down: refused before anything changed (no stop, no logOut, no call with the token)", async () => {
    const before = readFileSync(envFile, "utf8");
    await local.close();
    const err = await switchMode(opts("local", local.apiRoot)).catch((e) => e);
    expect(err).toBeInstanceOf(ModeSwitchError);
    expect(err.message).toMatch(/^step 1 failed \(probe http:\/\/127\.0\.0\.1:\d+\/ \(no token\): the server answers\): no answer from /);
    expect(err.message).toContain("Nothing was changed. Start the local server first");
    expect(err.message).not.toContain(cloud.token);
    expect(cloud.calls).toEqual([]);
    expect(existsSync(recorder)).toBe(false); // systemctl never called
    expect(readFileSync(envFile, "utf8")).toBe(before);
  });

  test("the probe needs a Bot API server: another HTTP service on the port is refused; the probe sends no token", async () => {
    const seen: string[] = [];
    const other = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (req) => (seen.push(new URL(req.url).pathname), new Response("<html>hello</html>", { status: 200 })) });
    try {
      const err = await switchMode(opts("local", `http://127.0.0.1:${other.port}`)).catch((e) => e);
      expect(err).toBeInstanceOf(ModeSwitchError);
      expect(err.message).toContain("answered HTTP 200");
      expect(err.message).toContain("not a Bot API server");
      expect(seen).toEqual(["/"]);
      expect(cloud.calls).toEqual([]);
    } finally {
      other.stop(true);
    }
    // The emulator answers GET / as telegram-bot-api does, and the probe leaves no call behind.
    const res = await fetch(`${local.apiRoot}/`);
    expect([res.status, await res.json()]).toEqual([404, { ok: false, error_code: 404, description: "Not Found" }]);
    expect(local.calls).toEqual([]);
  });

  test("--dry-run prints the plan and calls nothing", async () => {
    const plan = await switchMode(opts("local", local.apiRoot, { dryRun: true }));
    expect(plan).toHaveLength(7);
    expect(lines[0]).toContain("probe");
    expect(lines[3]).toContain("logOut on");
    expect(cloud.calls).toHaveLength(0);
    expect(local.calls).toHaveLength(0);
    expect(systemctlCalls()).toBe("");
  });
});

describe("docket mode: a failed step after the stop rolls back (issue 9 item 5)", () => {
  test("getMe fails on the local server after the logOut: env kept, the bot started again in cloud mode; the next run needs no second logOut", async () => {
    const before = readFileSync(envFile, "utf8");
    local.failNext("getMe", { error_code: 401, description: "Unauthorized: invalid api-id/api-hash" });
    const err = await switchMode(opts("local", local.apiRoot)).catch((e) => e);
    expect(err).toBeInstanceOf(ModeSwitchError);
    expect(err).not.toBeInstanceOf(ModeWindowError);
    expect(err.message).toMatch(/^step 5 failed \(getMe on http:\/\/127\.0\.0\.1:\d+\): 401 Unauthorized: invalid api-id\/api-hash\. Rolled back: docket\.service was started again in cloud mode, but the bot is logged out of the cloud: the cloud refuses it until 00:10:00 UTC and the bot connects by itself then\. To go on to local mode instead, make /);
    expect(err.message).toContain("run this command again (no second logOut is needed)");
    expect(err.message).not.toContain(cloud.token);
    expect(readFileSync(envFile, "utf8")).toBe(before);
    expect(systemctlCalls()).toBe("stop docket.service\nstart docket.service\n");
    // The local server fixed, the same command goes on: the cloud answers "Logged out", no second logOut.
    clock.advance(MIN);
    lines.length = 0;
    await switchMode(opts("local", local.apiRoot));
    expect(methods(cloud)).toEqual(["deleteWebhook", "logOut", "deleteWebhook"]);
    expect(lines).toContain(`  ${cloud.apiRoot} answers "Logged out": the bot is already logged out there`);
    expect(env().BOT_API_MODE).toBe("local");
  });

  test("a failing old server: rolled back before logOut, the bot runs again", async () => {
    cloud.failNext("deleteWebhook", { error_code: 500, description: "Internal Server Error: restart" });
    const before = readFileSync(envFile, "utf8");
    const err = await switchMode(opts("local", local.apiRoot)).catch((e) => e);
    expect(err.message).toMatch(/^step 3 failed \(deleteWebhook on .*\): 500 Internal Server Error: restart\. Rolled back: docket\.service was started again in cloud mode\. Nothing else was changed\. Check /);
    expect(methods(cloud)).toEqual(["deleteWebhook"]); // refused by the server: no logOut after it
    expect(readFileSync(envFile, "utf8")).toBe(before);
    expect(systemctlCalls()).toBe("stop docket.service\nstart docket.service\n");
  });

  test("the env file cannot be written: the bot is started again in the old mode", async () => {
    // The temp file of the atomic write is taken by a directory: the write fails (even as root).
    mkdirSync(`${envFile}.tmp-${process.pid}`);
    const before = readFileSync(envFile, "utf8");
    const err = await switchMode(opts("local", local.apiRoot)).catch((e) => e);
    expect(err.message).toMatch(/^step 6 failed \(write BOT_API_MODE=local .*\): EISDIR.*\. Rolled back: docket\.service was started again in cloud mode, but the bot is logged out of the cloud: the cloud refuses it until 00:10:00 UTC and the bot connects by itself then\. Free space or fix the permissions of /);
    expect(readFileSync(envFile, "utf8")).toBe(before);
    expect(systemctlCalls()).toBe("stop docket.service\nstart docket.service\n");
  });

  test("the service fails to start in the new mode: the env file gets its old text and the old mode starts", async () => {
    const before = readFileSync(envFile, "utf8");
    const err = await switchMode(opts("local", local.apiRoot, { systemctl: ["env", "FAIL_START=1", join(dir, "systemctl")] })).catch((e) => e);
    expect(err.message).toMatch(/^step 7 failed \(start docket\.service\): .*exited 1: Job for docket\.service failed\. Rolled back: .*docket\.env has its old text again; docket\.service was started again in cloud mode, but the bot is logged out of the cloud: .* Look at journalctl -u docket\.service/);
    expect(readFileSync(envFile, "utf8")).toBe(before);
    expect(systemctlCalls()).toBe("stop docket.service\nstart docket.service\nstart docket.service\n");
  });
});

describe("docket mode: Telegram's 10-minute windows", () => {
  test("close answers 429 after a late launch: rolled back, recorded; the next run refuses before stopping; --wait waits and switches", async () => {
    goLocal();
    clock.advance(11 * MIN); // the local server has been up 11 minutes when the bot is launched on it
    await launchOnLocal();
    forget(local);
    clock.advance(2 * MIN);
    const err = await switchMode(opts("cloud", cloud.apiRoot)).catch((e) => e);
    expect(err).toBeInstanceOf(ModeWindowError);
    expect(err.message).toMatch(/^step 5 failed \(close on http:\/\/127\.0\.0\.1:\d+\): 429 Too Many Requests: retry after 480\. Rolled back: docket\.service was started again in local mode\. Telegram: a local Bot API server answers close with 429 during the first 10 minutes after the bot was launched on it \(Bot API: close\)\. Run this command again after 00:21:00 UTC, or add --wait\.$/);
    expect(err.until).toBe(Date.UTC(2026, 0, 1, 0, 21));
    expect(env().BOT_API_MODE).toBe("local");
    expect(systemctlCalls()).toBe("stop docket.service\nstart docket.service\n");
    expect(methods(cloud)).toEqual([]);

    // The same command again: refused before anything is stopped or called.
    writeFileSync(recorder, "");
    forget(local);
    const again = await switchMode(opts("cloud", cloud.apiRoot)).catch((e) => e);
    expect(again).toBeInstanceOf(ModeWindowError);
    expect(again.message).toBe(
      "refused before anything was changed: a local Bot API server answers close with 429 during the first 10 minutes after the bot was launched on it (Bot API: close); not before 00:21:00 UTC (in 480 s). The bot keeps running in local mode. Run this command again then, or add --wait to wait here.",
    );
    expect(systemctlCalls()).toBe("");
    expect(methods(local)).toEqual([]);

    // --wait: waits (the bot keeps running), then the switch goes through.
    lines.length = 0;
    await switchMode(opts("cloud", cloud.apiRoot, { wait: true }));
    expect(lines[0]).toBe("waiting 480 s, until 00:21:00 UTC, for Telegram's window; the bot keeps running meanwhile");
    expect(clock.now()).toBe(Date.UTC(2026, 0, 1, 0, 21));
    expect(methods(local)).toEqual(["deleteWebhook", "close"]);
    expect(methods(cloud)).toEqual(["getMe"]);
    expect(env().BOT_API_MODE).toBe("cloud");
    expect(readModeState(join(dir, "mode-state.json")).launch).toBeUndefined();
  });

  test("back to the cloud within 10 minutes of docket's logOut: refused before stopping; --wait waits for the cloud", async () => {
    await switchMode(opts("local", local.apiRoot));
    const loggedOutAt = clock.now();
    clock.advance(3 * MIN);
    writeFileSync(recorder, "");
    forget(cloud, local);
    const err = await switchMode(opts("cloud", cloud.apiRoot)).catch((e) => e);
    expect(err).toBeInstanceOf(ModeWindowError);
    expect(err.until).toBe(loggedOutAt + 10 * MIN);
    expect(err.message).toContain("not before 00:10:00 UTC (in 420 s). The bot keeps running in local mode.");
    expect(systemctlCalls()).toBe("");
    expect([methods(cloud), methods(local)]).toEqual([[], []]);
    await switchMode(opts("cloud", cloud.apiRoot, { wait: true }));
    expect(clock.now()).toBe(loggedOutAt + 10 * MIN);
    expect(methods(cloud)).toEqual(["getMe"]);
    expect(env().BOT_API_MODE).toBe("cloud");
  });

  test("a logOut docket did not record: the cloud's refusal after close is rolled back onto the local server", async () => {
    goLocal();
    await launchOnLocal();
    await new Api(cloud.token, { apiRoot: cloud.apiRoot }).logOut(); // e.g. install.sh --logout-cloud
    forget(cloud);
    clock.advance(2 * MIN);
    const err = await switchMode(opts("cloud", cloud.apiRoot)).catch((e) => e);
    expect(err).toBeInstanceOf(ModeWindowError);
    expect(err.message).toMatch(/^step 6 failed \(getMe on .*\): 400 Logged out\. Rolled back: docket\.service was started again in local mode\. Telegram: the cloud Bot API refuses the bot for 10 minutes after a logOut \(Bot API: logOut\)\. Run this command again after 00:12:00 UTC, or add --wait\.$/);
    expect(env().BOT_API_MODE).toBe("local");
    expect(systemctlCalls()).toBe("stop docket.service\nstart docket.service\n");
    // The restart on the local server is a new launch there: recorded for the next run.
    expect(readModeState(join(dir, "mode-state.json")).launch).toEqual({ at: clock.now(), root: local.apiRoot });
  });

  test("--dry-run names a pending window", async () => {
    await switchMode(opts("local", local.apiRoot));
    lines.length = 0;
    await switchMode(opts("cloud", cloud.apiRoot, { dryRun: true }));
    expect(lines.at(-1)).toMatch(/^\[dry-run\] note: a real run is refused until 00:10:00 UTC: .* \(--wait waits\)$/);
  });
});

describe("docket mode --force: off a dead local server", () => {
  test("without --force a dead local server refuses the switch before anything; with it the bot moves to the cloud", async () => {
    goLocal();
    await local.close();
    const before = readFileSync(envFile, "utf8");
    const err = await switchMode(opts("cloud", cloud.apiRoot)).catch((e) => e);
    expect(err.message).toMatch(/^step 2 failed \(probe http:.*the server being left answers\): no answer from .*\. Nothing was changed\. close needs the local server: .* add --force to leave it without deleteWebhook and close\.$/);
    expect(readFileSync(envFile, "utf8")).toBe(before);
    expect(systemctlCalls()).toBe("");

    await switchMode(opts("cloud", cloud.apiRoot, { force: true }));
    expect(env().BOT_API_MODE).toBe("cloud");
    expect(methods(cloud)).toEqual(["getMe"]);
    expect(systemctlCalls()).toBe("stop docket.service\nstart docket.service\n");
    expect(lines.join("\n")).toContain("was left without close (--force). If that server comes back, it may serve this bot too");
  });

  test("--force is refused when the bot is not on a local server", async () => {
    const err = await switchMode(opts("local", local.apiRoot, { force: true })).catch((e) => e);
    expect(err.message).toBe("--force only leaves a local Bot API server that does not answer; the bot is in cloud mode. Nothing was changed.");
    expect(cloud.calls).toEqual([]);
  });
});

describe("the docket command (process)", () => {
  /** Run `bun bot/cli/main.ts ARGS`, optionally under `prefix` (e.g. setpriv to drop root), from checkout `root`. */
  const cli = (args: string[], env: Record<string, string> = {}, prefix: string[] = [], root = join(import.meta.dirname, "../..")) => {
    const p = Bun.spawnSync([...prefix, process.execPath, "--no-env-file", join(root, "bot/cli/main.ts"), ...args], {
      cwd: root,
      env: { ...process.env, DOCKET_ENV_FILE: envFile, ...env },
      stdout: "pipe",
      stderr: "pipe",
      timeout: 30_000,
    });
    return { status: p.exitCode, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
  };

  test("an unknown option or a wrong command: usage, exit 2, no stack trace", () => {
    for (const args of [["mode", "local", "--frobnicate"], ["mode", "local", "--api-root"], ["mode", "mars"], ["frobnicate"]]) {
      const r = cli(args);
      expect(r.status, args.join(" ")).toBe(2);
      expect(r.stderr).toContain("usage: docket mode cloud|local");
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    expect(cli(["mode", "local", "--frobnicate"]).stderr).toContain("--frobnicate");
  });

  test("an env file it cannot read: exit 1 with one sentence (root-only file → sudo)", () => {
    const missing = cli(["mode", "local"], { DOCKET_ENV_FILE: join(dir, "nope.env") });
    expect(missing.status).toBe(1);
    expect(missing.stderr).toBe(`docket mode: ${join(dir, "nope.env")} does not exist: is docket installed (scripts/install.sh)? Another file: --env FILE\n`);
    // The operator's case: not root, the file is root's with mode 0600. Under root (CI
    // containers) drop to nobody with setpriv, as root would read any file.
    const asRoot = process.getuid?.() === 0;
    if (asRoot && (!Bun.which("setpriv") || reachableRepoRoot() === null)) return void console.warn("[test/cli] root without setpriv or a reachable checkout: the permission case is not run");
    const denied = cli(["mode", "local"], { HOME: tmpdir() }, asRoot ? asUser(NOBODY) : [], asRoot ? reachableRepoRoot()! : undefined);
    expect(denied.stderr).toContain("permission denied (it is root-only, mode 0600); run as root: sudo docket");
    expect(denied.stderr).not.toMatch(/\n\s+at /);
    expect(denied.status).toBe(1);
  });

  test("--dry-run through the command prints the plan and exits 0", () => {
    const r = cli(["mode", "local", "--dry-run", "--api-root", local.apiRoot]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("[dry-run] 1. probe");
    expect(r.stdout).toContain("[dry-run] 4. logOut on");
    expect(cloud.calls).toEqual([]);
  });

  test("a pending window exits 75 with the sentence, before anything is stopped", () => {
    goLocal();
    writeFileSync(join(dir, "mode-state.json"), JSON.stringify({ launch: { at: Date.now() - 2 * MIN, root: local.apiRoot } }));
    const r = cli(["mode", "cloud", "--api-root", cloud.apiRoot], { SYSTEMCTL: join(dir, "systemctl") });
    expect(r.status).toBe(75);
    expect(r.stderr).toMatch(/^docket mode: refused before anything was changed: .*Run this command again then, or add --wait to wait here\.\n$/);
    expect(systemctlCalls()).toBe("");
    expect([methods(cloud), methods(local)]).toEqual([[], []]);
  });
});
