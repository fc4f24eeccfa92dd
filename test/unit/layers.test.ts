/**
 * The folder tree is the layering (HELPERS.md: lower layers never import from higher ones). The CLI
 * (`bot/cli/`, the operator's commands) is the top: no module of the service or of the processors
 * imports it — a helper two layers share lives below both (e.g. bot/env-file.ts, bot/progress.ts,
 * shared by the CLI and bot/backup/verify.ts). The processors are below the bot: from it they use only
 * the reason codes (bot/jobs/reasons.ts, the vocabulary both speak). The outbox is usable on its own
 * (DESIGN.md: "no job-engine imports"): from the rest of the bot only the database's connection type.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { expect, test } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");

/** Every .ts file under `dir`. */
function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith(".ts") ? [p] : [];
  });
}

/** The repository-relative paths `file` imports by a relative specifier (static, re-export or dynamic). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/(?:from\s+|import\s*\(\s*)"(\.{1,2}\/[^"]+)"/g)].map((m) => relative(ROOT, resolve(dirname(file), m[1]!)));
}

test("no module outside bot/cli imports from bot/cli", () => {
  const offenders = [...files(join(ROOT, "bot")), ...files(join(ROOT, "processors"))]
    .filter((f) => !relative(ROOT, f).startsWith("bot/cli/"))
    .flatMap((f) => importsOf(f).filter((p) => p.startsWith("bot/cli/")).map((p) => `${relative(ROOT, f)} → ${p}`));
  expect(offenders).toEqual([]);
});

/** The imports of every module under `dir` that leave `dir`, as `file → import`, except those `allowed` says. */
function leaving(dir: string, allowed: (imported: string) => boolean): string[] {
  return files(join(ROOT, dir)).flatMap((f) =>
    importsOf(f)
      .filter((p) => !p.startsWith(`${dir}/`) && !allowed(p))
      .map((p) => `${relative(ROOT, f)} → ${p}`),
  );
}

test("processors/ imports nothing of bot/ but its reason codes", () => {
  expect(leaving("processors", (p) => !p.startsWith("bot/") || p === "bot/jobs/reasons.ts")).toEqual([]);
});

test("bot/outbox imports nothing of the bot but the database connection's type", () => {
  expect(leaving("bot/outbox", (p) => !p.startsWith("bot/") || p === "bot/db/pg-open.ts")).toEqual([]);
});

test("the store (bot/jobs) and the database (bot/db) import nothing of the bot above them; bot/db not even the store", () => {
  // bot/log.ts is the one shared leaf (a logger type); a retry policy or an outage rule lives in bot/ops, which calls them.
  expect(leaving("bot/db", (p) => !p.startsWith("bot/") || p === "bot/log.ts")).toEqual([]);
  expect(leaving("bot/jobs", (p) => !p.startsWith("bot/") || p.startsWith("bot/db/") || p === "bot/log.ts")).toEqual([]);
});
