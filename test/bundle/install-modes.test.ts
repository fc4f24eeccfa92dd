/**
 * install.sh on an installed bot whose Bot API mode changes: the new server first, then the
 * move handed to `docket mode` (a recorder here; bot/cli/mode.ts is tested against emulators).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fakeToken, makeRecorder, testTempDir } from "./helpers";
import { API_HASH, treeWithoutLog, useInstallHarness } from "./install-harness";

const h = useInstallHarness();
const install = h.install;

describe("install.sh mode change of an installed bot (audit gap 8)", () => {
  it("keeps the old mode in docket.env, starts the new server, then hands the move to `docket mode` (no restart, no logOut of its own)", async () => {
    const root = testTempDir("switch");
    const first = await install(["--root", root, "--no-start", "--download-budget", "16MB"], { BOT_TOKEN: fakeToken() });
    expect(first.status).toBe(0);
    writeFileSync(h.recLog, "");
    const cli = makeRecorder(h.work, "docket", h.recLog);
    const r = await install(["--root", root, "--mode", "local", "--api-id", "9", "--logout-cloud", "--http-port", String(h.port), "--bot-api-port", String(h.port)], {
      TELEGRAM_API_HASH: API_HASH, SYSTEMCTL: h.systemctl, DOCKER_COMPOSE: h.compose, DOCKET_CLI: cli, HEALTH_TIMEOUT: "1",
    });
    expect(r.stderr).toContain("mode change cloud -> local");
    expect(r.status).toBe(0);
    const env = readFileSync(join(root, "etc/docket/docket.env"), "utf8");
    // `docket mode` (a recorder here) rewrites these two keys only once the new server answered.
    expect(env).toContain("BOT_API_MODE=cloud\n");
    expect(env).toContain("BOT_API_ROOT=https://api.telegram.org\n");
    expect(env).toContain("LOCAL_BOT_API_DIR=/var/lib/docket/bot-api\n");
    expect(r.stderr).toContain("logOut on api.telegram.org is done by `docket mode local`, after the service stopped");
    expect(r.stderr).not.toContain("curl logOut");
    const calls = readFileSync(h.recLog, "utf8").trim().split("\n").map((l) => l.replace(/ --env-file \S+/, "").replace(/ -f \S+/g, ""));
    expect(calls).toEqual([
      "systemctl daemon-reload",
      "compose -p docket pull bot-api",
      "systemctl enable docket-bot-api.service",
      "systemctl restart docket-bot-api.service",
      "systemctl enable docket.service docket-janitor.timer docket-backup.timer docket-backup-verify.timer",
      `docket mode local --env ${root}/etc/docket/docket.env --api-root http://127.0.0.1:${h.port}`,
      "systemctl start docket-janitor.timer docket-backup.timer docket-backup-verify.timer",
    ]);
  });

  it("local → cloud is handed to `docket mode cloud` as well (it closes on the local server)", async () => {
    const root = testTempDir("switchback");
    const first = await install(["--root", root, "--no-start", "--mode", "local", "--api-id", "9", "--download-budget", "16MB"], { BOT_TOKEN: fakeToken(), TELEGRAM_API_HASH: API_HASH });
    expect(first.status).toBe(0);
    writeFileSync(h.recLog, "");
    const cli = makeRecorder(h.work, "docket", h.recLog);
    const r = await install(["--root", root, "--mode", "cloud", "--http-port", String(h.port)], { SYSTEMCTL: h.systemctl, DOCKER_COMPOSE: h.compose, DOCKET_CLI: cli });
    expect(r.status).toBe(0);
    expect(readFileSync(join(root, "etc/docket/docket.env"), "utf8")).toContain("BOT_API_MODE=local\n");
    const calls = readFileSync(h.recLog, "utf8").trim().split("\n");
    expect(calls).toContain(`docket mode cloud --env ${root}/etc/docket/docket.env --api-root https://api.telegram.org`);
    expect(calls).not.toContain("systemctl restart docket.service");
    expect(calls.filter((l) => l.startsWith("compose "))).toEqual([]);
    expect(r.stderr).toContain("The local Bot API server still runs");
    // The server is a unit now: the stop command is systemctl's.
    expect(r.stderr).toContain("need it: systemctl disable --now docket-bot-api.service");
  });

  it("refuses a mode change with --no-start before changing anything", async () => {
    const root = testTempDir("switchnostart");
    expect((await install(["--root", root, "--no-start", "--download-budget", "16MB"], { BOT_TOKEN: fakeToken() })).status).toBe(0);
    const before = treeWithoutLog(root);
    const r = await install(["--root", root, "--mode", "local", "--api-id", "9", "--no-start"], { TELEGRAM_API_HASH: API_HASH });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("--no-start cannot change the Bot API mode");
    expect(treeWithoutLog(root)).toEqual(before);
  });
});
