/**
 * `docket mode cloud|local` against two emulators (a cloud server and a local
 * one): the Bot API steps in order (deleteWebhook, logOut before going local,
 * close before leaving a local server, getMe on the new one), the env file
 * rewritten only after the new server answered, systemctl stop/start around it,
 * and a clear refusal when a step fails.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { applyEnv, parseEnv } from "../../bot/cli/env-file.ts";
import { ModeSwitchError, switchMode } from "../../bot/cli/mode.ts";
import { startEmulator, type Emulator } from "../emulator/index.ts";

let dir: string;
let cloud: Emulator;
let local: Emulator;
let envFile: string;
let recorder: string;
const lines: string[] = [];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "docket-mode-"));
  cloud = await startEmulator({ mode: "cloud" });
  local = await startEmulator({ mode: "local", localDir: join(dir, "bot-api"), token: cloud.token });
  envFile = join(dir, "docket.env");
  writeFileSync(envFile, `# docket\nBOT_TOKEN=${cloud.token}\nBOT_API_MODE=cloud\nBOT_API_ROOT=${cloud.apiRoot}\nDATA_DIR=/var/lib/docket\n`, { mode: 0o600 });
  recorder = join(dir, "systemctl.log");
  writeFileSync(join(dir, "systemctl"), `#!/bin/sh\necho "$@" >> ${recorder}\n`);
  chmodSync(join(dir, "systemctl"), 0o755);
  lines.length = 0;
});
afterEach(async () => {
  await cloud.close();
  await local.close();
  rmSync(dir, { recursive: true, force: true });
});

const methods = (em: Emulator) => em.calls.map((c) => c.method);
const opts = (target: "cloud" | "local", apiRoot: string) => ({ target, envFile, apiRoot, systemctl: [join(dir, "systemctl")], out: (l: string) => void lines.push(l) });

describe("docket mode", () => {
  test("cloud → local: stop, deleteWebhook + logOut on the cloud, getMe on local, env rewritten, start", async () => {
    await switchMode(opts("local", local.apiRoot));
    expect(methods(cloud)).toEqual(["deleteWebhook", "logOut"]);
    expect(methods(local)).toEqual(["getMe"]);
    const env = parseEnv(readFileSync(envFile, "utf8"));
    expect([env.BOT_API_MODE, env.BOT_API_ROOT, env.DATA_DIR, env.BOT_TOKEN]).toEqual(["local", local.apiRoot, "/var/lib/docket", cloud.token]);
    expect(readFileSync(envFile, "utf8").startsWith("# docket\n")).toBe(true);
    expect(statSync(envFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(recorder, "utf8")).toBe("stop docket.service\nstart docket.service\n");
    // after logOut the cloud answers "Logged out", as Telegram does
    const r = await fetch(`${cloud.apiRoot}/bot${cloud.token}/getMe`);
    expect(await r.json()).toEqual({ ok: false, error_code: 400, description: "Logged out" });
  });

  test("local → cloud: close on the local server (not logOut), getMe on the cloud", async () => {
    writeFileSync(envFile, applyEnv(readFileSync(envFile, "utf8"), { BOT_API_MODE: "local", BOT_API_ROOT: local.apiRoot }));
    await switchMode(opts("cloud", cloud.apiRoot));
    expect(methods(local)).toEqual(["deleteWebhook", "close"]);
    expect(methods(cloud)).toEqual(["getMe"]);
    expect(parseEnv(readFileSync(envFile, "utf8")).BOT_API_MODE).toBe("cloud");
  });

  test("the new server does not answer: refused with a clear sentence, env file unchanged, service not started", async () => {
    const before = readFileSync(envFile, "utf8");
    await local.close();
    const err = await switchMode(opts("local", local.apiRoot)).catch((e) => e);
    expect(err).toBeInstanceOf(ModeSwitchError);
    expect(err.message).toMatch(/^step 4 failed \(getMe on http:\/\/127\.0\.0\.1:\d+\): network error/);
    expect(err.message).toContain("logged out of the cloud (for 10 minutes)");
    expect(err.message).not.toContain(cloud.token);
    expect(readFileSync(envFile, "utf8")).toBe(before);
    expect(readFileSync(recorder, "utf8")).toBe("stop docket.service\n");
  });

  test("a failing old server stops the switch before logOut; nothing changed", async () => {
    cloud.failNext("deleteWebhook", { error_code: 500, description: "Internal Server Error: restart" });
    const before = readFileSync(envFile, "utf8");
    const err = await switchMode(opts("local", local.apiRoot)).catch((e) => e);
    expect(err.message).toMatch(/^step 2 failed .*500 Internal Server Error: restart/);
    expect(methods(cloud)).not.toContain("logOut");
    expect(readFileSync(envFile, "utf8")).toBe(before);
  });

  test("--dry-run prints the plan and calls nothing", async () => {
    const plan = await switchMode({ ...opts("local", local.apiRoot), dryRun: true });
    expect(plan).toHaveLength(6);
    expect(lines[2]).toContain("logOut on");
    expect(cloud.calls).toHaveLength(0);
    expect(local.calls).toHaveLength(0);
  });
});
