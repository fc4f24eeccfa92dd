/**
 * compose/docker-compose.yml through the real compose client's `config` (no engine needed):
 * `docker compose` (v2 plugin) when present, else `docker-compose` (v1, Debian 12's package,
 * brought by the test command). Asserts the pinned images, the same-path bind mount of the
 * Bot API --dir, the loopback-only port, the env file for api id/hash, and nginx in its own file
 * (compose/webhook.yml) so that cloud mode with a webhook renders without bot-api.env.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { composeClient, makeTempDir, removeDir, repoRoot, runCmd } from "./helpers";
import { toolReady } from "../support/tools";

const composeFile = join(repoRoot, "compose/docker-compose.yml");
const webhookFile = join(repoRoot, "compose/webhook.yml");

type Service = Record<string, unknown> & {
  image: string;
  user?: string;
  command?: string[];
  entrypoint?: string[];
  cap_drop?: string[];
  security_opt?: string[];
  read_only?: boolean;
  restart?: string;
  mem_limit?: string | number;
  environment?: Record<string, string>;
  ports?: (string | { host_ip?: string; published?: string | number; target: number })[];
  volumes?: { type: string; source: string; target: string; read_only?: boolean }[];
  profiles?: string[];
  network_mode?: string;
  healthcheck?: { test: string[] };
};

const ready = toolReady("compose");
const client = composeClient();
let etc = "";
/** The server's uid and gid as install.sh writes them to compose.env (any numbers here). */
const ids = { DOCKET_BOT_API_UID: "998", DOCKET_BOT_API_GID: "997" };

beforeAll(() => {
  etc = makeTempDir("compose-etc");
  mkdirSync(join(etc, "nginx"));
  writeFileSync(join(etc, "bot-api.env"), "TELEGRAM_API_ID=123456\nTELEGRAM_API_HASH=0123456789abcdef0123456789abcdef\n", { mode: 0o600 });
});
afterAll(() => removeDir(etc));

/** `config` rendered and parsed; throws with the client's stderr on failure. */
function config(env: Record<string, string>, files: string[] = [composeFile]): { services: Record<string, Service> } {
  const r = runCmd([...client!, "-p", "docket", ...files.flatMap((f) => ["-f", f]), "config"], { env: { DOCKET_ETC_DIR: etc, ...ids, ...env } });
  if (r.status !== 0) throw new Error(`compose config failed (${r.status}): ${r.stderr}`);
  return Bun.YAML.parse(r.stdout) as { services: Record<string, Service> };
}

/** Published ports as [host_ip, published, target] whatever the client's output form. */
function ports(s: Service): [string, string, string][] {
  return (s.ports ?? []).map((p) => {
    if (typeof p === "string") {
      const [ip, pub, tgt] = p.replace(/\/tcp$/, "").split(":");
      return [ip!, pub!, tgt!];
    }
    return [p.host_ip ?? "0.0.0.0", String(p.published), String(p.target)];
  });
}

