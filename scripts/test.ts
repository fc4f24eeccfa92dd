/**
 * `bun run test`: the whole suite (vitest under Bun, `bun --bun vitest run`), then one plain
 * closing line `tests: N passed, N failed, N skipped` read from vitest's JSON report, so any
 * harness can tell how many tests ran. Extra arguments go to vitest. Exit code = vitest's.
 */
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
const report = join(root, "var", "test-results.json");
mkdirSync(join(root, "var"), { recursive: true });
rmSync(report, { force: true });
const vitest = Bun.spawn(["bun", "--bun", "vitest", "run", "--reporter=default", "--reporter=json", `--outputFile.json=${report}`, ...process.argv.slice(2)], {
  cwd: root,
  stdio: ["inherit", "inherit", "inherit"],
});
const code = await vitest.exited;
if (existsSync(report)) {
  const r = JSON.parse(readFileSync(report, "utf8")) as { numPassedTests: number; numFailedTests: number; numPendingTests: number; numTodoTests: number };
  console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
} else {
  console.log("tests: 0 passed, 0 failed (no report: vitest did not finish)");
}
process.exit(code ?? 1);
