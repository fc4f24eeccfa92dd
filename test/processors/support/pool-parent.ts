/**
 * A stand-in bot process for the pool test "children exit when the bot dies": starts a pool of
 * one, waits until its child is warm, prints the child's pid and waits to be killed.
 */
import { ProcessorPool } from "../../../processors/pool/index.ts";

const pool = new ProcessorPool({ settings: { size: 1, recycleJobs: 100, recycleRssBytes: 2 ** 40, idleMs: 600_000 } });
pool.warm();
while (pool.snapshot()[0]?.state !== "idle") await Bun.sleep(20);
console.log(`child ${pool.snapshot()[0]!.pid}`);
setInterval(() => undefined, 60_000);
