/**
 * A first local-mode install in a safe order (issue 9 item 4), with recorders for systemctl and
 * compose and a stand-in for the local server and the cloud's logOut: image, server, healthy,
 * logOut, bot — and every fault on the way stops before the logOut.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fakeToken, repoRoot, testTempDir, writeExecutable } from "./helpers";
import { API_HASH, useInstallHarness } from "./install-harness";

const h = useInstallHarness();
const install = h.install;

describe("first local-mode install in a safe order (issue 9 item 4)", () => {
  const port = () => String(h.port);
  const local = (root: string, extra: string[]) => ["--root", root, "--mode", "local", "--api-id", "5", "--http-port", port(), "--bot-api-port", port(), "--download-budget", "16MB", ...extra];
  const hostEnv = (token: string, more: Record<string, string> = {}) => ({
    BOT_TOKEN: token, TELEGRAM_API_HASH: API_HASH, SYSTEMCTL: h.systemctl, DOCKER_COMPOSE: h.compose, TELEGRAM_CLOUD_ROOT: `http://127.0.0.1:${port()}`, ...more,
  });
  const calls = () => readFileSync(h.recLog, "utf8").trim().split("\n").map((l) => l.replace(/ -f \S+ --env-file \S+/, ""));

  it("without --logout-cloud: the server runs, the bot is not started, and the install says what to run; --logout-cloud then finishes", async () => {
    const root = testTempDir("nologout");
    const token = fakeToken();
    h.logOutToken = token;
    writeFileSync(h.recLog, "");
    const r = await install(local(root, []), hostEnv(token));
    expect(r.status).toBe(0);
    expect(calls()).toEqual([
      "systemctl daemon-reload",
      "compose -p docket pull bot-api",
      "systemctl enable docket-bot-api.service",
      "systemctl restart docket-bot-api.service",
      "systemctl enable docket.service docket-janitor.timer docket-backup.timer docket-backup-verify.timer",
      "systemctl start docket-janitor.timer docket-backup.timer docket-backup-verify.timer",
    ]);
    expect(r.stderr).toContain("skipped: starting docket.service: the bot must be logged out of api.telegram.org first (--logout-cloud)");
    expect(r.stderr).toContain("ACTION NEEDED: the bot is NOT started yet.");
    expect(r.stderr).toContain(`sudo ${repoRoot}/scripts/install.sh --logout-cloud`);
    expect(r.stderr).toContain("skipped: the bot was not started (logOut on api.telegram.org pending, see below)");
    expect(existsSync(join(root, "etc/docket/logout-cloud.pending"))).toBe(true);
    // A plain re-run still does not start it: the marker remembers.
    writeFileSync(h.recLog, "");
    const again = await install(["--root", root], hostEnv(token));
    expect(again.status).toBe(0);
    expect(calls()).not.toContain("systemctl restart docket.service");
    expect(again.stderr).toContain("ACTION NEEDED");
    // The command it printed: logOut after the server is healthy, then the bot.
    writeFileSync(h.recLog, "");
    const done = await install(["--root", root, "--logout-cloud"], hostEnv(token));
    expect(done.status).toBe(0);
    const c = calls();
    expect(c.indexOf("systemctl restart docket-bot-api.service")).toBeLessThan(c.indexOf("cloud logOut (token right)"));
    expect(c.indexOf("cloud logOut (token right)")).toBeLessThan(c.indexOf("systemctl restart docket.service"));
    expect(existsSync(join(root, "etc/docket/logout-cloud.pending"))).toBe(false);
    expect(done.stderr).not.toContain("ACTION NEEDED");
  });

  it("a failed image pull stops before the server, the logOut and the bot", async () => {
    const root = testTempDir("pullfail");
    const failing = join(testTempDir("bin"), "compose");
    writeExecutable(failing, `#!/bin/sh\nprintf 'compose %s\\n' "$*" >> '${h.recLog}'\ncase "$*" in *" pull "*) echo "manifest unknown" >&2; exit 1 ;; esac\n`);
    writeFileSync(h.recLog, "");
    const r = await install(local(root, ["--logout-cloud"]), hostEnv(fakeToken(), { DOCKER_COMPOSE: failing }));
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("pulling the local Bot API server image failed (see above): nothing was started and the bot was not logged out of the cloud");
    expect(calls()).toEqual(["systemctl daemon-reload", "compose -p docket pull bot-api"]);
  });

  it("a server that never answers stops before the logOut and the bot (exit 4)", async () => {
    const root = testTempDir("deadapi");
    const dead = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const deadPort = String(dead.port);
    dead.stop(true);
    writeFileSync(h.recLog, "");
    const r = await install(["--root", root, "--mode", "local", "--api-id", "5", "--http-port", port(), "--bot-api-port", deadPort, "--logout-cloud", "--download-budget", "16MB"], hostEnv(fakeToken(), { HEALTH_TIMEOUT: "1" }));
    expect(r.status).toBe(4);
    expect(r.stderr).toContain(`the local Bot API server does not answer on http://127.0.0.1:${deadPort}/ within 1s`);
    expect(r.stderr).toContain("The bot was not started and not logged out of the cloud.");
    expect(calls().filter((l) => /logOut|restart docket\.service/.test(l))).toEqual([]);
  });

  it("a refused logOut leaves the bot unstarted, says so without the token, and exits 5", async () => {
    const root = testTempDir("logoutfail");
    const token = fakeToken();
    h.logOutToken = token;
    h.logOutAnswer = () => Response.json({ ok: false, error_code: 401, description: "Unauthorized" }, { status: 401 });
    try {
      writeFileSync(h.recLog, "");
      const r = await install(local(root, ["--logout-cloud"]), hostEnv(token));
      expect(r.status).toBe(5);
      expect(r.stderr).toContain('error: logOut on api.telegram.org failed: {"ok":false,"error_code":401,"description":"Unauthorized"}');
      expect(r.stderr).toContain("The bot was not started: it runs on no server yet.");
      expect(r.stderr).not.toContain(token.split(":")[1]!);
      expect(calls()).not.toContain("systemctl restart docket.service");
      expect(existsSync(join(root, "etc/docket/logout-cloud.pending"))).toBe(true);
    } finally {
      h.logOutAnswer = () => Response.json({ ok: true, result: true });
    }
  });
});