describe.skipIf(!ready)("docker compose config", () => {
  it("renders the local Bot API server with pins, same-path volume and loopback port", () => {
    const { services } = config({});
    const api = services["bot-api"]!;
    expect(api.image).toMatch(/^aiogram\/telegram-bot-api:\d+\.\d+@sha256:[0-9a-f]{64}$/);
    expect(api.environment).toEqual({ TELEGRAM_API_ID: "123456", TELEGRAM_API_HASH: "0123456789abcdef0123456789abcdef" });
    // The server itself, as the host's docket-botapi uid:gid, in --local mode, without its stats page.
    expect(api.entrypoint).toEqual(["/usr/local/bin/telegram-bot-api"]);
    expect(api.user).toBe("998:997");
    expect(api.command).toEqual(["--local", "--http-port=8081", "--dir=/var/lib/docket/bot-api", "--temp-dir=/var/lib/docket/bot-api-temp"]);
    const binds = (api.volumes ?? []).map((v) => [v.type, v.source, v.target]);
    expect(binds).toContainEqual(["bind", "/var/lib/docket/bot-api", "/var/lib/docket/bot-api"]);
    expect(binds).toContainEqual(["bind", "/var/lib/docket/bot-api-temp", "/var/lib/docket/bot-api-temp"]);
    expect(ports(api)).toEqual([["127.0.0.1", "8081", "8081"]]);
    expect(api.healthcheck?.test.join(" ")).toContain("http://127.0.0.1:8081/");
  });

  it("the stats page (it prints the bot token) stays off, and the server is confined (issue 9 item 8)", () => {
    const api = config({}).services["bot-api"]!;
    const all = JSON.stringify(api);
    expect(all).not.toMatch(/stat-port|TELEGRAM_STAT|8082/);
    expect(api).toMatchObject({ restart: "unless-stopped", read_only: true, cap_drop: ["ALL"], security_opt: ["no-new-privileges:true"] });
    expect(api.mem_limit).toBeTruthy();
    expect(config({ DOCKET_BOT_API_MEMORY: "768m" }).services["bot-api"]!.mem_limit).toMatch(/^(768m|805306368)$/);
  });

  it("refuses to render without the server's uid and gid, naming install.sh", () => {
    const r = runCmd([...client!, "-p", "docket", "-f", composeFile, "config"], { env: { DOCKET_ETC_DIR: etc, DOCKET_BOT_API_UID: "", DOCKET_BOT_API_GID: "" } });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("DOCKET_BOT_API_UID is not set: run scripts/install.sh");
  });

  it("keeps the same absolute path on both sides when the operator moves the directory", () => {
    const { services } = config({ DOCKET_BOT_API_DIR: "/srv/docket/tg", DOCKET_BOT_API_TEMP_DIR: "/srv/docket/tg-temp", DOCKET_BOT_API_PORT: "18081" });
    const api = services["bot-api"]!;
    expect((api.volumes ?? []).map((v) => [v.source, v.target])).toEqual([["/srv/docket/tg", "/srv/docket/tg"], ["/srv/docket/tg-temp", "/srv/docket/tg-temp"]]);
    expect(api.command).toContain("--dir=/srv/docket/tg");
    expect(api.command).toContain("--temp-dir=/srv/docket/tg-temp");
    expect(ports(api)).toEqual([["127.0.0.1", "18081", "8081"]]);
  });

  it("nginx is only in compose/webhook.yml, pinned, and publishes nothing itself (local + webhook)", () => {
    expect(Object.keys(config({}).services)).toEqual(["bot-api"]);
    const { services } = config({}, [composeFile, webhookFile]);
    expect(Object.keys(services).sort()).toEqual(["bot-api", "nginx"]);
    const nginx = services.nginx!;
    expect(nginx.image).toMatch(/^nginx:[\w.-]+@sha256:[0-9a-f]{64}$/);
    expect(nginx.network_mode).toBe("host");
    expect(nginx.ports ?? []).toEqual([]);
    // No service publishes anything beyond loopback.
    for (const s of Object.values(services)) for (const [ip] of ports(s)) expect(ip).toBe("127.0.0.1");
  });

  it("nginx reads one directory, mounted as a directory: a renamed file shows through (issue 9 item 3)", () => {
    const nginx = config({}, [webhookFile]).services.nginx!;
    // A single-file bind mount keeps the inode it was created with; only directories follow renames.
    expect(nginx.volumes).toEqual([{ type: "bind", source: join(etc, "nginx"), target: "/etc/nginx/conf.d", read_only: true }]);
    expect(nginx).toMatchObject({ restart: "unless-stopped", read_only: true, cap_drop: ["ALL"], security_opt: ["no-new-privileges:true"] });
    expect((nginx.cap_add as string[]).sort()).toEqual(["CHOWN", "NET_BIND_SERVICE", "SETGID", "SETUID"]);
    expect(nginx.mem_limit).toBeTruthy();
  });

  it("cloud + webhook renders nginx alone, with no bot-api.env anywhere", () => {
    const { services } = config({ DOCKET_ETC_DIR: join(etc, "missing") }, [webhookFile]);
    expect(Object.keys(services)).toEqual(["nginx"]);
  });

  it("refuses to render without the api id/hash env file (the check can fail)", () => {
    const r = runCmd([...client!, "-p", "docket", "-f", composeFile, "config"], { env: { DOCKET_ETC_DIR: join(etc, "missing"), ...ids } });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("bot-api.env");
  });
});
