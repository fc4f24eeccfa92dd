/**
 * `bun run start` as an operator meets it: bad config → exit 2 naming the variable;
 * unreachable Bot API → a "connecting" line, then exit 1 with a clear line within
 * STARTUP_TIMEOUT; wrong token → exit 1 at once; SIGTERM → exit 0.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "vitest";
import { REPO_ROOT, botEnv, spawnBot } from "../../scripts/demo/bot-process.ts";
import { startEmulator } from "../emulator/index.ts";

function start(env: Record<string, string | undefined>) {
  const p = Bun.spawnSync(["bun", "--no-env-file", "bot/main.ts"], { cwd: REPO_ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, timeout: 30_000 });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

test("missing or malformed variables: exit 2, each named with its expected form, no stack trace", () => {
  const r = start({ BOT_API_MODE: "clouds" });
  expect(r.code).toBe(2);
  expect(r.err).toContain("BOT_TOKEN: is required: the token from @BotFather, like 123456789:AA…");
  expect(r.err).toContain("BOT_API_MODE: expected cloud or local");
  expect(r.err).not.toContain("    at ");
});

test("an unreachable Bot API: 'connecting' first, then exit 1 with a clear fatal line", () => {
  const dir = mkdtempSync(join(tmpdir(), "docket-start-"));
  const r = start({ BOT_TOKEN: "123456789:AAE-test-token-docket-startup_x", BOT_API_ROOT: "http://127.0.0.1:9", DATA_DIR: dir, STARTUP_TIMEOUT: "2s", HTTP_PORT: "0" });
  expect(r.code).toBe(1);
  const lines = r.out.trim().split("\n").map((l) => JSON.parse(l));
  expect(lines[0].msg).toBe("connecting to the Bot API");
  expect(lines.at(-1).msg).toMatch(/^cannot reach the Bot API at BOT_API_ROOT within 2 s \(ECONNREFUSED: .+\)/);
  // Retries name the cause in one line, without a stack trace.
  const retries = lines.filter((l) => typeof l.msg === "string" && l.msg.startsWith("getMe failed ("));
  expect(retries.length).toBeGreaterThan(0);
  expect(retries.every((l) => l.cause.startsWith("ECONNREFUSED") && !("err" in l))).toBe(true);
  expect(r.out).not.toContain("    at ");
  expect(r.out).not.toContain("AAE-test-token");
});

test("a wrong token: exit 1 at once naming BOT_TOKEN; SIGTERM of a running bot: exit 0", async () => {
  const em = await startEmulator({ rateLimits: false });
  try {
    const dir = mkdtempSync(join(tmpdir(), "docket-start-"));
    // async spawn: the emulator serves from this process, a spawnSync would block it
    const wrong = Bun.spawn(["bun", "--no-env-file", "bot/main.ts"], { cwd: REPO_ROOT, env: botEnv(em, dir, { BOT_TOKEN: "987654321:AAE-wrong-token-for-this-emulator", LOG_LEVEL: "info" }), stdout: "pipe" });
    expect(await wrong.exited).toBe(1);
    expect(await new Response(wrong.stdout).text()).toContain("the Bot API refused getMe: check BOT_TOKEN");
    const p = spawnBot(botEnv(em, join(dir, "ok"), { LOG_LEVEL: "info" }), "ignore");
    // Startup (config, database, pdf.js self-check in a child, getMe) can take seconds on a loaded runner.
    await expect.poll(() => em.count("getUpdates"), { timeout: 20_000 }).toBeGreaterThan(0);
    p.kill("SIGTERM");
    expect(await p.exited).toBe(0);
  } finally {
    await em.close();
  }
}, 30_000);
