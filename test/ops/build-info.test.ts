/**
 * bot/ops/build-info.ts (`docket_build_info{version,commit}`): the commit of a git checkout (a worktree
 * too) read without spawning git, the content hash of an installed release directory
 * (`releases/<version>-<hash>`, scripts/install.sh), `unknown` otherwise.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, expect, test } from "vitest";
import { buildInfo } from "../../bot/ops/build-info.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

test.skipIf(!Bun.which("git") || Bun.spawnSync(["git", "-C", ROOT, "rev-parse", "HEAD"]).exitCode !== 0)("this checkout: the commit git names, the version of package.json", () => {
  const head = Bun.spawnSync(["git", "-C", ROOT, "rev-parse", "HEAD"]).stdout.toString().trim();
  const version = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
  expect(buildInfo(ROOT)).toEqual({ version, commit: head.slice(0, 12) });
});

test("an installed release: the content hash of its directory name; elsewhere: unknown", () => {
  const base = mkdtempSync(join(tmpdir(), "docket-build-"));
  dirs.push(base);
  const release = join(base, "releases", "0.3.1-9f8e7d6c5b4a");
  mkdirSync(release, { recursive: true });
  writeFileSync(join(release, "package.json"), JSON.stringify({ version: "0.3.1" }));
  expect(buildInfo(release)).toEqual({ version: "0.3.1", commit: "9f8e7d6c5b4a" });
  const loose = join(base, "src");
  mkdirSync(loose);
  writeFileSync(join(loose, "package.json"), JSON.stringify({ version: "0.3.1" }));
  expect(buildInfo(loose)).toEqual({ version: "0.3.1", commit: "unknown" });
  expect(buildInfo(join(base, "nothing"))).toEqual({ version: "unknown", commit: "unknown" });
});
