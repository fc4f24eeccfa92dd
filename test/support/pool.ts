/**
 * The real processor pool for tests that call processors without a whole bot, or wrap them
 * (gates, injected faults): one pool per test file, created at first use with two children
 * (the pool's settings otherwise the config defaults). Its children exit with the test process
 * (their IPC channel closes); `closeTestPool` in afterAll stops them earlier.
 */
import type { ProcessRunner } from "../../bot/worker/types.ts";
import { ProcessorPool, type ChildFault, type PoolSettings } from "../../processors/pool/index.ts";

/** Settings of the shared test pool. */
export const TEST_POOL_SETTINGS: PoolSettings = { size: 2, recycleJobs: 500, recycleRssBytes: 512 * 2 ** 20, idleMs: 600_000 };

let shared: ProcessorPool | null = null;

/** The test file's pool (started lazily). */
export function testPool(): ProcessorPool {
  shared ??= new ProcessorPool({ settings: TEST_POOL_SETTINGS });
  return shared;
}

/** Stop the test file's pool, if it was started. */
export async function closeTestPool(): Promise<void> {
  const p = shared;
  shared = null;
  await p?.close();
}

/** The pool as a ProcessRunner (what the bot runs), with an optional test fault in every job. */
export function poolRunner(fault?: ChildFault): ProcessRunner {
  return (input, options, limits) => testPool().process(input, options, { ...limits, ...(fault ? { testFault: fault } : {}) });
}
