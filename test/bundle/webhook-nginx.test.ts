/**
 * Webhook mode across changes and renewals (issue 9 item 3), end to end with a real nginx.
 *
 * Everything runs in a network namespace of its own (`ip netns`), so nginx listens on the real
 * :443 with the shipped compose/nginx/docket.conf, unchanged. The test's systemctl stub plays
 * systemd: `restart docket-nginx.service` starts nginx on the throwaway root's /etc/docket/nginx
 * (a symlink at nginx's conf.d, as the container has that directory mounted), `reload` runs
 * `nginx -t` and `nginx -s reload`, and `restart docket.service` starts a stand-in bot
 * (support/fake-webhook-bot.ts) that reads docket.env as the bot does. install.sh and the
 * certbot deploy hook then have to make nginx serve a new URL, a new port and a renewed
 * certificate, and install.sh's own check has to see it.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeToken, makeRecorder, makeTempDir, removeDir, repoRoot, runCmd, runCmdAsync, writeExecutable } from "./helpers";
import { toolReady } from "../support/tools";

/** A network namespace needs root: a note, not a tool, when the suite runs unprivileged. */
const root0 = process.getuid?.() === 0;
if (!root0) console.warn("skipped: test/bundle/webhook-nginx.test.ts: needs root (ip netns add) for nginx on :443 in a network namespace");
const ready = root0 && toolReady("nginx") && toolReady("openssl") && toolReady("curl") && toolReady("ip");
const HOST = "bot.example.org";
const LIVE = `/etc/letsencrypt/live/${HOST}`;

let work = "";
let root = "";
let prefix = "";
let netns = "";
let recLog = "";
let botLog = "";
let systemctl = "";
let compose = "";

/** A command line run inside the test's network namespace. */
const inNs = (argv: string[]) => ["ip", "netns", "exec", netns, ...argv];

/**
 * A certificate for HOST with its own key, stored the way certbot does: archive/HOST/NAME{n}.pem
 * and live/HOST/*.pem symlinks to them. Returns the SHA-256 fingerprint.
 */
function issueCert(n: number, keyFor = n): string {
  const archive = join(root, "etc/letsencrypt/archive", HOST);
  mkdirSync(archive, { recursive: true });
  mkdirSync(join(root, LIVE), { recursive: true });
  for (const k of [n, keyFor]) {
    const key = join(archive, `privkey${k}.pem`);
    if (!existsSync(key)) runCmd(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key]);
  }
  const crt = join(archive, `fullchain${n}.pem`);
  const r = runCmd(["openssl", "req", "-x509", "-new", "-key", join(archive, `privkey${n}.pem`), "-days", "2", "-subj", `/CN=${HOST}`, "-addext", `subjectAltName=DNS:${HOST}`, "-out", crt]);
  if (r.status !== 0) throw new Error(r.stderr);
  for (const [name, target] of [["fullchain.pem", `fullchain${n}.pem`], ["privkey.pem", `privkey${keyFor}.pem`]] as const) {
    rmSync(join(root, LIVE, name), { force: true });
    symlinkSync(`../../archive/${HOST}/${target}`, join(root, LIVE, name));
  }
  return fingerprintOf(crt);
}

function fingerprintOf(pem: string): string {
  return runCmd(["openssl", "x509", "-noout", "-fingerprint", "-sha256", "-in", pem]).stdout.trim().replace(/^.*=/, "");
}

/** The fingerprint of the certificate nginx presents on :443 in the namespace for HOST. */
function servedFingerprint(): string {
  const r = runCmd(inNs(["sh", "-c", `openssl s_client -connect 127.0.0.1:443 -servername ${HOST} </dev/null 2>/dev/null | openssl x509 -noout -fingerprint -sha256`]));
  return r.stdout.trim().replace(/^.*=/, "");
}

