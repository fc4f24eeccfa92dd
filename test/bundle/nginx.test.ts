/**
 * compose/nginx/docket.conf: `nginx -t` with dummy certificates, then a live nginx on
 * 127.0.0.1 in front of a Bun.serve standing in for the bot's webhook listener.
 *
 * The webhook include (secret map, webhook-path map, upstream) and the certificate are the ones
 * scripts/install.sh writes into /etc/docket/nginx of a throwaway root with --webhook-url
 * …/tg/hook, seen at conf.d/ of nginx's prefix as the container sees that directory: nginx must
 * serve exactly the path of WEBHOOK_URL (audit of issue 6, gap 4). The live run changes one line of a copy of
 * docket.conf: `listen 443` becomes a free 127.0.0.1 port (binding :443 needs the real host).
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeToken, makeTempDir, removeDir, repoRoot, runCmd, runCmdAsync, testTempDir, writeSelfSignedTls } from "./helpers";
import { toolReady } from "../support/tools";

const ready = toolReady("nginx") && toolReady("openssl");
const docketConf = join(repoRoot, "compose/nginx/docket.conf");

let dir = "";
let upstream: ReturnType<typeof Bun.serve> | undefined;
const received: { path: string; body: string; secret: string | null }[] = [];
/** The path of the --webhook-url given to install.sh (not the old fixed /telegram/webhook). */
const HOOK_PATH = "/tg/hook";
let secret = "";

/**
 * nginx with stdout/stderr going to files: docket.conf logs to /dev/stdout and /dev/stderr (the
 * container's log stream), which cannot be opened when they are sockets, as pipes from Bun are.
 */
function nginxToFiles(args: string[], tag: string): { status: number; out: string } {
  const outPath = join(dir, `${tag}.out`);
  const p = Bun.spawnSync(["nginx", ...args], { stdout: Bun.file(outPath), stderr: Bun.file(outPath), timeout: 30_000 });
  return { status: p.exitCode ?? -1, out: readFileSync(outPath, "utf8") };
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
function freePort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

/** Main nginx.conf that includes `conf` inside http {}, with every path under `dir`. */
function mainConf(conf: string): string {
  return [
    `pid ${dir}/nginx.pid;`,
    `error_log ${dir}/error.log;`,
    "events { worker_connections 64; }",
    "http {",
    `  client_body_temp_path ${dir}/tmp/body;`,
    `  proxy_temp_path ${dir}/tmp/proxy;`,
    `  fastcgi_temp_path ${dir}/tmp/fastcgi;`,
    `  uwsgi_temp_path ${dir}/tmp/uwsgi;`,
    `  scgi_temp_path ${dir}/tmp/scgi;`,
    `  include ${conf};`,
    "}",
    "",
  ].join("\n");
}

beforeAll(async () => {
  if (!ready) return;
  dir = makeTempDir("nginx");
  mkdirSync(join(dir, "tmp"), { recursive: true });
  upstream = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      received.push({ path: new URL(req.url).pathname, body: await req.text(), secret: req.headers.get("x-telegram-bot-api-secret-token") });
      return new Response("", { status: 200 });
    },
  });
  // The nginx directory as install.sh writes it (webhook on, upstream = our Bun.serve), seen at
  // conf.d of the prefix as the container sees it (a directory mount at /etc/nginx/conf.d).
  const root = join(dir, "root");
  writeSelfSignedTls(join(root, "etc/docket/tls/fullchain.pem"), join(root, "etc/docket/tls/privkey.pem"), "docket.test");
  const r = runCmd(
    ["bash", "scripts/install.sh", "--root", root, "--webhook-url", `https://bot.example.org${HOOK_PATH}`, "--webhook-port", String(upstream.port), "--no-start", "--non-interactive", "--download-budget", "16MB"],
    { env: { BOT_TOKEN: fakeToken() } },
  );
  if (r.status !== 0) throw new Error(`install.sh failed: ${r.stderr}`);
  symlinkSync(join(root, "etc/docket/nginx"), join(dir, "conf.d"));
  secret = /^WEBHOOK_SECRET=(.+)$/m.exec(readFileSync(join(root, "etc/docket/docket.env"), "utf8"))![1]!;
});
afterAll(() => {
  upstream?.stop(true);
  if (dir) removeDir(dir);
});

