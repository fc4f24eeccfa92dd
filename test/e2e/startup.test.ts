/**
 * `bun run start` as an operator meets it (issue 9 item 2): bad config → exit 2 naming the variable;
 * a Bot API that is not reachable at boot (dead port, a proxy answering 502) → the bot keeps trying
 * with capped backoff, one journal line per kind of failure, `/livez` answers and `/readyz` names the
 * cause meanwhile, and it starts by itself once the server is up; a refused token (401) → exit 78
 * (the unit's RestartPreventExitStatus) with a line saying so; SIGTERM while waiting → exit 0.
 * The real bot process against the strict emulator.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { EXIT_OK, EXIT_TOKEN_REFUSED } from "../../bot/ops/exit-codes.ts";
import { REPO_ROOT, botEnv } from "../../scripts/demo/bot-process.ts";
import { startEmulator, type Emulator } from "../emulator/index.ts";
import { startBotProcess, type BotProcess } from "../support/bot-process.ts";
import { freePort } from "../support/ports.ts";
import { sample } from "../support/prom-text.ts";
import { buildInfo } from "../../bot/ops/build-info.ts";

const TOKEN = "123456789:AAE-test-token-docket-startup_x";
const dirs: string[] = [];
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "docket-start-"));
  dirs.push(d);
  return d;
}

/** The bot against BOT_API_ROOT on `apiPort` (nothing there yet), operator server on `httpPort`, backoff capped at 1 s. */
function bootAgainst(apiPort: number, httpPort: number, extra: Record<string, string> = {}): BotProcess {
  const em = { token: TOKEN, apiRoot: `http://127.0.0.1:${apiPort}`, mode: "cloud" as const };
  const bot = startBotProcess(botEnv(em, tempDir(), { HTTP_PORT: String(httpPort), STARTUP_RETRY_MAX: "1s", LOG_LEVEL: "info", ...extra }));
  cleanups.push(() => bot.kill());
  return bot;
}

/** The bot's journal lines whose `msg` matches. */
const matching = (bot: BotProcess, re: RegExp) => bot.lines.filter((l) => typeof l.msg === "string" && re.test(l.msg));

async function probe(httpPort: number, path: string): Promise<{ status: number; body: any }> {
  try {
    const res = await fetch(`http://127.0.0.1:${httpPort}${path}`, { signal: AbortSignal.timeout(5000) });
    return { status: res.status, body: await res.json() };
  } catch {
    return { status: 0, body: null };
  }
}

/** Failed getMe attempts start-up reports on /readyz (0 while it does not answer yet). */
async function attempts(httpPort: number): Promise<number> {
  const r = await probe(httpPort, "/readyz");
  return Number(/\((\d+) failed attempts/.exec(r.body?.checks?.botApi?.detail ?? "")?.[1] ?? 0);
}

test("missing or malformed variables: exit 2, each named with its expected form, no stack trace", () => {
  const p = Bun.spawnSync(["bun", "--no-env-file", "bot/main.ts"], { cwd: REPO_ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, BOT_API_MODE: "clouds" }, timeout: 30_000 });
  expect(p.exitCode).toBe(2);
  const err = p.stderr.toString();
  expect(err).toContain("BOT_TOKEN: is required: the token from @BotFather, like 123456789:AA…");
  expect(err).toContain("BOT_API_MODE: expected cloud or local");
  expect(err).not.toContain("    at ");
});