/** HTTP status of a webhook POST through nginx in the namespace (secret from docket.env, or none). */
function post(path: string, withSecret: boolean): string {
  const env = readFileSync(join(root, "etc/docket/docket.env"), "utf8");
  const secret = /^WEBHOOK_SECRET=(.+)$/m.exec(env)![1]!;
  const args = ["curl", "-sk", "--max-time", "5", "--resolve", `${HOST}:443:127.0.0.1`, "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "--data", '{"update_id":7}'];
  if (withSecret) args.push("-H", `X-Telegram-Bot-Api-Secret-Token: ${secret}`);
  return runCmd(inNs([...args, `https://${HOST}${path}`])).stdout;
}

const install = (args: string[], env: Record<string, string> = {}) =>
  runCmdAsync(inNs(["bash", "scripts/install.sh", "--non-interactive", "--root", root, "--http-port", "18090", ...args]), {
    env: { SYSTEMCTL: systemctl, DOCKER_COMPOSE: compose, HEALTH_TIMEOUT: "10", BOT_TOKEN: undefined, ...env },
    timeoutMs: 120_000,
  });

const hook = (env: Record<string, string> = {}) =>
  runCmdAsync(inNs(["bash", "scripts/certbot-deploy-hook.sh", "--root", root]), { env: { SYSTEMCTL: systemctl, ...env }, timeoutMs: 60_000 });

beforeAll(() => {
  if (!ready) return;
  work = makeTempDir("webhook");
  root = join(work, "root");
  prefix = join(work, "nginx");
  recLog = join(work, "calls.log");
  botLog = join(work, "bot.log");
  mkdirSync(root);
  mkdirSync(join(prefix, "tmp"), { recursive: true, mode: 0o777 });
  runCmd(["chmod", "0777", join(prefix, "tmp")]);
  // The image's nginx.conf, reduced: conf.d/*.conf inside http {}, paths under the prefix.
  symlinkSync(join(root, "etc/docket/nginx"), join(prefix, "conf.d"));
  writeFileSync(join(prefix, "nginx.conf"), [
    `pid ${prefix}/nginx.pid;`, `error_log ${prefix}/error.log;`, "events { worker_connections 64; }", "http {",
    ...["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((t) => `  ${t}_temp_path ${prefix}/tmp/${t};`),
    "  include conf.d/*.conf;", "}", ""].join("\n"));
  netns = `docket-wh-${process.pid}`;
  runCmd(["ip", "netns", "add", netns]);
  runCmd(inNs(["ip", "link", "set", "lo", "up"]));
  const nginx = `nginx -p ${prefix}/ -c ${prefix}/nginx.conf -e ${prefix}/error.log`;
  systemctl = join(work, "systemctl");
  writeExecutable(systemctl, `#!/bin/bash
printf 'systemctl %s\\n' "$*" >> '${recLog}'
stop_nginx() { [ -f '${prefix}/nginx.pid' ] && kill "$(cat '${prefix}/nginx.pid')" 2>/dev/null; for i in $(seq 50); do [ -f '${prefix}/nginx.pid' ] || break; sleep 0.1; done; }
case "$*" in
  "restart docket-nginx.service") stop_nginx; ${nginx} >>'${prefix}/access.log' 2>&1 ;;
  "reload docket-nginx.service") ${nginx} -t -q >>'${prefix}/access.log' 2>&1 && ${nginx} -s reload >>'${prefix}/access.log' 2>&1 ;;
  "disable --now docket-nginx.service") stop_nginx ;;
  "restart docket.service")
    if [ -f '${work}/bot.pid' ]; then pid="$(cat '${work}/bot.pid')"; kill "$pid" 2>/dev/null; while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done; fi
    setsid bun '${join(repoRoot, "test/bundle/support/fake-webhook-bot.ts")}' '${root}' '${botLog}' >/dev/null 2>&1 < /dev/null & echo $! > '${work}/bot.pid' ;;
esac
`);
  compose = makeRecorder(work, "compose", recLog);
});

afterAll(() => {
  if (!ready) return;
  for (const pid of [join(prefix, "nginx.pid"), join(work, "bot.pid")]) {
    if (existsSync(pid)) runCmd(["kill", readFileSync(pid, "utf8").trim()]);
  }
  runCmd(["ip", "netns", "del", netns]);
  removeDir(work);
});

describe.skipIf(!ready)("webhook nginx across changes and renewals (real nginx on :443 in a network namespace)", () => {
  let first = "";

  it("a first webhook install starts nginx on the installed files and checks the webhook through it", async () => {
    first = issueCert(1);
    writeFileSync(recLog, "");
    const r = await install(["--webhook-url", `https://${HOST}/hook-one`, "--webhook-port", "18091", "--tls-cert", `${LIVE}/fullchain.pem`, "--tls-key", `${LIVE}/privkey.pem`], { BOT_TOKEN: fakeToken() });
    expect(r.stderr).toContain(`webhook: nginx serves /hook-one for ${HOST} with the installed certificate, and the bot answers through it`);
    expect(r.status).toBe(0);
    expect(servedFingerprint()).toBe(first);
    expect(post("/hook-one", true)).toBe("200");
    expect(post("/hook-one", false)).toBe("403");
    // install.sh's own probe reached the bot with the empty update, through nginx.
    expect(readFileSync(botLog, "utf8")).toContain('"path":"/hook-one","secretOk":true,"body":"{\\"update_id\\":0}"');
    const calls = readFileSync(recLog, "utf8").trim().split("\n");
    const order = ["pull nginx", "systemctl enable docket-nginx.service", "systemctl restart docket-nginx.service", "systemctl restart docket.service"];
    const at = order.map((c) => calls.findIndex((l) => l.endsWith(c)));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    // certbot's deploy hook is in place and runs the current release's script.
    expect(readFileSync(join(root, "etc/letsencrypt/renewal-hooks/deploy/docket-nginx"), "utf8")).toContain("exec /opt/docket/current/scripts/certbot-deploy-hook.sh");
  });

  it("a new webhook URL and port take effect in nginx: the old path is gone, the new one reaches the bot on its new port", async () => {
    writeFileSync(botLog, "");
    const r = await install(["--webhook-url", `https://${HOST}/hook-two`, "--webhook-port", "18092"]);
    expect(r.status).toBe(0);
    expect(r.stderr).toContain("webhook: nginx serves /hook-two");
    expect(post("/hook-one", true)).toBe("404");
    expect(post("/hook-two", true)).toBe("200");
    const seen = readFileSync(botLog, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { port: number; path: string });
    expect(seen.every((s) => s.port === 18092 && s.path === "/hook-two")).toBe(true);
  });

  it("a renewal reloads nginx through the deploy hook: the new certificate is served", async () => {
    const renewed = issueCert(2);
    expect(renewed).not.toBe(first);
    expect(servedFingerprint()).toBe(first); // certbot only moved its symlinks
    writeFileSync(recLog, "");
    const r = await hook({ RENEWED_LINEAGE: LIVE });
    expect(r.stderr).toContain(`docket certificate: nginx serves the renewed certificate for ${HOST} (SHA-256 ${renewed}`);
    expect(r.status).toBe(0);
    expect(servedFingerprint()).toBe(renewed);
    expect(readFileSync(recLog, "utf8")).toBe("systemctl reload docket-nginx.service\n");
    expect(post("/hook-two", true)).toBe("200");
  });

  it("a renewed certificate whose key does not match is refused and nginx keeps serving the last good one", async () => {
    const good = servedFingerprint();
    issueCert(3, 1); // certificate 3 signed by key 3, but live/privkey.pem points at key 1
    const r = await hook({ RENEWED_LINEAGE: LIVE });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`TLS files ${root}${LIVE}/fullchain.pem and ${root}${LIVE}/privkey.pem do not belong together`);
    expect(servedFingerprint()).toBe(good);
    expect(post("/hook-two", true)).toBe("200");
  });

  it("the renewal of another certificate is not ours: nothing changes", async () => {
    writeFileSync(recLog, "");
    const r = await hook({ RENEWED_LINEAGE: "/etc/letsencrypt/live/other.example.org" });
    expect(r.status).toBe(0);
    expect(r.stderr).toContain("not ours, nothing to do");
    expect(readFileSync(recLog, "utf8")).toBe("");
  });

  it("--no-webhook stops nginx and removes its files and the deploy hook", async () => {
    issueCert(4);
    const r = await install(["--no-webhook"]);
    expect(r.stderr).toContain("==> step 12");
    expect(r.status).toBe(0);
    expect(servedFingerprint()).toBe("");
    for (const f of ["docket.conf", "webhook.inc", "tls/privkey.pem"]) expect(existsSync(join(root, "etc/docket/nginx", f)), f).toBe(false);
    expect(existsSync(join(root, "etc/letsencrypt/renewal-hooks/deploy/docket-nginx"))).toBe(false);
  });
});
