/**
 * shellcheck on every shell script of the bundle (scripts/, scripts/lib/, compose/) and on the
 * CI entry point .ci/run (which installs the tools and runs the tests).
 * Missing shellcheck: skipped with a note on a developer machine, a failure in CI.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot, runCmd, testTempDir } from "./helpers";
import { toolReady } from "../support/tools";

/** Shell scripts under `dir`: *.sh files and files whose first line is a sh/bash shebang. */
function shellScripts(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const abs = join(d, name);
      if (statSync(abs).isDirectory()) {
        if (name !== "node_modules") walk(abs);
        continue;
      }
      const head = readFileSync(abs, "utf8").slice(0, 64);
      if (name.endsWith(".sh") || /^#!.*\b(ba)?sh\b/.test(head)) out.push(abs);
    }
  };
  walk(dir);
  return out.sort();
}

const ready = toolReady("shellcheck");
const scripts = [...shellScripts(join(repoRoot, "scripts")), ...shellScripts(join(repoRoot, "compose")), ...shellScripts(join(repoRoot, ".ci"))];

describe.skipIf(!ready)("shellcheck", () => {
  it("finds the bundle's scripts", () => {
    expect(scripts.map((p) => relative(repoRoot, p))).toEqual([
      "scripts/backup.sh",
      "scripts/certbot-deploy-hook.sh",
      "scripts/container.sh",
      "scripts/disk-layout.sh",
      "scripts/install.sh",
      "scripts/lib/accounts.sh",
      "scripts/lib/common.sh",
      "scripts/lib/containers.sh",
      "scripts/lib/preflight.sh",
      "scripts/lib/release.sh",
      "scripts/lib/report.sh",
      "scripts/lib/restic.sh",
      "scripts/lib/scaling.sh",
      "scripts/lib/services.sh",
      "scripts/lib/units.sh",
      "scripts/lib/upgrade.sh",
      "scripts/lib/webhook.sh",
      "scripts/restore.sh",
      "scripts/rollback.sh",
      "scripts/test-tools.sh",
      ".ci/run",
    ]);
  });

  it("reports a known defect (the check can fail)", () => {
    const bad = join(testTempDir("shellcheck"), "bad.sh");
    writeFileSync(bad, "#!/bin/bash\nrm -rf $1/*\n");
    const r = runCmd(["shellcheck", bad]);
    expect(r.status).not.toBe(0);
    expect(r.stdout).toContain("SC2086");
  });

  it.each(scripts.map((p) => [relative(repoRoot, p), p]))("%s is clean", (_name, path) => {
    // -x follows `source` lines; -P lets scripts/lib/common.sh resolve from the repo root.
    const r = runCmd(["shellcheck", "-x", "-P", repoRoot, "--severity=style", path]);
    expect(r.stdout + r.stderr).toBe("");
    expect(r.status).toBe(0);
  });
});
