/**
 * Every variable the bot reads is documented in .env.example and docs/configuration.md (no
 * drift), and every row of the reference gives the schema's default and a unit (audit of
 * issue 6, gap 10). Defaults are compared through bot/config.ts's own parser: a documented
 * default `X` must configure exactly what leaving the variable unset configures.
 */
import { readFileSync } from "node:fs";
import { cpus, hostname } from "node:os";
import { resolve } from "node:path";
import { describe, expect, test } from "vitest";
import { CONFIG_KEYS, ConfigError, defaultHostId, loadConfig, type Config } from "../../bot/config.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const doc = readFileSync(resolve(ROOT, "docs/configuration.md"), "utf8");

/** One row of a configuration table: `| \`KEY\` | default | unit | meaning |`. */
interface Row {
  readonly key: string;
  readonly def: string;
  readonly unit: string;
}

/** Table rows naming a variable in their first cell; rows with fewer than four cells keep "" for the missing ones. */
function rows(markdown: string): Row[] {
  const out: Row[] = [];
  for (const line of markdown.split("\n")) {
    const m = /^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|(.*)\|\s*$/.exec(line);
    if (!m) continue;
    const cells = m[2]!.split("|").map((c) => c.trim());
    out.push({ key: m[1]!, def: cells.length >= 3 ? cells[0]! : "", unit: cells.length >= 3 ? cells[1]! : "" });
  }
  return out;
}

const TOKEN = "123456789:AAEhBOweik9ai2o4Ihv-XdK7Ju6N0r3j_ab";
const HOOK = "https://bot.example.org/tg/hook";
/** Base environment: webhook on, so the WEBHOOK_* defaults take part in the comparison. */
const BASE = { BOT_TOKEN: TOKEN, WEBHOOK_URL: HOOK, WEBHOOK_SECRET: "s3cret" };
const load = (extra: Record<string, string | undefined> = {}): Config => loadConfig({ ...BASE, ...extra });

/** Defaults that are not a literal value: each with the check that the schema behaves as documented. */
const SPECIAL: Record<string, { doc: RegExp; check: () => void }> = {
  BOT_TOKEN: { doc: /^— \(required\)$/, check: () => expect(() => loadConfig({})).toThrow(/BOT_TOKEN: is required/) },
  WEBHOOK_URL: { doc: /^empty \(= long polling\)$/, check: () => expect(loadConfig({ BOT_TOKEN: TOKEN }).webhook).toBeNull() },
  WEBHOOK_SECRET: {
    doc: /^— \(required with `WEBHOOK_URL`\)$/,
    check: () => expect(() => loadConfig({ BOT_TOKEN: TOKEN, WEBHOOK_URL: HOOK })).toThrow(ConfigError),
  },
  WEBHOOK_PATH: { doc: /^path of `WEBHOOK_URL`$/, check: () => expect(load().webhook?.path).toBe("/tg/hook") },
  PROCESS_CONCURRENCY: { doc: /^CPU cores$/, check: () => expect(load().processConcurrency).toBe(Math.max(1, cpus().length)) },
  OCR_CONCURRENCY: { doc: /^CPU cores$/, check: () => expect(load().ocrConcurrency).toBe(Math.max(1, cpus().length)) },
  ALLOWED_USER_IDS: { doc: /^empty = everyone$/, check: () => expect(load().allowedUserIds).toEqual([]) },
  ADMIN_USER_IDS: { doc: /^empty$/, check: () => expect(load().adminUserIds).toEqual([]) },
  DATABASE_URL: { doc: /^empty \(= SQLite\)$/, check: () => expect(load().database.url).toBeNull() },
  HOST_ID: { doc: /^the host name$/, check: () => expect(load().hostId).toBe(defaultHostId(hostname())) },
};

test("every config variable is in .env.example and docs/configuration.md", () => {
  const example = readFileSync(resolve(ROOT, ".env.example"), "utf8");
  expect(CONFIG_KEYS.length).toBeGreaterThan(30);
  const missing = CONFIG_KEYS.filter((k) => !new RegExp(`^${k}=`, "m").test(example) || !doc.includes(`\`${k}\``));
  expect(missing).toEqual([]);
});

describe("docs/configuration.md rows", () => {
  const all = rows(doc);
  const byKey = new Map(all.map((r) => [r.key, r]));

  test("one row per config variable, and no row for a variable the bot does not read", () => {
    expect(all.map((r) => r.key).sort()).toEqual([...CONFIG_KEYS].sort());
  });

  test.each([...CONFIG_KEYS])("%s: has a unit", (key) => {
    const unit = byKey.get(key)?.unit ?? "";
    expect(unit, `${key}: the unit column is empty`).not.toMatch(/^(|—|-)$/);
  });

  test.each([...CONFIG_KEYS])("%s: documented default = schema default", (key) => {
    const def = byKey.get(key)?.def ?? "";
    const literal = /^`([^`]*)`$/.exec(def)?.[1];
    if (literal !== undefined) {
      expect(SPECIAL[key], `${key} has a literal default; drop it from SPECIAL`).toBeUndefined();
      expect(load({ [key]: literal }), `${key}: documented default \`${literal}\` differs from bot/config.ts`).toEqual(load());
      return;
    }
    const special = SPECIAL[key];
    expect(special, `${key}: default "${def}" is not a literal; document it as \`value\` or add a check to SPECIAL`).toBeDefined();
    expect(def).toMatch(special!.doc);
    special!.check();
  });

  test.each([...CONFIG_KEYS].filter((k) => ["bytes", "bytes/s", "ms"].includes(byKey.get(k)?.unit ?? "")))("%s: the schema parses the documented unit", (key) => {
    // bytes: "3KB" is 3072 bytes; ms: "3s" is 3000 ms (a bare number is in the documented unit).
    const [withUnit, bare] = byKey.get(key)!.unit === "ms" ? ["3s", "3000"] : ["3KB", "3072"];
    expect(load({ [key]: withUnit })).toEqual(load({ [key]: bare }));
    expect(load({ [key]: bare })).not.toEqual(load());
  });
});
