/**
 * `bun run test`: the whole suite (vitest under Bun, `bun --bun vitest run`), then one plain
 * closing line `tests: N passed, N failed, N skipped` read from vitest's JSON report, so any
 * harness can tell how many tests ran. Extra arguments go to vitest. Exit code = vitest's.
 *
 * Before vitest it brings the Debian tools the suites need (table: scripts/test-tools.ts). As
 * root with apt-get it installs the missing packages (scripts/test-tools.sh); otherwise it says
 * which packages are missing, and each suite that needs one is skipped with a line naming it.
 * Those lines are repeated above the closing line. `DOCKET_TEST_NO_INSTALL=1` never installs;
 * `DOCKET_TEST_HIDE_TOOLS=a,b` (or `all`) treats installed tools as absent, to see a fresh machine's run.
 * Issue 9 item 1: a fresh machine with Node and npm needs only the README's commands.
 */
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { TOOLS, missingTools, whichTool } from "./test-tools";

const root = resolve(import.meta.dirname, "..");
// DOCKET_TEST_VAR_DIR: where the report goes (a test that runs this command inside the suite uses its own).
const varDir = process.env.DOCKET_TEST_VAR_DIR ?? join(root, "var");
const report = join(varDir, "test-results.json");
const skips = join(varDir, "test-skips.txt");
mkdirSync(varDir, { recursive: true });
rmSync(report, { force: true });
rmSync(skips, { force: true });

/** The packages of the missing tools, deduplicated. */
const packagesOf = (tools: readonly (keyof typeof TOOLS)[]) => [...new Set(tools.flatMap((t) => TOOLS[t].packages))];

const missing = missingTools();
if (missing.length > 0) {
  const packages = packagesOf(missing);
  const canInstall = process.getuid?.() === 0 && whichTool("apt-get") !== null && process.env.DOCKET_TEST_NO_INSTALL !== "1";
  if (canInstall) {
    console.log(`test tools: installing ${packages.join(" ")} (for ${missing.join(", ")})`);
    const apt = Bun.spawnSync(["bash", join(root, "scripts/test-tools.sh"), ...packages], { cwd: root, stdio: ["ignore", "inherit", "inherit"] });
    if (apt.exitCode !== 0) console.log("test tools: the install did not bring every package; the suites that need the rest are skipped");
  } else {
    const why = process.env.DOCKET_TEST_NO_INSTALL === "1" ? "DOCKET_TEST_NO_INSTALL=1" : process.getuid?.() !== 0 ? "not root" : "no apt-get";
    console.log(`test tools: missing ${missing.join(", ")} (${why}); their suites are skipped. To run them: apt-get install ${packages.join(" ")}`);
  }
}

const vitest = Bun.spawn(["bun", "--bun", "vitest", "run", "--reporter=default", "--reporter=json", `--outputFile.json=${report}`, ...process.argv.slice(2)], {
  cwd: root,
  env: { ...process.env, DOCKET_TEST_SKIPS: skips },
  stdio: ["inherit", "inherit", "inherit"],
});
const code = await vitest.exited;
if (existsSync(skips)) {
  const lines = [...new Set(readFileSync(skips, "utf8").split("\n").filter(Boolean))].sort();
  console.log(`\n${lines.length} suite(s) skipped for a missing tool:\n${lines.map((l) => `  ${l}`).join("\n")}`);
}
if (existsSync(report)) {
  const r = JSON.parse(readFileSync(report, "utf8")) as { numPassedTests: number; numFailedTests: number; numPendingTests: number; numTodoTests: number };
  console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
} else {
  console.log("tests: 0 passed, 0 failed (no report: vitest did not finish)");
}
process.exit(code ?? 1);
