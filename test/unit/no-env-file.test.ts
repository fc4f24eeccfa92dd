/**
 * Every child bot process the tests and the demo start runs with `--no-env-file`: an operator's
 * `.env` in the checkout (README suggests one for `bun run start`) must not change what a test or
 * the demo configures (a newcomer's `.env` with BOT_TOKEN made the start-up test fail).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { expect, test } from "vitest";

const ROOT = join(import.meta.dirname, "../..");

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith(".ts") ? [p] : [];
  });
}

test("spawns of bot/main.ts, bot/janitor/cli.ts and bot/cli/main.ts pass --no-env-file", () => {
  const entry = /bot\/(?:main|janitor\/cli|cli\/main)\.ts/;
  const spawns: string[] = [];
  const offenders: string[] = [];
  for (const f of [...files(join(ROOT, "test")), ...files(join(ROOT, "scripts/demo"))]) {
    readFileSync(f, "utf8")
      .split("\n")
      .forEach((line, i) => {
        if (!/Bun\.spawn(Sync)?\(/.test(line) || !(entry.test(line) || /join\(import\.meta\.dirname, "\.\.\/\.\.\/bot\//.test(line))) return;
        const where = `${relative(ROOT, f)}:${i + 1}`;
        spawns.push(where);
        if (!line.includes('"--no-env-file"')) offenders.push(where);
      });
  }
  expect(spawns.length).toBeGreaterThanOrEqual(5); // the scan finds the real spawns
  expect(offenders).toEqual([]);
});
