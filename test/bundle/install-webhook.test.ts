/**
 * install.sh in webhook mode, with recorders (the end-to-end run with a real nginx is
 * webhook-nginx.test.ts): which compose file nginx gets, the generated files, the refusals of
 * bad URLs and TLS files, and the way back to long polling. Also what a release ships.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fakeToken, makeRecorder, modeOf, repoRoot, runCmdAsync, testTempDir, writeSelfSignedTls } from "./helpers";
import { API_HASH, HOOK_URL, expectComposeServices, tlsRoot, useInstallHarness } from "./install-harness";
import { toolReady } from "../support/tools";

const h = useInstallHarness();
const install = h.install;
/** Whether the compose renders run (a missing client prints its skip line once; CI fails). */
const haveCompose = toolReady("compose");
/** Recorded compose calls (lines starting with "compose "). */
const composeCalls = () => readFileSync(h.recLog, "utf8").split("\n").filter((l) => l.startsWith("compose "));

describe("install.sh webhook mode (audit of issue 6: gaps 1, 4, 5, 11)", () => {
  it("cloud + webhook on a fresh host: Docker is installed, compose gets compose/webhook.yml alone and renders without bot-api.env", async () => {
    const root = tlsRoot("cloudhook");
    writeFileSync(h.recLog, "");
    const apt = makeRecorder(h.work, "apt-get", h.recLog);
    const r = await install(["--root", root, "--webhook-url", HOOK_URL, "--no-start", "--download-budget", "16MB"], {
      BOT_TOKEN: fakeToken(), DOCKER_COMPOSE: h.compose, APT_GET: apt, SYSTEMCTL: h.systemctl,
    });
    expect(r.stderr).toContain("==> step 12: next steps");
    expect(r.status).toBe(0);
    // Docker: installed by apt (docker.io) unless this machine already has it.
    if (Bun.which("docker")) expect(r.stderr).toContain("= docker present");
    else expect(readFileSync(h.recLog, "utf8")).toContain("install -y -qq --no-install-recommends docker.io");
    expect(readFileSync(h.recLog, "utf8")).toContain("systemctl enable --now docker.service");
    const calls = composeCalls();
    expect(calls).toEqual([`compose -p docket -f ${root}/opt/docket/current/compose/webhook.yml --env-file ${root}/etc/docket/compose.env pull nginx`]);
    expect(existsSync(join(root, "etc/docket/bot-api.env"))).toBe(false);
    expectComposeServices(haveCompose, calls[0]!, root, ["nginx"]);
  });

  it("cloud without a webhook installs no Docker and runs no compose", async () => {
    const root = testTempDir("cloudpoll");
    writeFileSync(h.recLog, "");
    const apt = makeRecorder(h.work, "apt-get", h.recLog);
    const r = await install(["--root", root, "--no-start", "--download-budget", "16MB"], { BOT_TOKEN: fakeToken(), DOCKER_COMPOSE: h.compose, APT_GET: apt });
    expect(r.status).toBe(0);
    const log = readFileSync(h.recLog, "utf8");
    expect(log).toContain("install -y -qq --no-install-recommends ca-certificates curl sqlite3 openssl");
    expect(log).not.toContain("docker");
    expect(composeCalls()).toEqual([]);
  });

  it("local mode alone renders with the real compose client (bot-api only)", async () => {
    const root = testTempDir("localonly");
    writeFileSync(h.recLog, "");
    const r = await install(["--root", root, "--no-start", "--mode", "local", "--api-id", "7", "--download-budget", "16MB"], {
      BOT_TOKEN: fakeToken(), TELEGRAM_API_HASH: API_HASH, DOCKER_COMPOSE: h.compose,
    });
    expect(r.status).toBe(0);
    const calls = composeCalls();
    // --no-start: the image is pulled, nothing is started.
    expect(calls).toEqual([`compose -p docket -f ${root}/opt/docket/current/compose/docker-compose.yml --env-file ${root}/etc/docket/compose.env pull bot-api`]);
    expectComposeServices(haveCompose, calls[0]!, root, ["bot-api"]);
  });

  it("derives WEBHOOK_PATH and the nginx path from --webhook-url", async () => {
    const root = tlsRoot("hookpath");
    const r = await install(["--root", root, "--webhook-url", "https://x.example.com/tg/hook", "--no-start", "--download-budget", "16MB"], { BOT_TOKEN: fakeToken() });
    expect(r.status).toBe(0);
    const env = readFileSync(join(root, "etc/docket/docket.env"), "utf8");
    expect(env).toContain("WEBHOOK_URL=https://x.example.com/tg/hook\n");
    expect(env).toContain("WEBHOOK_PATH=/tg/hook\n");
    expect(env).not.toContain("/telegram/webhook");
    const conf = readFileSync(join(root, "etc/docket/nginx/webhook.inc"), "utf8");
    expect(conf).toContain('map $uri $docket_webhook_path {\n    default 0;\n    "~^/tg/hook$" 1;\n}');
    expect(conf).not.toContain("/telegram/webhook");
    // Everything nginx reads is in the one directory it gets mounted, the key and secret private.
    const dir = join(root, "etc/docket/nginx");
    expect(readFileSync(join(dir, "docket.conf"), "utf8")).toBe(readFileSync(join(repoRoot, "compose/nginx/docket.conf"), "utf8"));
    expect([modeOf(dir), modeOf(join(dir, "webhook.inc")), modeOf(join(dir, "tls/privkey.pem")), modeOf(join(dir, "tls/fullchain.pem"))]).toEqual(["750", "640", "600", "644"]);
    expect(readFileSync(join(dir, "tls/fullchain.pem"), "utf8")).toBe(readFileSync(join(root, "etc/docket/tls/fullchain.pem"), "utf8"));
  });

  it("an older install's nginx/webhook.conf goes (nginx would load its maps twice)", async () => {
    const root = tlsRoot("oldinclude");
    mkdirSync(join(root, "etc/docket/nginx"), { recursive: true });
    writeFileSync(join(root, "etc/docket/nginx/webhook.conf"), "map $uri $docket_webhook_path { default 0; }\n");
    const r = await install(["--root", root, "--webhook-url", HOOK_URL, "--no-start", "--download-budget", "16MB"], { BOT_TOKEN: fakeToken() });
    expect(r.status).toBe(0);
    expect(existsSync(join(root, "etc/docket/nginx/webhook.conf"))).toBe(false);
    expect(existsSync(join(root, "etc/docket/nginx/webhook.inc"))).toBe(true);
  });

  it("refuses a certificate and key that do not belong together, naming both, before writing anything", async () => {
    const root = tlsRoot("tlspair");
    writeSelfSignedTls(join(root, "srv/other.pem"), join(root, "srv/other.key"));
    const r = await install(["--root", root, "--webhook-url", HOOK_URL, "--tls-key", "/srv/other.key", "--no-start", "--download-budget", "16MB"], { BOT_TOKEN: fakeToken() });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`TLS files ${root}/etc/docket/tls/fullchain.pem and ${root}/srv/other.key do not belong together`);
    expect(existsSync(join(root, "etc/docket/docket.env"))).toBe(false);
    writeFileSync(join(root, "srv/garbage.pem"), "not a certificate\n");
    const g = await install(["--root", root, "--webhook-url", HOOK_URL, "--tls-cert", "/srv/garbage.pem", "--no-start", "--download-budget", "16MB"], { BOT_TOKEN: fakeToken() });
    expect(g.status).toBe(1);
    expect(g.stderr).toContain(`TLS file ${root}/srv/garbage.pem is not a PEM certificate`);
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
    const r = await install(["--root", root, "--webhook", "--no-start", "--download-budget", "16MB"], { BOT_TOKEN: fakeToken(), DOCKER_COMPOSE: h.compose });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("--webhook needs --webhook-url");
    expect(existsSync(join(root, "etc/docket/docket.env"))).toBe(false);
  });

  it("missing TLS files stop the install before anything is written", async () => {
    const root = testTempDir("notls");
    const r = await install(["--root", root, "--webhook-url", HOOK_URL, "--no-start", "--download-budget", "16MB"], { BOT_TOKEN: fakeToken(), DOCKER_COMPOSE: h.compose });
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
    writeFileSync(h.recLog, "");
    const r = await install(["--root", root, "--no-webhook", "--no-start"], { DOCKER_COMPOSE: h.compose });
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
