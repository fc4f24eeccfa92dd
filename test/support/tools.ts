/**
 * Suites ask here for the Debian tools they need (the table is scripts/test-tools.ts).
 *
 * A missing tool skips the asking suite with one line naming the suite, the tool and the Debian
 * package that would run it; `bun run test` repeats every such line in its closing summary.
 * In CI (`CI=true`) a missing tool is an error instead: there the test command installed the
 * table's packages, so a missing one is a broken install, never a silent skip.
 */
import { appendFileSync } from "node:fs";
import { relative, resolve } from "node:path";
import { TOOLS, locateTool, type ToolName } from "../../scripts/test-tools";

export type { ToolName } from "../../scripts/test-tools";

const root = resolve(import.meta.dirname, "../..");
const isCI = process.env.CI === "true" || process.env.CI === "1";
const found = new Map<ToolName, string | null>();

/** The test file that called, from the stack (the first frame under test/ ending in .test.ts). */
function callerSuite(): string {
  const stack = new Error().stack ?? "";
  const m = stack.match(/(\/[^\s():]+\.test\.ts)/);
  return m ? relative(root, m[1]!) : "a suite";
}

/**
 * The path of `name` on this machine, or null when absent (or hidden by DOCKET_TEST_HIDE_TOOLS).
 * Cached per process.
 * @example const pgBin = dirname(toolPath("postgres")!)
 */
export function toolPath(name: ToolName): string | null {
  if (!found.has(name)) found.set(name, locateTool(name));
  return found.get(name)!;
}

/**
 * True when `name` is present. Otherwise prints `skipped: <suite>: needs <tool> (Debian package
 * <pkg>)`, records it for the test command's summary, and returns false — or, in CI, throws.
 * @example describe.skipIf(!toolReady("tesseract"))("OCR", () => { … })
 * @throws Error in CI when the tool is missing (the test command should have installed it)
 */
export function toolReady(name: ToolName): boolean {
  if (toolPath(name) !== null) return true;
  const tool = TOOLS[name];
  const line = `skipped: ${callerSuite()}: needs ${name} (Debian package ${tool.packages.join(", ")}) for ${tool.for}`;
  if (isCI) throw new Error(`${line} — in CI the test command installs it; install failed or the table is wrong`);
  console.warn(line);
  const file = process.env.DOCKET_TEST_SKIPS;
  if (file) appendFileSync(file, line + "\n");
  return false;
}
