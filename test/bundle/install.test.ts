/**
 * scripts/install.sh and scripts/disk-layout.sh, run for real into throwaway roots.
 *
 * Host-level commands are replaced the documented way: SYSTEMCTL and DOCKER_COMPOSE point at
 * recorder scripts (each call is appended to a log), apt/npm/accounts are skipped by --root,
 * and the final health check talks to a Bun.serve on 127.0.0.1 standing in for the bot's
 * /healthz. Nothing outside the temp directories is changed (the dry run proves it).
 */
import { cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  composeClient, composeConfigOf, fakeToken, makeRecorder, makeTempDir, modeOf, prepareVerifyRoot, removeDir, repoRoot, runCmd, runCmdAsync,
  snapshotTree, testTempDir,
} from "./helpers";
import { toolPath, toolReady } from "../support/tools";

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
const API_HASH = "0123456789abcdef0123456789abcdef";
const HOOK_URL = "https://bot.example.org/telegram/webhook";

/** Dummy TLS files where install.sh looks by default (ROOT/etc/docket/tls); it only checks they exist. */
function placeTls(root: string): void {
  mkdirSync(join(root, "etc/docket/tls"), { recursive: true });
  writeFileSync(join(root, "etc/docket/tls/fullchain.pem"), "-----BEGIN CERTIFICATE-----\n");
  writeFileSync(join(root, "etc/docket/tls/privkey.pem"), "-----BEGIN PRIVATE KEY-----\n", { mode: 0o600 });
}

let work = "";
let recLog = "";
let systemctl = "";
let compose = "";
let health: ReturnType<typeof Bun.serve> | undefined;
let healthHits = 0;

beforeAll(() => {
  work = makeTempDir("install");
  recLog = join(work, "calls.log");
  systemctl = makeRecorder(work, "systemctl", recLog);
  compose = makeRecorder(work, "compose", recLog);
  health = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      if (new URL(req.url).pathname !== "/healthz") return new Response("no", { status: 404 });
      healthHits++;
      return Response.json({ ok: true });
    },
  });
});
afterAll(() => {
  health?.stop(true);
  removeDir(work);
});

const install = (args: string[], env: Record<string, string> = {}) =>
  runCmdAsync(["bash", "scripts/install.sh", "--non-interactive", ...args], {
    env: { REC_LOG: recLog, HEALTH_TIMEOUT: "5", BOT_TOKEN: undefined, TELEGRAM_API_HASH: undefined, ...env },
  });

