/**
 * The README's main command: `bun run demo` (project samples) and, when the shared
 * fixtures exist, `bun run demo ../shared/fixtures` — real bot process, emulator,
 * every outcome checked against the folder's MANIFEST.tsv; exit 0 only when all are right.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { expect, test } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const SHARED = resolve(ROOT, "../shared/fixtures");

function demo(folder?: string) {
  const p = Bun.spawnSync(["bun", "scripts/demo.ts", ...(folder ? [folder] : [])], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

test("bun run demo: every project sample ends right, the bot stops cleanly", () => {
  const r = demo();
  const summary = /(\d+) files, (\d+) right, (\d+) wrong/.exec(r.out);
  expect(summary, r.out.slice(-3000) + r.err).not.toBeNull();
  expect(Number(summary![1])).toBeGreaterThanOrEqual(20);
  expect(summary![3]).toBe("0");
  expect(r.code).toBe(0);
  expect(r.out).toContain("=== Chat transcripts ===");
}, 240_000);

test.skipIf(!existsSync(SHARED))("bun run demo ../shared/fixtures: every manifest row ends right", () => {
  const r = demo(SHARED);
  const summary = /(\d+) files, (\d+) right, (\d+) wrong/.exec(r.out);
  expect(summary, r.out.slice(-3000) + r.err).not.toBeNull();
  expect(summary![3]).toBe("0");
  expect(r.code).toBe(0);
}, 240_000);

if (!existsSync(SHARED)) console.log(`[demo] ../shared/fixtures not found: the shared-fixture demo run is skipped`);
