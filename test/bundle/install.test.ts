/**
 * scripts/install.sh and scripts/disk-layout.sh, run for real into throwaway roots.
 *
 * Host-level commands are replaced the documented way: SYSTEMCTL and DOCKER_COMPOSE point at
 * recorder scripts (each call is appended to a log), apt/npm/accounts are skipped by --root,
 * and the final health check talks to a Bun.serve on 127.0.0.1 standing in for the bot's
 * /healthz. Nothing outside the temp directories is changed (the dry run proves it).
 */
import { cpSync, existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { fakeToken, modeOf, repoRoot, runCmd, runCmdAsync, snapshotTree, testTempDir } from "./helpers";
import { toolReady } from "../support/tools";
import { API_HASH, HOOK_URL, accountId, expectComposeServices, placeTls, tlsRoot, treeWithoutLog, useInstallHarness } from "./install-harness";

const STEPS = [
  "preflight",
  "system packages",
  "accounts",
  "configuration in /etc/docket",
  "disk layout",
  "application into /opt/docket",
  "systemd units",
  "local Bot API server",
  "webhook nginx",
  "start units",
  "health check",
  "next steps",
];
const h = useInstallHarness();
const install = h.install;

describe("install.sh --dry-run", () => {
  it("prints every step and changes nothing in the root", async () => {
    const root = testTempDir("dry");
    const token = fakeToken();
    placeTls(root);
    const before = snapshotTree(root);
    const r = await install(["--dry-run", "--root", root, "--mode", "local", "--api-id", "42", "--webhook-url", HOOK_URL, "--download-budget", "16MB"], {
      BOT_TOKEN: token,
      TELEGRAM_API_HASH: API_HASH,
      SYSTEMCTL: h.systemctl,
      DOCKER_COMPOSE: h.compose,
    });
    expect(r.status).toBe(0);
    const out = r.stdout + r.stderr;
    STEPS.forEach((title, i) => expect(out).toContain(`==> step ${i + 1}: ${title}`));
    expect(out).toContain("==> step 5.1: directories by purpose");
    expect(out).toContain(`+ write ${root}/etc/docket/docket.env (mode 0600)`);
    expect(out).toContain("+ mkdir -p " + root + "/var/lib/docket/db");
    expect(out).toContain(`+ ${h.systemctl} daemon-reload`);
    expect(out).toContain("dry run: nothing was changed");
    expect(out).toMatch(/docket \S+ would be installed \(local mode\)/);
    expect(out).not.toContain(" is installed");
    expect(out).not.toContain("the real run would stop");
    expect(out).not.toContain(token);
    expect(snapshotTree(root)).toEqual(before);
    expect(existsSync(h.recLog) ? readFileSync(h.recLog, "utf8") : "").toBe("");
  });

  it("prints exactly the steps and commands the real run then prints (issue 9 item 12)", async () => {
    const root = tlsRoot("dryreal");
    const args = ["--root", root, "--mode", "local", "--api-id", "42", "--webhook-url", HOOK_URL, "--no-start", "--download-budget", "16MB"];
    const env = { BOT_TOKEN: fakeToken(), TELEGRAM_API_HASH: API_HASH, DOCKER_COMPOSE: h.compose };
    const dry = await install(["--dry-run", ...args], env);
    expect(dry.status).toBe(0);
    const real = await install(args, env);
    expect(real.status).toBe(0);
    // The free space of the disk moves between the runs (other processes write); nothing else may differ.
    const lines = (out: string) =>
      out.split("\n").map((l) => l.replace(/ --dry-run$/, "").replace(" would be installed ", " is installed ").replace(/; [\d.]+ \w+ available$/, "; … available")).filter((l) => l !== "dry run: nothing was changed" && !l.startsWith("log: "));
    expect(lines(dry.stderr)).toEqual(lines(real.stderr));
    // The accounts the real run creates are named in both, and chowned by name in both.
    expect(real.stderr).toContain("+ useradd --prefix");
    expect(real.stderr).toContain(`+ chown docket-botapi:docket-botapi ${root}/var/lib/docket/bot-api`);
    expect(dry.stderr).not.toContain("skipped: chown");
  });

  it("without --root touches nothing on the host either", async () => {
    const hostPaths = ["/etc/docket", "/opt/docket", "/var/lib/docket", "/etc/systemd/system/docket.service"];
    const existed = hostPaths.map((p) => existsSync(p));
    const r = await install(["--dry-run", "--skip-packages", "--no-start", "--download-budget", "16MB"], { BOT_TOKEN: fakeToken() });
    expect(r.status).toBe(0);
    expect(r.stderr).toContain("==> step 12: next steps");
    expect(hostPaths.map((p) => existsSync(p))).toEqual(existed);
  });
});

describe("install.sh --dry-run checks the inputs the real run needs (newcomer item 13)", () => {
  it("without a token, api_hash or api_id it reports each, says 'would be installed' and exits 1, as the real run fails", async () => {
    const root = testTempDir("drymissing");
    const before = snapshotTree(root);
    const args = ["--root", root, "--mode", "local", "--no-start", "--download-budget", "16MB"];
    const dry = await install(["--dry-run", ...args]);
    expect(dry.stderr).toContain("==> step 12: next steps");
    expect(dry.stderr).toMatch(/docket \S+ would be installed \(local mode\)/);
    expect(dry.stderr).toContain("dry run: the real run would stop with:\n  - no bot token");
    expect(dry.stderr).toContain("  - local mode needs api_hash");
    expect(dry.stderr).toContain("  - local mode needs --api-id");
    expect(dry.stderr).not.toContain("prompt (skipped in dry-run)");
    expect(dry.status).toBe(1);
    expect(snapshotTree(root)).toEqual(before);
    // The real run with the same inputs stops at the first of them.
    const real = await install(args);
    expect(real.status).toBe(1);
    expect(real.stderr).toContain("error: no bot token");
    expect(existsSync(join(root, "etc/docket/docket.env"))).toBe(false);
  });

  it("a missing --token-file or --api-hash-file is named, in a dry run too", async () => {
    const root = testTempDir("drynofile");
    const t = await install(["--dry-run", "--root", root, "--token-file", join(root, "nope"), "--download-budget", "16MB"]);
    expect(t.status).toBe(1);
    expect(t.stderr).toContain(`--token-file ${join(root, "nope")} is missing or not readable`);
    const h = await install(["--dry-run", "--root", root, "--mode", "local", "--api-id", "1", "--api-hash-file", join(root, "nohash"), "--download-budget", "16MB"], { BOT_TOKEN: fakeToken() });
    expect(h.status).toBe(1);
    expect(h.stderr).toContain(`--api-hash-file ${join(root, "nohash")} is missing or not readable`);
  });
});

describe("install.sh --root", () => {
  let root = "";
  const token = fakeToken();

  beforeAll(() => {
    root = join(h.work, "root");
    runCmd(["mkdir", "-p", root]);
    placeTls(root);
    writeFileSync(join(h.work, "api-hash"), `${API_HASH}\n`);
  });

  it("installs local mode: config, layout, release, units; then server, healthy, logOut, bot, in that order (issue 9 item 4)", async () => {
    writeFileSync(h.recLog, "");
    h.logOutToken = token;
    const port = String(h.port);
    const r = await install(
      ["--root", root, "--mode", "local", "--api-id", "123456", "--api-hash-file", join(h.work, "api-hash"),
        "--http-port", port, "--bot-api-port", port, "--logout-cloud", "--download-budget", "16MB"],
      { BOT_TOKEN: token, SYSTEMCTL: h.systemctl, DOCKER_COMPOSE: h.compose, TELEGRAM_CLOUD_ROOT: `http://127.0.0.1:${port}` },
    );
    expect(r.stderr).toContain("healthy:");
    expect(r.status).toBe(0);
    const out = r.stdout + r.stderr;
    expect(out).not.toContain(token);
    expect(out).not.toContain(API_HASH);
    expect(out).toContain(`local Bot API server answers on http://127.0.0.1:${port}/`);
    expect(out).toContain("logged out of api.telegram.org");

    // Configuration: secrets 0600, values as given.
    const envFile = join(root, "etc/docket/docket.env");
    expect(modeOf(envFile)).toBe("600");
    const env = readFileSync(envFile, "utf8");
    expect(env).toContain(`BOT_TOKEN=${token}\n`);
    expect(env).toContain("BOT_API_MODE=local\n");
    expect(env).toContain(`BOT_API_ROOT=http://127.0.0.1:${port}\n`);
    expect(env).toContain("LOCAL_BOT_API_DIR=/var/lib/docket/bot-api\n");
    expect(env).toContain(`HTTP_PORT=${port}\n`);
    expect(env).toContain("DOWNLOAD_BUDGET=16MB\n");
    expect(env).not.toMatch(/^WEBHOOK_/m);
    expect(modeOf(join(root, "etc/docket/bot-api.env"))).toBe("600");
    expect(readFileSync(join(root, "etc/docket/bot-api.env"), "utf8")).toContain(`TELEGRAM_API_ID=123456\nTELEGRAM_API_HASH=${API_HASH}\n`);
    const composeEnv = readFileSync(join(root, "etc/docket/compose.env"), "utf8");
    expect(composeEnv).toContain("DOCKET_BOT_API_DIR=/var/lib/docket/bot-api\n");
    expect(composeEnv).toContain(`DOCKET_BOT_API_PORT=${port}\n`);
    for (const d of ["hooks", "backup/pre.d", "backup/post.d"]) expect(statSync(join(root, "etc/docket", d)).isDirectory()).toBe(true);
    expect(existsSync(join(root, "etc/docket/logout-cloud.pending"))).toBe(false);
    // The install log holds what the screen showed.
    expect(readFileSync(join(root, "var/log/docket/install.log"), "utf8")).toContain(r.stderr.trim().split("\n").at(-1)!);
    expect(modeOf(join(root, "var/log/docket/install.log"))).toBe("600");

    // Disk layout: directories by purpose, 0750; the Bot API dirs belong to the server's own account.
    for (const d of ["", "/db", "/downloads", "/work", "/results", "/backups", "/bot-api", "/bot-api-temp"]) {
      expect(modeOf(join(root, "var/lib/docket" + d))).toBe("750");
    }
    const api = statSync(join(root, "var/lib/docket/bot-api"));
    expect([api.uid, api.gid]).toEqual([accountId(root, "passwd", "docket-botapi"), accountId(root, "group", "docket-botapi")]);

    // Release + current link; shipped files only.
    const link = join(root, "opt/docket/current");
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toMatch(/^releases\/\d+\.\d+\.\d+-[0-9a-f]{12}$/);
    expect(readFileSync(join(link, "package.json"), "utf8")).toBe(readFileSync(join(repoRoot, "package.json"), "utf8"));
    expect(modeOf(join(link, "scripts/backup.sh"))).toMatch(/^7[57][57]$/);
    expect(existsSync(join(link, "node_modules"))).toBe(false);
    expect(existsSync(join(link, "test"))).toBe(false);

    // Units copied verbatim, 0644.
    for (const u of ["docket.service", "docket-janitor.service", "docket-janitor.timer", "docket-backup.service", "docket-backup.timer", "docket-failure@.service", "docket-alert@.service", "docket-bot-api.service", "docket-nginx.service"]) {
      const p = join(root, "etc/systemd/system", u);
      expect(modeOf(p)).toBe("644");
      expect(readFileSync(p, "utf8")).toBe(readFileSync(join(repoRoot, "systemd", u), "utf8"));
    }

    // Host commands, in order: image, server (systemctl waits for its health), probe, logOut, bot.
    const calls = readFileSync(h.recLog, "utf8").trim().split("\n");
    expect(calls).toEqual([
      "systemctl daemon-reload",
      `compose -p docket -f ${root}/opt/docket/current/compose/docker-compose.yml --env-file ${root}/etc/docket/compose.env pull bot-api`,
      "systemctl enable docket-bot-api.service",
      "systemctl restart docket-bot-api.service",
      "systemctl enable docket.service docket-janitor.timer docket-backup.timer docket-backup-verify.timer",
      "cloud logOut (token right)",
      "systemctl restart docket.service",
      "systemctl start docket-janitor.timer docket-backup.timer docket-backup-verify.timer",
    ]);
    expect(h.healthHits).toBeGreaterThan(0);
    // The file install.sh hands to compose renders with the real client.
    expectComposeServices(haveCompose, calls[1]!, root, ["bot-api"]);
  });

  it("is idempotent: a second run changes nothing but its log and keeps the token", async () => {
    const before = treeWithoutLog(root);
    const logBefore = readFileSync(join(root, "var/log/docket/install.log"), "utf8");
    const r = await install(["--root", root], { SYSTEMCTL: h.systemctl, DOCKER_COMPOSE: h.compose });
    expect(r.status).toBe(0);
    expect(r.stderr).toContain("= /etc/docket/docket.env unchanged");
    expect(r.stderr).toContain("token: from existing docket.env");
    expect(r.stderr).toMatch(/= release \S+ already installed/);
    // Not a first local install any more: no logOut, the bot is simply restarted.
    expect(r.stderr).not.toContain("logOut");
    expect(treeWithoutLog(root)).toEqual(before);
    expect(readFileSync(join(root, "var/log/docket/install.log"), "utf8").startsWith(logBefore)).toBe(true);
  });

  it("applies a changed flag and keeps every other key", async () => {
    const before = readFileSync(join(root, "etc/docket/docket.env"), "utf8");
    const r = await install(["--root", root, "--download-budget", "32MB", "--no-start"], { DOCKER_COMPOSE: h.compose });
    expect(r.status).toBe(0);
    const after = readFileSync(join(root, "etc/docket/docket.env"), "utf8");
    expect(after).toBe(before.replace("DOWNLOAD_BUDGET=16MB", "DOWNLOAD_BUDGET=32MB"));
  });

  it("fails with exit 4 when /healthz does not answer", async () => {
    const dead = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = dead.port;
    dead.stop(true);
    const r = await install(["--root", root, "--http-port", String(port)], { SYSTEMCTL: h.systemctl, DOCKER_COMPOSE: h.compose, HEALTH_TIMEOUT: "1" });
    expect(r.status).toBe(4);
    expect(r.stderr).toContain(`no healthy answer from http://127.0.0.1:${port}/healthz`);
    expect(r.stderr).toContain("journalctl -u docket.service");
  });
});

describe("install.sh input checks", () => {
  it.each(["install.sh", "disk-layout.sh", "backup.sh", "restore.sh"])("%s --help prints its usage", (name) => {
    const r = runCmd(["bash", `scripts/${name}`, "--help"]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("Usage:");
    expect(r.stdout).not.toContain("set -euo pipefail");
  });

  it("every option of --help has a row in docs/install.md's options table (newcomer item 9)", () => {
    const help = runCmd(["bash", "scripts/install.sh", "--help"]).stdout;
    // The option column of each "  --flag ARG   meaning" line (it may name two flags).
    const columns = help.split("\n").filter((l) => /^\s+--/.test(l)).map((l) => l.trim().split(/\s{2,}/)[0]!);
    const flags = [...new Set(columns.flatMap((c) => c.match(/--[a-z-]+/g) ?? []))].filter((f) => f !== "--help");
    expect(flags.length).toBeGreaterThanOrEqual(20);
    const rows = readFileSync(join(repoRoot, "docs/install.md"), "utf8").split("\n").filter((l) => l.startsWith("| `--"));
    const documented = new Set(rows.flatMap((l) => [...l.split(" | ")[0]!.matchAll(/--[a-z-]+/g)].map((m) => m[0])));
    expect(flags.filter((f) => !documented.has(f))).toEqual([]);
    // The budget row names the default the script uses.
    expect(rows.find((l) => l.startsWith("| `--download-budget"))).toContain("default `4GB`");
  });

  it.each([
    ["--http-port", "99999", "default 8090"],
    ["--webhook-port", "web", "default 8091"],
    ["--bot-api-port", "0", "default 8081"],
  ])("refuses %s %s naming the flag, the range and the default, before writing anything", async (flag, value, def) => {
    const root = testTempDir("badport");
    const r = await install(["--root", root, "--no-start", flag, value, "--download-budget", "16MB"], { BOT_TOKEN: fakeToken() });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`error: ${flag} '${value}' is not a TCP port: give a number from 1 to 65535 (${def})`);
    expect(existsSync(join(root, "etc/docket/docket.env"))).toBe(false);
  });

  it.each([
    [["--token-file"], "--token-file needs a value (see --help)"],
    [["--token-file", "--mode", "local"], "--token-file needs a value, not the option --mode (see --help)"],
    [["--data-dir", "--no-start"], "--data-dir needs a value, not the option --no-start (see --help)"],
    [["--mode"], "--mode needs a value (see --help)"],
    [["--webhook-url", ""], "--webhook-url needs a value (see --help)"],
  ])("an option without its value (%j) is named in one line, before anything is written", async (args, message) => {
    const root = testTempDir("noarg");
    const r = await install(["--root", root, ...args], { BOT_TOKEN: fakeToken() });
    expect([r.status, r.stderr]).toEqual([1, `error: ${message}\n`]);
    expect(snapshotTree(root)).toEqual([]);
  });

  it.each([
    ["disk-layout.sh", "--budget"],
    ["backup.sh", "--keep"],
    ["restore.sh", "--data-dir"],
    ["rollback.sh", "--data-dir"],
  ])("%s names its option without a value too (%s)", (script, flag) => {
    const r = runCmd(["bash", `scripts/${script}`, "--dry-run", flag]);
    expect([r.status, r.stderr]).toEqual([1, `error: ${flag} needs a value (see --help)\n`]);
  });

  it("rejects an unknown option", () => {
    const r = runCmd(["bash", "scripts/install.sh", "--frobnicate"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("unknown argument: --frobnicate");
  });

  it("rejects a malformed token without printing it", async () => {
    const root = testTempDir("badtoken");
    const r = await install(["--root", root, "--no-start", "--download-budget", "16MB"], { BOT_TOKEN: "12345:short-secret-value" });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("does not look like");
    expect(r.stderr).not.toContain("short-secret-value");
    expect(existsSync(join(root, "etc/docket/docket.env"))).toBe(false);
  });

  it("reads the token from --token-file and stops without one when not interactive", async () => {
    const root = testTempDir("tokenfile");
    const none = await install(["--root", root, "--no-start", "--download-budget", "16MB"]);
    expect(none.status).toBe(1);
    expect(none.stderr).toContain("no bot token");
    const token = fakeToken();
    const tokenFile = join(h.work, "token");
    writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
    const r = await install(["--root", root, "--no-start", "--token-file", tokenFile, "--download-budget", "16MB"]);
    expect(r.status).toBe(0);
    const envText = readFileSync(join(root, "etc/docket/docket.env"), "utf8");
    expect(envText).toContain(`BOT_TOKEN=${token}\nBOT_API_MODE=cloud\n`);
    // Newcomer item 10: the header names the page that describes every key, and it is installed.
    expect(envText).toContain("/opt/docket/current/docs/configuration.md");
    expect(envText).not.toContain("docs/install.md");
    expect(existsSync(join(root, "opt/docket/current/docs/configuration.md"))).toBe(true);
    expect(existsSync(join(root, "opt/docket/current/.env.example"))).toBe(true);
    // Newcomer items 7 and 19: access and backup flags are visible, and the file sources in sh.
    expect(envText).toContain("\nALLOWED_USER_IDS=\n");
    expect(envText).toContain('\nBACKUP_ARGS=""\n');
    expect(r.stderr).toContain("ALLOWED_USER_IDS is empty, so EVERY Telegram user can use this bot");
    const edited = join(h.work, "docket.env.sh");
    writeFileSync(edited, envText.replace('BACKUP_ARGS=""', 'BACKUP_ARGS="--with-results --keep 14"'));
    const sourced = runCmd(["sh", "-c", '. "$1" && printf "%s|%s" "$BACKUP_ARGS" "$ALLOWED_USER_IDS"', "sh", edited]);
    expect(sourced.stderr).toBe("");
    expect(sourced.stdout).toBe("--with-results --keep 14|");
    expect(existsSync(join(root, "var/lib/docket/bot-api"))).toBe(false); // cloud mode
    // the operator command `docket mode cloud|local` points at the current release and the env file
    const wrapper = readFileSync(join(root, "usr/local/bin/docket"), "utf8");
    expect(wrapper).toContain("exec env DOCKET_ENV_FILE=/etc/docket/docket.env /usr/local/bin/bun /opt/docket/current/bot/cli/main.ts");
    expect(statSync(join(root, "usr/local/bin/docket")).mode & 0o777).toBe(0o755);
  });

  it("stops with exit 3 when the disk cannot hold the download budget", async () => {
    const root = testTempDir("space");
    const r = await install(["--root", root, "--no-start", "--download-budget", "100000TB"], { BOT_TOKEN: fakeToken() });
    expect(r.status).toBe(3);
    expect(r.stderr).toContain("not enough free space");
  });
});

describe("install.sh newcomer walkthrough fixes", () => {
  it.each(["install.sh", "disk-layout.sh"])("%s --root with a missing directory names it in one clear line (item 11)", (name) => {
    const missing = join(h.work, "no-such-root");
    const r = runCmd(["bash", `scripts/${name}`, "--dry-run", "--root", missing]);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(`error: --root ${missing} does not exist (create the directory first)\n`);
  });

  it("--allowed-users writes ALLOWED_USER_IDS, keeps it on a re-run, and rejects a non-id before writing (item 7)", async () => {
    const root = testTempDir("allowed");
    const bad = await install(["--root", root, "--no-start", "--allowed-users", "12,@bob", "--download-budget", "16MB"], { BOT_TOKEN: fakeToken() });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain("--allowed-users '12,@bob' must be comma-separated numeric Telegram user ids");
    expect(existsSync(join(root, "etc/docket/docket.env"))).toBe(false);
    const r = await install(["--root", root, "--no-start", "--allowed-users", "12345, 67890", "--download-budget", "16MB"], { BOT_TOKEN: fakeToken() });
    expect(r.status).toBe(0);
    expect(readFileSync(join(root, "etc/docket/docket.env"), "utf8")).toMatch(/^ALLOWED_USER_IDS=12345,67890$/m);
    expect(r.stderr).toContain("only ALLOWED_USER_IDS=12345,67890 (and ADMIN_USER_IDS) may use the bot");
    expect(r.stderr).not.toContain("EVERY Telegram user");
    const again = await install(["--root", root, "--no-start"]);
    expect(again.status).toBe(0);
    expect(readFileSync(join(root, "etc/docket/docket.env"), "utf8")).toMatch(/^ALLOWED_USER_IDS=12345,67890$/m);
    expect(again.stderr).not.toContain("EVERY Telegram user");
  });

  it("rollback: install.sh run from an older release reuses it (no third release, no bun install) (item 4)", async () => {
    const srcA = testTempDir("relA");
    const srcB = testTempDir("relB");
    const root = testTempDir("rollback");
    for (const d of ["scripts", "systemd", "compose", "docs"]) cpSync(join(repoRoot, d), join(srcA, d), { recursive: true });
    cpSync(join(repoRoot, "package.json"), join(srcA, "package.json"));
    cpSync(srcA, srcB, { recursive: true });
    writeFileSync(join(srcB, "CHANGES.md"), "the new version\n");
    // Later runs take the token from the root's docket.env, as on a host.
    const run = (script: string, token?: string) =>
      runCmdAsync(["bash", script, "--non-interactive", "--root", root, "--skip-packages", "--no-start", "--download-budget", "16MB"], {
        env: { BOT_TOKEN: token, TELEGRAM_API_HASH: undefined },
      });
    expect((await run(join(srcA, "scripts/install.sh"), fakeToken())).status).toBe(0);
    const releases = () => readdirSync(join(root, "opt/docket/releases")).sort();
    const current = () => readlinkSync(join(root, "opt/docket/current"));
    const relA = releases()[0]!;
    expect(current()).toBe(`releases/${relA}`);
    expect((await run(join(srcB, "scripts/install.sh"))).status).toBe(0);
    const relB = releases().find((n) => n !== relA)!;
    expect(current()).toBe(`releases/${relB}`);
    // The documented rollback: the old release's own install.sh.
    const back = await run(join(root, "opt/docket/releases", relA, "scripts/install.sh"));
    expect(back.status).toBe(0);
    expect(back.stderr).toContain(`= release ${relA} already installed (reused: no copy, no bun install)`);
    expect(back.stderr).not.toContain("bun install (--root");
    expect(releases()).toEqual([relA, relB].sort());
    expect(current()).toBe(`releases/${relA}`);
    // The newcomer's way (link first, then current/scripts/install.sh) ends the same.
    const again = await run(join(root, "opt/docket/current/scripts/install.sh"));
    expect(again.status).toBe(0);
    expect(releases()).toEqual([relA, relB].sort());
    expect(current()).toBe(`releases/${relA}`);
    // Two later upgrades: rotation keeps three, and the rolled-back release counts as recent
    // (the one before the newest is the next rollback target), so B goes, A stays.
    for (const v of ["C", "D"]) {
      writeFileSync(join(srcB, "CHANGES.md"), `version ${v}\n`);
      expect((await run(join(srcB, "scripts/install.sh"))).status).toBe(0);
    }
    expect(releases()).toHaveLength(3);
    expect(releases()).toContain(relA);
    expect(releases()).not.toContain(relB);
  });
});



describe("disk-layout.sh", () => {
  it("reads DATA_DIR, mode and budget from the env file and is idempotent", () => {
    const root = testTempDir("layout");
    runCmd(["mkdir", "-p", join(root, "etc/docket")]);
    writeFileSync(join(root, "etc/docket/docket.env"), "DATA_DIR=/srv/docket\nBOT_API_MODE=cloud\nDOWNLOAD_BUDGET=512MB\n");
    // Without the accounts (install.sh creates them) it stops and says so.
    const none = runCmd(["bash", "scripts/disk-layout.sh", "--root", root]);
    expect(none.status).toBe(1);
    expect(none.stderr).toContain("user docket does not exist: scripts/install.sh creates it");
    writeFileSync(join(root, "etc/passwd"), "docket:x:990:990::/srv/docket:/usr/sbin/nologin\n");
    writeFileSync(join(root, "etc/group"), "docket:x:990:\n");
    const r1 = runCmd(["bash", "scripts/disk-layout.sh", "--root", root]);
    expect(r1.status).toBe(0);
    expect(r1.stderr).toContain("/srv/docket: needs 512.0 MiB free (budget 512.0 MiB, 512MB)");
    expect([statSync(join(root, "srv/docket/db")).uid, statSync(join(root, "srv/docket/db")).gid]).toEqual([990, 990]);
    for (const d of ["db", "downloads", "work", "results", "backups"]) expect(modeOf(join(root, "srv/docket", d))).toBe("750");
    expect(existsSync(join(root, "var/lib/docket/bot-api"))).toBe(false);
    const snap = snapshotTree(root);
    expect(runCmd(["bash", "scripts/disk-layout.sh", "--root", root]).status).toBe(0);
    expect(snapshotTree(root)).toEqual(snap);
    // A wrong mode is repaired on the next run.
    runCmd(["chmod", "0777", join(root, "srv/docket/work")]);
    expect(runCmd(["bash", "scripts/disk-layout.sh", "--root", root]).status).toBe(0);
    expect(modeOf(join(root, "srv/docket/work"))).toBe("750");
  });

  it("rejects a budget that is not a size", () => {
    const r = runCmd(["bash", "scripts/disk-layout.sh", "--dry-run", "--root", h.work, "--budget", "lots"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("is not a size");
  });
});

/** Whether the compose renders run (a missing client prints its skip line once; CI fails). */
const haveCompose = toolReady("compose");