describe("install.sh --dry-run", () => {
  it("prints every step and changes nothing in the root", async () => {
    const root = testTempDir("dry");
    const token = fakeToken();
    placeTls(root);
    const before = snapshotTree(root);
    const r = await install(["--dry-run", "--root", root, "--mode", "local", "--api-id", "42", "--webhook-url", HOOK_URL, "--download-budget", "16MB"], {
      BOT_TOKEN: token,
      TELEGRAM_API_HASH: API_HASH,
      SYSTEMCTL: systemctl,
      DOCKER_COMPOSE: compose,
    });
    expect(r.status).toBe(0);
    const out = r.stdout + r.stderr;
    STEPS.forEach((title, i) => expect(out).toContain(`==> step ${i + 1}: ${title}`));
    expect(out).toContain("==> step 5.1: directories by purpose");
    expect(out).toContain(`+ write ${root}/etc/docket/docket.env (mode 0600)`);
    expect(out).toContain("+ mkdir -p " + root + "/var/lib/docket/db");
    expect(out).toContain(`+ ${systemctl} daemon-reload`);
    expect(out).toContain("dry run: nothing was changed");
    expect(out).toMatch(/docket \S+ would be installed \(local mode\)/);
    expect(out).not.toContain(" is installed");
    expect(out).not.toContain("the real run would stop");
    expect(out).not.toContain(token);
    expect(snapshotTree(root)).toEqual(before);
    expect(existsSync(recLog) ? readFileSync(recLog, "utf8") : "").toBe("");
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
    root = join(work, "root");
    runCmd(["mkdir", "-p", root]);
    placeTls(root);
    writeFileSync(join(work, "api-hash"), `${API_HASH}\n`);
  });

  it("installs local mode with webhook: config, layout, release, units, compose, start, health", async () => {
    writeFileSync(recLog, "");
    const r = await install(
      ["--root", root, "--mode", "local", "--api-id", "123456", "--api-hash-file", join(work, "api-hash"),
        "--http-port", String(health!.port), "--webhook-url", HOOK_URL, "--download-budget", "16MB"],
      { BOT_TOKEN: token, SYSTEMCTL: systemctl, DOCKER_COMPOSE: compose },
    );
    expect(r.stderr).toContain("healthy:");
    expect(r.status).toBe(0);
    const out = r.stdout + r.stderr;
    expect(out).not.toContain(token);
    expect(out).not.toContain(API_HASH);

    // Configuration: secrets 0600, values as given.
    const envFile = join(root, "etc/docket/docket.env");
    expect(modeOf(envFile)).toBe("600");
    const env = readFileSync(envFile, "utf8");
    expect(env).toContain(`BOT_TOKEN=${token}\n`);
    expect(env).toContain("BOT_API_MODE=local\n");
    expect(env).toContain("BOT_API_ROOT=http://127.0.0.1:8081\n");
    expect(env).toContain("LOCAL_BOT_API_DIR=/var/lib/docket/bot-api\n");
    expect(env).toContain(`HTTP_PORT=${health!.port}\n`);
    expect(env).toContain("DOWNLOAD_BUDGET=16MB\n");
    expect(env).toMatch(/^WEBHOOK_SECRET=[A-Za-z0-9]{48}$/m);
    expect(env).toContain(`WEBHOOK_URL=${HOOK_URL}\n`);
    expect(env).toContain("WEBHOOK_PATH=/telegram/webhook\n");
    expect(modeOf(join(root, "etc/docket/bot-api.env"))).toBe("600");
    expect(readFileSync(join(root, "etc/docket/bot-api.env"), "utf8")).toContain(`TELEGRAM_API_ID=123456\nTELEGRAM_API_HASH=${API_HASH}\n`);
    expect(modeOf(join(root, "etc/docket/nginx/webhook.conf"))).toBe("640");
    expect(readFileSync(join(root, "etc/docket/compose.env"), "utf8")).toContain("DOCKET_BOT_API_DIR=/var/lib/docket/bot-api\n");
    for (const d of ["hooks", "backup/pre.d", "backup/post.d"]) expect(statSync(join(root, "etc/docket", d)).isDirectory()).toBe(true);

    // Disk layout: directories by purpose, 0750; the Bot API dirs belong to uid/gid 101.
    for (const d of ["", "/db", "/downloads", "/work", "/results", "/backups", "/bot-api", "/bot-api-temp"]) {
      expect(modeOf(join(root, "var/lib/docket" + d))).toBe("750");
    }
    const api = statSync(join(root, "var/lib/docket/bot-api"));
    expect([api.uid, api.gid]).toEqual([101, 101]);

    // Release + current link; shipped files only.
    const link = join(root, "opt/docket/current");
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toMatch(/^releases\/\d+\.\d+\.\d+-[0-9a-f]{12}$/);
    expect(readFileSync(join(link, "package.json"), "utf8")).toBe(readFileSync(join(repoRoot, "package.json"), "utf8"));
    expect(modeOf(join(link, "scripts/backup.sh"))).toMatch(/^7[57][57]$/);
    expect(existsSync(join(link, "node_modules"))).toBe(false);
    expect(existsSync(join(link, "test"))).toBe(false);

    // Units copied verbatim, 0644.
    for (const u of ["docket.service", "docket-janitor.service", "docket-janitor.timer", "docket-backup.service", "docket-backup.timer", "docket-failure@.service"]) {
      const p = join(root, "etc/systemd/system", u);
      expect(modeOf(p)).toBe("644");
      expect(readFileSync(p, "utf8")).toBe(readFileSync(join(repoRoot, "systemd", u), "utf8"));
    }

    // Host commands, in order.
    const calls = readFileSync(recLog, "utf8").trim().split("\n");
    const c = `${root}/opt/docket/current/compose`;
    const composeArgs = `compose -p docket -f ${c}/docker-compose.yml -f ${c}/webhook.yml --env-file ${root}/etc/docket/compose.env`;
    expect(calls).toEqual([
      `${composeArgs} pull bot-api`,
      `${composeArgs} up -d bot-api`,
      `${composeArgs} up -d nginx`,
      "systemctl daemon-reload",
      "systemctl enable docket.service docket-janitor.timer docket-backup.timer",
      "systemctl restart docket.service",
      "systemctl start docket-janitor.timer docket-backup.timer",
    ]);
    expect(healthHits).toBeGreaterThan(0);
    // The files install.sh hands to compose render with the real client (local + webhook).
    expectComposeServices(calls[2]!, root, ["bot-api", "nginx"]);
  });

  it("is idempotent: a second run changes nothing and keeps the token", async () => {
    const before = snapshotTree(root);
    const r = await install(["--root", root], { SYSTEMCTL: systemctl, DOCKER_COMPOSE: compose });
    expect(r.status).toBe(0);
    expect(r.stderr).toContain("= /etc/docket/docket.env unchanged");
    expect(r.stderr).toContain("token: from existing docket.env");
    expect(r.stderr).toMatch(/= release \S+ already installed/);
    expect(snapshotTree(root)).toEqual(before);
  });

  it("applies a changed flag and keeps every other key", async () => {
    const before = readFileSync(join(root, "etc/docket/docket.env"), "utf8");
    const r = await install(["--root", root, "--download-budget", "32MB", "--no-start"], { DOCKER_COMPOSE: compose });
    expect(r.status).toBe(0);
    const after = readFileSync(join(root, "etc/docket/docket.env"), "utf8");
    expect(after).toBe(before.replace("DOWNLOAD_BUDGET=16MB", "DOWNLOAD_BUDGET=32MB"));
  });

  it("fails with exit 4 when /healthz does not answer", async () => {
    const dead = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = dead.port;
    dead.stop(true);
    const r = await install(["--root", root, "--http-port", String(port)], { SYSTEMCTL: systemctl, DOCKER_COMPOSE: compose, HEALTH_TIMEOUT: "1" });
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
    const tokenFile = join(work, "token");
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
    const edited = join(work, "docket.env.sh");
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
    const missing = join(work, "no-such-root");
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

describe("install.sh drop-ins", () => {
  it("joins the group that already holds gid 101 and records a non-default data dir", async () => {
    const root = testTempDir("dropins");
    runCmd(["mkdir", "-p", join(root, "etc")]);
    writeFileSync(join(root, "etc/group"), "root:x:0:\n_ssh:x:101:\n");
    const r = await install(["--root", root, "--no-start", "--mode", "local", "--api-id", "1", "--data-dir", "/srv/docket", "--download-budget", "16MB"], {
      BOT_TOKEN: fakeToken(),
      TELEGRAM_API_HASH: API_HASH,
    });
    expect(r.status).toBe(0);
    expect(r.stderr).toContain("gid 101 already belongs to group '_ssh'");
    const unitDir = join(root, "etc/systemd/system");
    for (const u of ["docket.service", "docket-janitor.service"]) {
      expect(readFileSync(join(unitDir, `${u}.d/10-botapi-group.conf`), "utf8")).toMatch(/^SupplementaryGroups=\nSupplementaryGroups=_ssh\n/m);
      expect(readFileSync(join(unitDir, `${u}.d/20-data-dir.conf`), "utf8")).toContain(
        "ReadWritePaths=\nReadWritePaths=/srv/docket/db /srv/docket/downloads /srv/docket/work /srv/docket/results\n",
      );
    }
    expect(readFileSync(join(unitDir, "docket-backup.service.d/20-data-dir.conf"), "utf8")).toContain("ReadWritePaths=/srv/docket/db /srv/docket/backups\n");
    expect(readFileSync(join(root, "etc/docket/docket.env"), "utf8")).toContain("DATA_DIR=/srv/docket\n");
    expect(modeOf(join(root, "srv/docket/db"))).toBe("750");
    // The installed units with their drop-ins still verify (systemd.test.ts covers a missing tool).
    if (toolPath("systemd-analyze")) {
      prepareVerifyRoot(root);
      const v = runCmd(["systemd-analyze", "verify", `--root=${root}`, "docket.service", "docket-janitor.service", "docket-backup.service"]);
      expect(v.stderr + v.stdout).toBe("");
      expect(v.status).toBe(0);
    }
  });
});

describe("disk-layout.sh", () => {
  it("reads DATA_DIR, mode and budget from the env file and is idempotent", () => {
    const root = testTempDir("layout");
    runCmd(["mkdir", "-p", join(root, "etc/docket")]);
    writeFileSync(join(root, "etc/docket/docket.env"), "DATA_DIR=/srv/docket\nBOT_API_MODE=cloud\nDOWNLOAD_BUDGET=512MB\n");
    const r1 = runCmd(["bash", "scripts/disk-layout.sh", "--root", root]);
    expect(r1.status).toBe(0);
    expect(r1.stderr).toContain("budget 512.0 MiB (512MB)");
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
    const r = runCmd(["bash", "scripts/disk-layout.sh", "--dry-run", "--root", work, "--budget", "lots"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("is not a size");
  });
});

/** Whether the compose renders below run (a missing client prints its skip line once; CI fails). */
const haveCompose = toolReady("compose");

/**
 * Render the project of one recorded compose call with the real client (`config`, against the
 * root's /etc/docket) and expect exactly `services`. Without a client this check is skipped.
 */
function expectComposeServices(line: string, root: string, services: string[]): void {
  const client = composeClient();
  if (!haveCompose || !client) return;
  const cfg = composeConfigOf(client, line, join(root, "etc/docket"));
  expect(cfg.stderr).not.toMatch(/ERROR|bot-api\.env/);
  expect(cfg.status).toBe(0);
  expect(Object.keys((Bun.YAML.parse(cfg.stdout) as { services: object }).services).sort()).toEqual(services);
}

/** A fresh throwaway root with the default TLS files, removed when the test finishes. */
function tlsRoot(prefix: string): string {
  const root = testTempDir(prefix);
  placeTls(root);
  return root;
}

/** Recorded compose calls (lines starting with "compose "), after clearing the log. */
const composeCalls = () => readFileSync(recLog, "utf8").split("\n").filter((l) => l.startsWith("compose "));

describe("install.sh webhook mode (audit of issue 6: gaps 1, 4, 5, 11)", () => {
  it("cloud + webhook on a fresh host: Docker is installed, compose gets compose/webhook.yml alone and renders without bot-api.env", async () => {
    const root = tlsRoot("cloudhook");
    writeFileSync(recLog, "");
    const apt = makeRecorder(work, "apt-get", recLog);
    const r = await install(["--root", root, "--webhook-url", HOOK_URL, "--no-start", "--download-budget", "16MB"], {
      BOT_TOKEN: fakeToken(), DOCKER_COMPOSE: compose, APT_GET: apt, SYSTEMCTL: systemctl,
    });
    expect(r.stderr).toContain("==> step 12: next steps");
    expect(r.status).toBe(0);
    // Docker: installed by apt (docker.io) unless this machine already has it.
    if (Bun.which("docker")) expect(r.stderr).toContain("= docker present");
    else expect(readFileSync(recLog, "utf8")).toContain("install -y -qq --no-install-recommends docker.io");
    expect(readFileSync(recLog, "utf8")).toContain("systemctl enable --now docker.service");
    const calls = composeCalls();
    expect(calls).toEqual([`compose -p docket -f ${root}/opt/docket/current/compose/webhook.yml --env-file ${root}/etc/docket/compose.env up -d nginx`]);
    expect(existsSync(join(root, "etc/docket/bot-api.env"))).toBe(false);
    expectComposeServices(calls[0]!, root, ["nginx"]);
  });

  it("cloud without a webhook installs no Docker and runs no compose", async () => {
    const root = testTempDir("cloudpoll");
    writeFileSync(recLog, "");
    const apt = makeRecorder(work, "apt-get", recLog);
    const r = await install(["--root", root, "--no-start", "--download-budget", "16MB"], { BOT_TOKEN: fakeToken(), DOCKER_COMPOSE: compose, APT_GET: apt });
    expect(r.status).toBe(0);
    const log = readFileSync(recLog, "utf8");
    expect(log).toContain("install -y -qq --no-install-recommends ca-certificates curl sqlite3 openssl");
    expect(log).not.toContain("docker");
    expect(composeCalls()).toEqual([]);
  });

  it("local mode alone renders with the real compose client (bot-api only)", async () => {
    const root = testTempDir("localonly");
    writeFileSync(recLog, "");
    const r = await install(["--root", root, "--no-start", "--mode", "local", "--api-id", "7", "--download-budget", "16MB"], {
      BOT_TOKEN: fakeToken(), TELEGRAM_API_HASH: API_HASH, DOCKER_COMPOSE: compose,
    });
    expect(r.status).toBe(0);
    const calls = composeCalls();
    expect(calls.map((l) => l.split(" --env-file ")[0])).toEqual([
      `compose -p docket -f ${root}/opt/docket/current/compose/docker-compose.yml`,
      `compose -p docket -f ${root}/opt/docket/current/compose/docker-compose.yml`,
    ]);
    expectComposeServices(calls[1]!, root, ["bot-api"]);
  });

  it("derives WEBHOOK_PATH and the nginx path from --webhook-url", async () => {
    const root = tlsRoot("hookpath");
    const r = await install(["--root", root, "--webhook-url", "https://x.example.com/tg/hook", "--no-start", "--download-budget", "16MB"], { BOT_TOKEN: fakeToken() });
    expect(r.status).toBe(0);
    const env = readFileSync(join(root, "etc/docket/docket.env"), "utf8");
    expect(env).toContain("WEBHOOK_URL=https://x.example.com/tg/hook\n");
    expect(env).toContain("WEBHOOK_PATH=/tg/hook\n");
    expect(env).not.toContain("/telegram/webhook");
    const conf = readFileSync(join(root, "etc/docket/nginx/webhook.conf"), "utf8");
    expect(conf).toContain('map $uri $docket_webhook_path {\n    default 0;\n    "~^/tg/hook$" 1;\n}');
    expect(conf).not.toContain("/telegram/webhook");
  });

  it.each([
    ["http://bot.example.org/hook", "must look like"],
    ["https://bot.example.org:8443/hook", "must look like"],
    ["https://bot.example.org/hook?x=1", "must look like"],
    ["https://bot.example.org/", "needs a path"],
  ])("refuses --webhook-url %s before writing anything", async (url, msg) => {
    const root = tlsRoot("badurl");
    const r = await install(["--root", root, "--webhook-url", url, "--no-start", "--download-budget", "16MB"], { BOT_TOKEN: fakeToken() });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(msg);
    expect(existsSync(join(root, "etc/docket/docket.env"))).toBe(false);
  });

  it("--webhook without a URL fails clearly and writes nothing", async () => {
    const root = tlsRoot("nourl");
    const r = await install(["--root", root, "--webhook", "--no-start", "--download-budget", "16MB"], { BOT_TOKEN: fakeToken(), DOCKER_COMPOSE: compose });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("--webhook needs --webhook-url");
    expect(existsSync(join(root, "etc/docket/docket.env"))).toBe(false);
  });

  it("missing TLS files stop the install before anything is written", async () => {
    const root = testTempDir("notls");
    const r = await install(["--root", root, "--webhook-url", HOOK_URL, "--no-start", "--download-budget", "16MB"], { BOT_TOKEN: fakeToken(), DOCKER_COMPOSE: compose });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("TLS file /etc/docket/tls/fullchain.pem is missing or empty");
    expect(r.stderr).toContain("--tls-cert");
    expect(existsSync(join(root, "etc/docket/docket.env"))).toBe(false);
    // Given paths are checked too (here: the key is missing).
    mkdirSync(join(root, "srv/tls"), { recursive: true });
    writeFileSync(join(root, "srv/tls/cert.pem"), "x");
    const r2 = await install(["--root", root, "--webhook-url", HOOK_URL, "--tls-cert", "/srv/tls/cert.pem", "--tls-key", "/srv/tls/key.pem", "--no-start", "--download-budget", "16MB"], {
      BOT_TOKEN: fakeToken(),
    });
    expect(r2.status).toBe(1);
    expect(r2.stderr).toContain("TLS file /srv/tls/key.pem is missing or empty");
  });

  it("--no-webhook goes back to long polling: WEBHOOK_* keys and the nginx include removed, nginx removed", async () => {
    const root = tlsRoot("nohook");
    const first = await install(["--root", root, "--webhook-url", HOOK_URL, "--no-start", "--download-budget", "16MB"], { BOT_TOKEN: fakeToken() });
    expect(first.status).toBe(0);
    // A plain re-run keeps webhook mode (the URL is in docket.env).
    const again = await install(["--root", root, "--no-start"], {});
    expect(again.status).toBe(0);
    expect(again.stderr).toContain("webhook on");
    writeFileSync(recLog, "");
    const r = await install(["--root", root, "--no-webhook", "--no-start"], { DOCKER_COMPOSE: compose });
    expect(r.status).toBe(0);
    const env = readFileSync(join(root, "etc/docket/docket.env"), "utf8");
    expect(env).not.toMatch(/^WEBHOOK_/m);
    expect(env).toMatch(/^BOT_TOKEN=/m);
    expect(existsSync(join(root, "etc/docket/nginx/webhook.conf"))).toBe(false);
    expect(composeCalls()).toEqual([`compose -p docket -f ${root}/opt/docket/current/compose/webhook.yml --env-file ${root}/etc/docket/compose.env rm -s -f nginx`]);
    // And it stays off on the next run.
    const after = await install(["--root", root, "--no-start"], {});
    expect(after.stderr).toContain("webhook off");
    expect((await install(["--root", root, "--no-webhook", "--webhook", "--no-start"], {})).status).toBe(1);
  });
});

describe("install.sh release contents (audit gap 3)", () => {
  it("ships .env.example but never a .env file of the source tree", async () => {
    const src = testTempDir("src");
    const root = testTempDir("envship");
    for (const d of ["scripts", "systemd", "compose"]) cpSync(join(repoRoot, d), join(src, d), { recursive: true });
    cpSync(join(repoRoot, "package.json"), join(src, "package.json"));
    writeFileSync(join(src, ".env.example"), "BOT_TOKEN=\n");
    writeFileSync(join(src, ".env"), "ALLOWED_USER_IDS=1\n");
    writeFileSync(join(src, ".env.local"), "LOG_LEVEL=trace\n");
    mkdirSync(join(src, "bot"));
    writeFileSync(join(src, "bot/.env"), "X=1\n");
    const r = await runCmdAsync(["bash", join(src, "scripts/install.sh"), "--non-interactive", "--root", root, "--no-start", "--download-budget", "16MB"], {
      env: { BOT_TOKEN: fakeToken() },
    });
    expect(r.status).toBe(0);
    const rel = join(root, "opt/docket/current");
    expect(existsSync(join(rel, ".env.example"))).toBe(true);
    expect(existsSync(join(rel, "package.json"))).toBe(true);
    for (const f of [".env", ".env.local", "bot/.env"]) expect(existsSync(join(rel, f)), f).toBe(false);
  });
});

describe("install.sh mode change of an installed bot (audit gap 8)", () => {
  it("keeps the old mode in docket.env, starts the new server, then hands the move to `docket mode` (no restart, no logOut of its own)", async () => {
    const root = testTempDir("switch");
    const first = await install(["--root", root, "--no-start", "--download-budget", "16MB"], { BOT_TOKEN: fakeToken() });
    expect(first.status).toBe(0);
    writeFileSync(recLog, "");
    const cli = makeRecorder(work, "docket", recLog);
    const r = await install(["--root", root, "--mode", "local", "--api-id", "9", "--logout-cloud", "--http-port", String(health!.port)], {
      TELEGRAM_API_HASH: API_HASH, SYSTEMCTL: systemctl, DOCKER_COMPOSE: compose, DOCKET_CLI: cli, HEALTH_TIMEOUT: "1",
    });
    expect(r.stderr).toContain("mode change cloud -> local");
    expect(r.status).toBe(0);
    const env = readFileSync(join(root, "etc/docket/docket.env"), "utf8");
    // `docket mode` (a recorder here) rewrites these two keys only once the new server answered.
    expect(env).toContain("BOT_API_MODE=cloud\n");
    expect(env).toContain("BOT_API_ROOT=https://api.telegram.org\n");
    expect(env).toContain("LOCAL_BOT_API_DIR=/var/lib/docket/bot-api\n");
    expect(r.stderr).toContain("logOut on api.telegram.org is done by `docket mode local` (step 10), after the service stopped");
    expect(r.stderr).not.toContain("skipped: logOut on api.telegram.org");
    const calls = readFileSync(recLog, "utf8").trim().split("\n").map((l) => l.replace(/ --env-file \S+/, "").replace(/ -f \S+/g, ""));
    expect(calls).toEqual([
      "compose -p docket pull bot-api",
      "compose -p docket up -d bot-api",
      "systemctl daemon-reload",
      "systemctl enable docket.service docket-janitor.timer docket-backup.timer",
      `docket mode local --env ${root}/etc/docket/docket.env --api-root http://127.0.0.1:8081`,
      "systemctl start docket-janitor.timer docket-backup.timer",
    ]);
  });

  it("local → cloud is handed to `docket mode cloud` as well (it closes on the local server)", async () => {
    const root = testTempDir("switchback");
    const first = await install(["--root", root, "--no-start", "--mode", "local", "--api-id", "9", "--download-budget", "16MB"], { BOT_TOKEN: fakeToken(), TELEGRAM_API_HASH: API_HASH });
    expect(first.status).toBe(0);
    writeFileSync(recLog, "");
    const cli = makeRecorder(work, "docket", recLog);
    const r = await install(["--root", root, "--mode", "cloud", "--http-port", String(health!.port)], { SYSTEMCTL: systemctl, DOCKER_COMPOSE: compose, DOCKET_CLI: cli });
    expect(r.status).toBe(0);
    expect(readFileSync(join(root, "etc/docket/docket.env"), "utf8")).toContain("BOT_API_MODE=local\n");
    const calls = readFileSync(recLog, "utf8").trim().split("\n");
    expect(calls).toContain(`docket mode cloud --env ${root}/etc/docket/docket.env --api-root https://api.telegram.org`);
    expect(calls).not.toContain("systemctl restart docket.service");
    expect(calls.filter((l) => l.startsWith("compose "))).toEqual([]);
    expect(r.stderr).toContain("The local Bot API server still runs");
    // The stop command printed is the compose client install.sh used (newcomer item 2).
    expect(r.stderr).toContain(`need it: ${compose} -p docket -f /opt/docket/current/compose/docker-compose.yml`);
  });

  it("refuses a mode change with --no-start before changing anything", async () => {
    const root = testTempDir("switchnostart");
    expect((await install(["--root", root, "--no-start", "--download-budget", "16MB"], { BOT_TOKEN: fakeToken() })).status).toBe(0);
    const before = snapshotTree(root);
    const r = await install(["--root", root, "--mode", "local", "--api-id", "9", "--no-start"], { TELEGRAM_API_HASH: API_HASH });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("--no-start cannot change the Bot API mode");
    expect(snapshotTree(root)).toEqual(before);
  });
});