test("a dead Bot API port at boot: keeps trying (one line for the kind), /livez 200 and /readyz 503 naming ECONNREFUSED, then starts once the server is up", async () => {
  const apiPort = freePort();
  const httpPort = freePort();
  const bot = bootAgainst(apiPort, httpPort);
  await expect.poll(async () => (await probe(httpPort, "/livez")).status).toBe(200);
  await expect.poll(() => attempts(httpPort)).toBeGreaterThanOrEqual(3);
  const ready = await probe(httpPort, "/readyz");
  expect(ready.status).toBe(503);
  expect(ready.body.phase).toBe("starting");
  expect(ready.body.checks.botApi.detail).toMatch(/^start-up is waiting for the Bot API \(\d+ failed attempts; last: ECONNREFUSED: /);
  expect(ready.body.checks.database).toEqual({ ok: true, detail: "SELECT 1 ok" });
  const live = await probe(httpPort, "/livez");
  expect(live.body.checks.pools).toEqual({ ok: true, detail: "not started yet (start-up)" });
  // Several attempts, one journal line for their kind, naming the cause and no stack or token.
  const lines = matching(bot, /^cannot reach the Bot API/);
  expect(lines.map((l) => [l.kind, l.level])).toEqual([["refused", 40]]);
  expect(String(lines[0]!.msg)).toMatch(/^cannot reach the Bot API at BOT_API_ROOT \(ECONNREFUSED: .+\): nothing listens there yet/);
  expect(bot.lines[0]!.msg).toBe("operator server on 127.0.0.1 (/livez, /readyz, /healthz, /metrics, /status)");
  expect(matching(bot, /connecting to the Bot API/)).toHaveLength(1);

  // The server comes up on that port: the bot reaches it by itself and polls.
  let em: Emulator | null = null;
  for (let i = 0; !em; i++) {
    try {
      em = await startEmulator({ rateLimits: false, token: TOKEN, port: apiPort, repeatPollRule: false });
    } catch (err) {
      if (i >= 20) throw err;
      await Bun.sleep(100); // the bot's own attempt may hold the port a moment
    }
  }
  cleanups.push(() => em!.close());
  await expect.poll(() => em!.count("getUpdates")).toBeGreaterThan(0);
  expect(matching(bot, /^reached the Bot API after \d+ failed attempts/)).toHaveLength(1);
  await expect.poll(async () => (await probe(httpPort, "/readyz")).status).toBe(200);
  // The real process's /metrics: its journal's warnings counted, its release named.
  const metrics = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
  expect(sample(metrics, "docket_log_lines_total", { level: "warn" })).toBe(bot.lines.filter((l) => l.level === 40).length);
  expect(sample(metrics, "docket_build_info", { ...buildInfo(), mode: "cloud", store: "sqlite" })).toBe(1);
  expect(bot.text()).not.toContain(TOKEN.split(":")[1]);
  expect(bot.text()).not.toContain("    at ");
  expect(await bot.stop()).toBe(EXIT_OK);
}, 60_000);

test("a proxy answering 502, then nothing, then a server refusing the token: one line per kind, then exit 78 saying the token was refused", async () => {
  const apiPort = freePort();
  const httpPort = freePort();
  const proxy = Bun.serve({ hostname: "127.0.0.1", port: apiPort, fetch: () => new Response("<html><body>502 Bad Gateway</body></html>", { status: 502, statusText: "Bad Gateway", headers: { "content-type": "text/html" } }) });
  cleanups.push(() => proxy.stop(true));
  const bot = bootAgainst(apiPort, httpPort);
  await expect.poll(() => attempts(httpPort)).toBeGreaterThanOrEqual(3);
  await proxy.stop(true);
  await expect.poll(() => matching(bot, /^cannot reach the Bot API/).length).toBe(2);
  const before = await attempts(httpPort);
  await expect.poll(() => attempts(httpPort)).toBeGreaterThanOrEqual(before + 2);
  expect(matching(bot, /^cannot reach the Bot API/).map((l) => [l.kind, String(l.cause).split(" ")[0]])).toEqual([
    ["http", "HTTP"],
    ["refused", "ECONNREFUSED:"],
  ]);
  expect(String(matching(bot, /^cannot reach the Bot API/)[0]!.cause)).toBe("HTTP 502 Bad Gateway with a non-JSON body (not a Bot API answer: a proxy or another server)");

  // A Bot API server that does not know this token (revoked): 401 → exit 78, one fatal line.
  const em = await startEmulator({ rateLimits: false, port: apiPort, token: "987654321:AAE-another-bots-token-000000" });
  cleanups.push(() => em.close());
  expect(await bot.exited()).toBe(EXIT_TOKEN_REFUSED);
  const fatal = bot.lines.filter((l) => l.level === 60);
  expect(fatal.map((l) => [l.error_code, l.exit_status])).toEqual([[401, 78]]);
  expect(String(fatal[0]!.msg)).toMatch(/^the Bot API refused the token \(401 Unauthorized\): BOT_TOKEN is wrong or was revoked; /);
  expect(em.calls.filter((c) => c.method === "getMe").map((c) => c.status)).toEqual([401]);
  expect(bot.text()).not.toContain(TOKEN.split(":")[1]);
}, 60_000);

test("SIGTERM while start-up waits for the Bot API: exit 0, no fatal line", async () => {
  const httpPort = freePort();
  const bot = bootAgainst(freePort(), httpPort);
  await expect.poll(() => attempts(httpPort)).toBeGreaterThanOrEqual(1);
  expect(await bot.stop()).toBe(EXIT_OK);
  expect(bot.lines.filter((l) => Number(l.level) >= 50)).toEqual([]);
}, 30_000);