describe.skipIf(!ready)("nginx docket.conf", () => {
  it("the generated secret is a valid Bot API secret_token (1-256 of A-Za-z0-9_-)", () => {
    expect(secret).toMatch(/^[A-Za-z0-9_-]{32,256}$/);
  });

  it("passes nginx -t", () => {
    writeFileSync(join(dir, "nginx.conf"), mainConf(docketConf));
    const r = nginxToFiles(["-t", "-e", join(dir, "error.log"), "-p", `${dir}/`, "-c", join(dir, "nginx.conf")], "t");
    expect(r.out).toContain("test is successful");
    expect(r.status).toBe(0);
  });

  it("fails nginx -t without the generated include (the check can fail)", () => {
    const empty = testTempDir("nginx-empty");
    writeFileSync(join(empty, "nginx.conf"), mainConf(docketConf).replaceAll(dir, empty));
    mkdirSync(join(empty, "tmp"));
    const r = nginxToFiles(["-t", "-e", join(empty, "error.log"), "-p", `${empty}/`, "-c", join(empty, "nginx.conf")], "t-empty");
    expect(r.status).not.toBe(0);
    expect(r.out).toContain("webhook.inc");
  });

  it("serves only POST to the WEBHOOK_URL path with the right secret, and masks tokens in its log", async () => {
    const port = freePort();
    const live = join(dir, "docket-live.conf");
    const conf = readFileSync(docketConf, "utf8");
    expect(conf).toContain("listen 443 ssl default_server;");
    writeFileSync(live, conf.replace("listen 443 ssl default_server;", `listen 127.0.0.1:${port} ssl default_server;`));
    writeFileSync(join(dir, "nginx-live.conf"), mainConf(live));
    const logPath = join(dir, "live.out");
    const nginx = Bun.spawn(["nginx", "-e", join(dir, "error.log"), "-p", `${dir}/`, "-c", join(dir, "nginx-live.conf"), "-g", "daemon off;"], {
      stdout: Bun.file(logPath),
      stderr: Bun.file(join(dir, "live.err")),
    });
    try {
      const url = `https://127.0.0.1:${port}`;
      const curl = (args: string[]) =>
        runCmdAsync(["curl", "-sk", "--max-time", "5", "-o", "/dev/null", "-w", "%{http_code}", ...args]).then((r) => r.stdout);
      // Wait until nginx accepts connections (bounded).
      let ready = false;
      for (let i = 0; i < 50 && !ready; i++) {
        ready = (await curl([`${url}/`])) === "404";
        if (!ready) await Bun.sleep(100);
      }
      expect(ready).toBe(true);
      const update = JSON.stringify({ update_id: 1, message: { message_id: 1, text: "hi" } });
      const post = (hdr?: string) =>
        curl(["-X", "POST", "-H", "content-type: application/json", ...(hdr ? ["-H", hdr] : []), "--data", update, `${url}${HOOK_PATH}`]);
      expect(await post()).toBe("403");
      expect(await post("X-Telegram-Bot-Api-Secret-Token: wrong")).toBe("403");
      expect(await post(`X-Telegram-Bot-Api-Secret-Token: ${secret.toLowerCase() === secret ? secret.toUpperCase() : secret.toLowerCase()}`)).toBe("403");
      expect(received).toHaveLength(0);
      expect(await post(`X-Telegram-Bot-Api-Secret-Token: ${secret}`)).toBe("200");
      expect(received).toEqual([{ path: HOOK_PATH, body: update, secret }]);
      expect(await curl(["-H", `X-Telegram-Bot-Api-Secret-Token: ${secret}`, `${url}${HOOK_PATH}`])).toBe("403"); // GET
      // Only that exact path: the old fixed one, a prefix, a longer one or another case are 404.
      for (const other of ["/telegram/webhook", "/tg", `${HOOK_PATH}/x`, `${HOOK_PATH}x`, "/TG/HOOK"]) {
        expect(await curl(["-X", "POST", "-H", `X-Telegram-Bot-Api-Secret-Token: ${secret}`, "--data", update, `${url}${other}`]), other).toBe("404");
      }
      expect(received).toHaveLength(1);
      const token = fakeToken();
      expect(await curl([`${url}/bot${token}/getMe?x=1`])).toBe("404");
      expect(await curl([`${url}/file/bot${token}/documents/file_1.pdf`])).toBe("404");
      nginx.kill("SIGQUIT");
      await nginx.exited;
      const log = readFileSync(logPath, "utf8");
      expect(log).toContain(`"POST ${HOOK_PATH}" 200`);
      expect(log).toContain('"GET /bot<token>/getMe" 404');
      expect(log).toContain('"GET /file/bot<token>/documents/file_1.pdf" 404');
      expect(log).not.toContain(token);
      expect(log).not.toContain(token.split(":")[1]!);
      expect(log).not.toContain(secret);
    } finally {
      nginx.kill("SIGKILL");
      await nginx.exited;
    }
  });
});
