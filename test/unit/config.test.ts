/** bot/config.ts: typed config, named limits, and start-up errors that name the variable and the form. */
import { describe, expect, test } from "vitest";
import { ConfigError, downloadLimit, loadConfig, uploadLimit } from "../../bot/config.ts";

const TOKEN = "123456789:AAE-test-token-docket-config_xyz";
const MB = 1 << 20;

describe("loadConfig", () => {
  test("defaults: cloud mode, named limits per operation and mode", () => {
    const c = loadConfig({ BOT_TOKEN: TOKEN });
    expect(c.mode).toBe("cloud");
    expect(c.limits).toEqual({ downloadCloud: 20 * MB, downloadLocal: 2000 * MB, uploadCloud: 50 * MB, uploadLocal: 2000 * MB });
    expect(downloadLimit(c)).toBe(20 * MB);
    expect(uploadLimit(c)).toBe(50 * MB);
    expect(c.resultTtlMs).toBe(24 * 3600 * 1000);
    expect(c.allowedUserIds).toEqual([]);
  });
  test("units and lists are parsed", () => {
    const c = loadConfig({ BOT_TOKEN: TOKEN, BOT_API_MODE: "local", DOWNLOAD_LIMIT_LOCAL: "1.5GB", RESULT_TTL: "7d", ALLOWED_USER_IDS: "1, 2,3", BOT_API_ROOT: "http://127.0.0.1:8081/" });
    expect(downloadLimit(c)).toBe(1536 * MB);
    expect(uploadLimit(c)).toBe(2000 * MB);
    expect(c.resultTtlMs).toBe(7 * 86_400_000);
    expect(c.allowedUserIds).toEqual([1, 2, 3]);
    expect(c.apiRoot).toBe("http://127.0.0.1:8081");
  });
  test("empty values take the default", () => {
    expect(loadConfig({ BOT_TOKEN: TOKEN, RESULT_TTL: "" }).resultTtlMs).toBe(86_400_000);
  });
  test("a missing token names the variable", () => {
    try {
      loadConfig({});
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).problems).toEqual(["BOT_TOKEN: is required: the token from @BotFather, like 123456789:AA…"]);
    }
  });
  test("every bad value is named with its expected form", () => {
    try {
      loadConfig({ BOT_TOKEN: "nope", BOT_API_MODE: "hybrid", DOWNLOAD_LIMIT_CLOUD: "twenty", RESULT_TTL: "1 week", ALLOWED_USER_IDS: "alice", BOT_API_ROOT: "not a url" });
      expect.unreachable();
    } catch (err) {
      const p = (err as ConfigError).problems;
      expect(p).toContain("BOT_TOKEN: expected a bot token like 123456789:AAE… (digits, colon, 20+ letters)");
      expect(p).toContain("BOT_API_MODE: expected cloud or local");
      expect(p).toContain("DOWNLOAD_LIMIT_CLOUD: expected a size like 20MB, 2000MB, 1.5GB or a byte count");
      expect(p).toContain("RESULT_TTL: expected a duration like 500ms, 30s, 15m, 24h or 7d");
      expect(p).toContain("ALLOWED_USER_IDS: expected comma-separated numeric Telegram user ids, e.g. 12345,67890");
      expect(p.some((l) => l.startsWith("BOT_API_ROOT: expected an http(s) URL"))).toBe(true);
      expect(p).toHaveLength(6);
    }
  });
  test("DB_POOL_MAX: at least 2, split between the two PostgreSQL pools (bot/db/pg-open.ts poolSplit)", () => {
    expect(loadConfig({ BOT_TOKEN: TOKEN, DB_POOL_MAX: "2" }).database.poolMax).toBe(2);
    expect(loadConfig({ BOT_TOKEN: TOKEN }).database.poolMax).toBe(10);
    expect(() => loadConfig({ BOT_TOKEN: TOKEN, DB_POOL_MAX: "1" })).toThrow("DB_POOL_MAX: at least 2 (one for single statements, one for transactions)");
  });
  test("settings that contradict each other are named together: local mode on api.telegram.org, a webhook without its secret", () => {
    try {
      loadConfig({ BOT_TOKEN: TOKEN, BOT_API_MODE: "local", WEBHOOK_URL: "https://bot.example.org/tg/hook" });
      expect.unreachable();
    } catch (err) {
      expect((err as ConfigError).problems).toEqual([
        "WEBHOOK_SECRET: is required with WEBHOOK_URL (1-256 characters A-Z a-z 0-9 _ -)",
        "BOT_API_ROOT: must point at your local telegram-bot-api server in local mode (e.g. http://127.0.0.1:8081), not api.telegram.org",
      ]);
    }
    expect(loadConfig({ BOT_TOKEN: TOKEN, BOT_API_MODE: "local", BOT_API_ROOT: "http://127.0.0.1:8081" }).mode).toBe("local");
  });
  test("the processor pool: the recycle threshold must be below the memory cap; defaults 500 jobs, 512 MB, 10 min", () => {
    expect(() => loadConfig({ BOT_TOKEN: TOKEN, PROCESS_MEMORY_MB: "512" })).toThrow(
      "PROCESS_RECYCLE_RSS_MB: must be below PROCESS_MEMORY_MB (512); about half of it leaves a job room",
    );
    const c = loadConfig({ BOT_TOKEN: TOKEN });
    expect([c.processRecycleJobs, c.processRecycleRssMb, c.processIdleTimeoutMs]).toEqual([500, 512, 600_000]);
    expect(loadConfig({ BOT_TOKEN: TOKEN, PROCESS_MEMORY_MB: "512", PROCESS_RECYCLE_RSS_MB: "256", PROCESS_IDLE_TIMEOUT: "30s" }).processIdleTimeoutMs).toBe(30_000);
  });
});
