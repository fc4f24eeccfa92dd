/**
 * The shared set-up of the install.sh suites (install*.test.ts): recorders for systemctl and the
 * compose client (every call appended to one log), and one listener on 127.0.0.1 standing for
 * the three servers an install talks to — the bot's `/healthz`, the local Bot API server (`GET /`
 * answers 404 as telegram-bot-api does without a token) and the cloud's `logOut`
 * (TELEGRAM_CLOUD_ROOT), whose calls go into the same log so their order is checked too.
 */
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect } from "vitest";
import { composeClient, composeConfigOf, makeRecorder, makeTempDir, removeDir, runCmdAsync, snapshotTree, testTempDir, writeSelfSignedTls, type CmdResult } from "./helpers";

/** A valid-looking api_hash (32 hex digits). */
export const API_HASH = "0123456789abcdef0123456789abcdef";
/** The webhook URL most webhook tests install. */
export const HOOK_URL = "https://bot.example.org/telegram/webhook";

/** A real certificate pair where install.sh looks by default (ROOT/etc/docket/tls). */
export function placeTls(root: string): void {
  writeSelfSignedTls(join(root, "etc/docket/tls/fullchain.pem"), join(root, "etc/docket/tls/privkey.pem"));
}

/** A fresh throwaway root with the default TLS files, removed when the test finishes. */
export function tlsRoot(prefix: string): string {
  const root = testTempDir(prefix);
  placeTls(root);
  return root;
}

/** snapshotTree of a root without its install log (every run, a refused one too, appends to it). */
export function treeWithoutLog(root: string): string[] {
  return snapshotTree(root).filter((l) => !l.includes(" var/log/docket/install.log "));
}

/** uid or gid of `name` in a throwaway root's /etc/passwd or /etc/group (undefined when absent). */
export function accountId(root: string, db: "passwd" | "group", name: string): number | undefined {
  const line = readFileSync(join(root, "etc", db), "utf8").split("\n").find((l) => l.startsWith(`${name}:`));
  return line === undefined ? undefined : Number(line.split(":")[2]);
}

/** The supplementary members of `group` in a throwaway root's /etc/group. */
export function membersOf(root: string, group: string): string[] {
  const line = readFileSync(join(root, "etc/group"), "utf8").split("\n").find((l) => l.startsWith(`${group}:`));
  return (line?.split(":")[3] ?? "").split(",").filter(Boolean);
}

/**
 * Render with the real compose client the project of one recorded compose call (`config`,
 * against the root's /etc/docket) and expect exactly `services`. `ready` is the suite's
 * `toolReady("compose")` (false: the check is skipped, its line was printed).
 */
export function expectComposeServices(ready: boolean, line: string, root: string, services: string[]): void {
  const client = composeClient();
  if (!ready || !client) return;
  const cfg = composeConfigOf(client, line, join(root, "etc/docket"));
  expect(cfg.stderr).not.toMatch(/ERROR|bot-api\.env/);
  expect(cfg.status).toBe(0);
  expect(Object.keys((Bun.YAML.parse(cfg.stdout) as { services: object }).services).sort()).toEqual(services);
}

/** What a suite gets from {@link useInstallHarness}; the fields are set in its beforeAll. */
export interface InstallHarness {
  work: string;
  recLog: string;
  systemctl: string;
  compose: string;
  /** The stand-in listener's port (bot /healthz, local server, cloud logOut). */
  port: number;
  /** How many times /healthz was asked. */
  healthHits: number;
  /** The token the cloud stand-in expects in logOut. */
  logOutToken: string;
  /** What the cloud stand-in answers to logOut (default `{"ok":true,"result":true}`). */
  logOutAnswer: () => Response;
  /** `install.sh --non-interactive ARGS` with HEALTH_TIMEOUT=5 and no inherited secrets. */
  install(args: string[], env?: Record<string, string | undefined>): Promise<CmdResult>;
  /** The recorded calls, one per line. */
  calls(): string[];
}

/** Register the harness's beforeAll/afterAll in the calling suite file and return it. */
export function useInstallHarness(): InstallHarness {
  let server: ReturnType<typeof Bun.serve> | undefined;
  const h: InstallHarness = {
    work: "",
    recLog: "",
    systemctl: "",
    compose: "",
    port: 0,
    healthHits: 0,
    logOutToken: "",
    logOutAnswer: () => Response.json({ ok: true, result: true }),
    install: (args, env = {}) =>
      runCmdAsync(["bash", "scripts/install.sh", "--non-interactive", ...args], {
        env: { HEALTH_TIMEOUT: "5", BOT_TOKEN: undefined, TELEGRAM_API_HASH: undefined, ...env },
      }),
    calls: () => readFileSync(h.recLog, "utf8").trim().split("\n"),
  };
  beforeAll(() => {
    h.work = makeTempDir("install");
    h.recLog = join(h.work, "calls.log");
    h.systemctl = makeRecorder(h.work, "systemctl", h.recLog);
    h.compose = makeRecorder(h.work, "compose", h.recLog);
    server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(req) {
        const path = new URL(req.url).pathname;
        if (path === "/") return Response.json({ ok: false, error_code: 404, description: "Not Found" }, { status: 404 });
        if (/^\/bot\d+:[\w-]+\/logOut$/.test(path)) {
          appendFileSync(h.recLog, `cloud logOut (token ${path === `/bot${h.logOutToken}/logOut` ? "right" : "wrong"})\n`);
          return h.logOutAnswer();
        }
        if (path !== "/healthz") return new Response("no", { status: 404 });
        h.healthHits++;
        return Response.json({ ok: true });
      },
    });
    h.port = server.port!;
  });
  afterAll(() => {
    server?.stop(true);
    removeDir(h.work);
  });
  return h;
}
