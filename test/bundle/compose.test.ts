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
  environment?: Record<string, string>;
  ports?: (string | { host_ip?: string; published?: string | number; target: number })[];
  volumes?: { type: string; source: string; target: string }[];
  profiles?: string[];
  network_mode?: string;
  healthcheck?: { test: string[] };
};

const ready = toolReady("compose");
const client = composeClient();
let etc = "";

beforeAll(() => {
  etc = makeTempDir("compose-etc");
  mkdirSync(join(etc, "nginx"));
  writeFileSync(join(etc, "bot-api.env"), "TELEGRAM_API_ID=123456\nTELEGRAM_API_HASH=0123456789abcdef0123456789abcdef\n", { mode: 0o600 });
});
afterAll(() => removeDir(etc));

/** `config` rendered and parsed; throws with the client's stderr on failure. */
function config(env: Record<string, string>, files: string[] = [composeFile]): { services: Record<string, Service> } {
  const r = runCmd([...client!, "-p", "docket", ...files.flatMap((f) => ["-f", f]), "config"], { env: { DOCKET_ETC_DIR: etc, ...env } });
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
    expect(api.environment).toMatchObject({
      TELEGRAM_LOCAL: "1",
      TELEGRAM_API_ID: "123456",
      TELEGRAM_API_HASH: "0123456789abcdef0123456789abcdef",
      TELEGRAM_WORK_DIR: "/var/lib/docket/bot-api",
      TELEGRAM_TEMP_DIR: "/var/lib/docket/bot-api-temp",
    });
    const binds = (api.volumes ?? []).map((v) => [v.type, v.source, v.target]);
    expect(binds).toContainEqual(["bind", "/var/lib/docket/bot-api", "/var/lib/docket/bot-api"]);
    expect(binds).toContainEqual(["bind", "/var/lib/docket/bot-api-temp", "/var/lib/docket/bot-api-temp"]);
    expect(ports(api)).toEqual([["127.0.0.1", "8081", "8081"]]);
    expect(api.healthcheck?.test.join(" ")).toContain("http://127.0.0.1:8082/");
  });

  it("keeps the same absolute path on both sides when the operator moves the directory", () => {
    const { services } = config({ DOCKET_BOT_API_DIR: "/srv/docket/tg", DOCKET_BOT_API_PORT: "18081" });
    const api = services["bot-api"]!;
    expect((api.volumes ?? []).map((v) => [v.source, v.target])).toContainEqual(["/srv/docket/tg", "/srv/docket/tg"]);
    expect(api.environment?.TELEGRAM_WORK_DIR).toBe("/srv/docket/tg");
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
    const mounts = JSON.stringify(nginx.volumes);
    expect(mounts).toContain("/etc/nginx/docket/webhook.conf");
    expect(mounts).toContain("/etc/nginx/docket/tls/fullchain.pem");
    // No service publishes anything beyond loopback.
    for (const s of Object.values(services)) for (const [ip] of ports(s)) expect(ip).toBe("127.0.0.1");
  });

  it("uses the configured TLS paths", () => {
    const { services } = config({ DOCKET_TLS_CERT: "/etc/letsencrypt/live/x/fullchain.pem", DOCKET_TLS_KEY: "/etc/letsencrypt/live/x/privkey.pem" }, [webhookFile]);
    const mounts = JSON.stringify(services.nginx!.volumes);
    expect(mounts).toContain("/etc/letsencrypt/live/x/fullchain.pem");
    expect(mounts).toContain("/etc/letsencrypt/live/x/privkey.pem");
  });

  it("cloud + webhook renders nginx alone, with no bot-api.env anywhere", () => {
    const { services } = config({ DOCKET_ETC_DIR: join(etc, "missing") }, [webhookFile]);
    expect(Object.keys(services)).toEqual(["nginx"]);
    // ./nginx/docket.conf resolves next to the compose files, in the project directory.
    expect(JSON.stringify(services.nginx!.volumes)).toContain(join(repoRoot, "compose/nginx/docket.conf"));
  });

  it("refuses to render without the api id/hash env file (the check can fail)", () => {
    const r = runCmd([...client!, "-p", "docket", "-f", composeFile, "config"], { env: { DOCKET_ETC_DIR: join(etc, "missing") } });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("bot-api.env");
  });
});
