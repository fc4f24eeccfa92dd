/**
 * scripts/ci-tools.sh on a machine where it already ran (CI runs it before the tests): it must
 * find every package and return without touching apt. Skipped with a note where the packages
 * are not all installed (running it there would install them, which a test must not do).
 */
import { describe, expect, it } from "vitest";
import { isCI, runCmd } from "./helpers";

const packages = ["shellcheck", "nginx", "systemd", "sqlite3", "openssl", "curl", "docker-compose", "poppler-utils", "imagemagick"];
const installed = (p: string) => runCmd(["dpkg-query", "-W", "-f=${db:Status-Status}", p]).stdout === "installed";
const ready = Bun.which("dpkg-query") !== null && packages.every(installed);
if (!ready && !isCI) console.warn("[test/bundle] not every ci-tools package is installed: skipping the ci-tools.sh re-run check");

describe.skipIf(!ready && !isCI)("scripts/ci-tools.sh", () => {
  it("every package is installed in CI", () => {
    expect(packages.filter((p) => !installed(p))).toEqual([]);
  });

  it("a second run only checks and succeeds", () => {
    const r = runCmd(["bash", "scripts/ci-tools.sh"], { timeoutMs: 30_000 });
    expect(r.stderr).toContain(`all packages present: ${packages.join(" ")}`);
    expect(r.status).toBe(0);
  });
});
