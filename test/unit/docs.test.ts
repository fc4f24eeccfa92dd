/** Every variable the bot reads is documented in .env.example and docs/configuration.md (no drift). */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { expect, test } from "vitest";
import { CONFIG_KEYS } from "../../bot/config.ts";

const ROOT = resolve(import.meta.dirname, "../..");

test("every config variable is in .env.example and docs/configuration.md", () => {
  const example = readFileSync(resolve(ROOT, ".env.example"), "utf8");
  const doc = readFileSync(resolve(ROOT, "docs/configuration.md"), "utf8");
  expect(CONFIG_KEYS.length).toBeGreaterThan(30);
  const missing = CONFIG_KEYS.filter((k) => !new RegExp(`^${k}=`, "m").test(example) || !doc.includes(`\`${k}\``));
  expect(missing).toEqual([]);
});
