/**
 * The pool's journal (bot/worker/processor-pool.ts): children that cannot start are ONE error
 * line naming the cause and the fix, however many jobs fail, and again only after a child has
 * started; a child dying on its own is a warning. Real children (the pool's start fault).
 */
import { afterEach, expect, test } from "vitest";
import { createLogger } from "../../bot/log.ts";
import { poolEventLogger } from "../../bot/worker/processor-pool.ts";
import { ProcessorPool } from "../../processors/pool/index.ts";

const pools: ProcessorPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

/** Journal lines (parsed) and the event writer over them. */
function journal(): { lines: Record<string, unknown>[]; onEvent: ReturnType<typeof poolEventLogger> } {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({ level: "debug", write: (l) => void lines.push(JSON.parse(l) as Record<string, unknown>), journald: false });
  return { lines, onEvent: poolEventLogger(log) };
}

const SETTINGS = { size: 1, recycleJobs: 100, recycleRssBytes: 2 ** 40, idleMs: 600_000 };
const LIMITS = { timeoutMs: 10_000, memoryMb: 1024 };

test("children that cannot start: three failed jobs, one error line naming the cause and the fix", async () => {
  const { lines, onEvent } = journal();
  const pool = new ProcessorPool({ settings: SETTINGS, onEvent, startFault: "exit-start" });
  pools.push(pool);
  for (let i = 0; i < 3; i++) await expect(pool.selfCheck()).resolves.toMatchObject({ ok: false });
  const errors = lines.filter((l) => (l.level as number) >= 50);
  expect(errors).toHaveLength(1);
  expect(errors[0]!.msg).toBe("processor children cannot start: jobs fail with processing_crashed until they can; check the install (`bun install`, free memory)");
  expect(errors[0]!.detail).toBe("processor child exited during start-up (exit code 4)");
});

test("a started child re-arms the error line; a child dying on its own is one warning with its exit", () => {
  const { lines, onEvent } = journal();
  onEvent({ type: "start_failed", detail: "x" });
  onEvent({ type: "start_failed", detail: "x" });
  onEvent({ type: "started", pid: 1, ms: 300, pdfOk: true });
  onEvent({ type: "start_failed", detail: "y" });
  onEvent({ type: "crashed", pid: 2, how: "signal SIGSEGV", busy: true, stderr: "boom" });
  expect(lines.filter((l) => (l.level as number) >= 50).map((l) => l.detail)).toEqual(["x", "y"]);
  expect(lines.filter((l) => l.level === 40)).toMatchObject([{ pid: 2, how: "signal SIGSEGV", busy: true, stderr: "boom", msg: "processor child died; a fresh one replaces it" }]);
});
