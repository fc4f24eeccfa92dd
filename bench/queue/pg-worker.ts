/**
 * A worker process of the PostgreSQL benchmark: `BENCH_TARGET=<url or file> bun bench/queue/pg-worker.ts <impl> <owner>`
 * (the URL holds a password: in the environment, not in argv).
 * Opens the queue, says `{ ready }` over IPC, waits for `{ go }`, drains with one loop, says
 * `{ done, cpuMs }` (its own user + system CPU during the drain), waits for `{ exit }` (the parent
 * samples the server's CPU while this process's connections still exist) and exits.
 */
import { openBenchQueue, type PgImpl } from "./pg-impls.ts";

const [impl, owner] = process.argv.slice(2) as [PgImpl, string];
const target = process.env.BENCH_TARGET ?? "";
const q = await openBenchQueue(impl, target, false);
process.on("message", async (m: { go?: boolean; exit?: boolean }) => {
  if (m.exit) {
    await q.close().catch(() => {});
    process.exit(0);
  }
  if (!m.go) return;
  const cpu0 = process.cpuUsage();
  const done = await q.drain(owner);
  const cpu = process.cpuUsage(cpu0);
  process.send!({ done, cpuMs: (cpu.user + cpu.system) / 1000 });
});
process.send!({ ready: true });
