/**
 * The test command's tool handling (issue 9 item 1): `bun run test` on a machine without a tool
 * skips exactly the suites that need it, names the Debian package, and still passes; in CI the
 * same absence is an error. The absence is simulated with DOCKET_TEST_HIDE_TOOLS (the tools stay
 * installed), and DOCKET_TEST_NO_INSTALL keeps the inner run from calling apt.
 */
import { describe, expect, it } from "vitest";
import { allPackages, TOOLS } from "../../scripts/test-tools";
import { runCmd, runCmdAsync, testTempDir } from "./helpers";

const installed = (p: string) => runCmd(["dpkg-query", "-W", "-f=${db:Status-Status}", p]).stdout === "installed";

/** `bun run test <files>` as a newcomer would run it, with its report in a private dir. */
function innerRun(files: string[], env: Record<string, string>) {
  return runCmdAsync(["bun", "run", "test", ...files], {
    env: { DOCKET_TEST_VAR_DIR: testTempDir("inner-var"), DOCKET_TEST_NO_INSTALL: "1", CI: "", ...env },
    timeoutMs: 290_000,
  });
}

describe("the test tool table", () => {
  it("prints every package for shell callers, each once", () => {
    const r = runCmd(["bun", "scripts/test-tools.ts"]);
    expect(r.status).toBe(0);
    const printed = r.stdout.trim().split(" ");
    expect(printed).toEqual(allPackages());
    expect(new Set(printed).size).toBe(printed.length);
    for (const t of Object.values(TOOLS)) for (const p of t.packages) expect(printed).toContain(p);
  });

  it.skipIf(!Bun.which("dpkg-query") || !allPackages().every(installed))("test-tools.sh with every package present only checks", () => {
    const r = runCmd(["bash", "scripts/test-tools.sh"], { timeoutMs: 30_000 });
    expect(r.stderr).toContain(`all packages present: ${allPackages().join(" ")}`);
    expect(r.status).toBe(0);
  }, 300_000); // a whole install suite in a child run: minutes on a loaded runner
});

describe("bun run test without a tool", () => {
  it("skips the suite that needs it, names the package, and passes", async () => {
    const r = await innerRun(["test/bundle/shellcheck.test.ts"], { DOCKET_TEST_HIDE_TOOLS: "shellcheck" });
    expect(r.stdout).toContain("test tools: missing shellcheck (DOCKET_TEST_NO_INSTALL=1); their suites are skipped. To run them: apt-get install shellcheck");
    expect(r.stdout).toContain("1 suite(s) skipped for a missing tool:\n  skipped: test/bundle/shellcheck.test.ts: needs shellcheck (Debian package shellcheck)");
    expect(r.stdout).toMatch(/\ntests: 0 passed, 0 failed, [1-9]\d* skipped\n$/);
    expect(r.status).toBe(0);
  });

  it("is an error in CI, where the test command installs the tools", async () => {
    const r = await innerRun(["test/bundle/shellcheck.test.ts"], { DOCKET_TEST_HIDE_TOOLS: "shellcheck", CI: "true" });
    expect(r.stdout + r.stderr).toContain("in CI the test command installs it; install failed or the table is wrong");
    expect(r.status).not.toBe(0);
  });

  it("keeps running the parts of a suite that do not need the tool (install.sh without compose)", async () => {
    const r = await innerRun(["test/bundle/install.test.ts", "test/bundle/compose.test.ts"], { DOCKET_TEST_HIDE_TOOLS: "compose" });
    expect(r.stdout).toContain("skipped: test/bundle/compose.test.ts: needs compose (Debian package docker-compose)");
    expect(r.stdout).toContain("skipped: test/bundle/install.test.ts: needs compose (Debian package docker-compose)");
    expect(r.stdout).toMatch(/\ntests: [1-9]\d* passed, 0 failed, [1-9]\d* skipped\n$/);
    expect(r.status).toBe(0);
  }, 300_000); // a whole install suite in a child run: minutes on a loaded runner
});

