/**
 * Recovery after a crash (issue 11 item 4): how long after a restart does an interrupted job resume?
 * The real bot (`bun bot/main.ts`) against the emulator (Telegram's rate limits on), a download that
 * stalls, SIGKILL, then a new process on the same data. Measured from the new process's spawn to the
 * moment the job's row is claimed by the new process (a new `lease_owner`), and to `ready`.
 * - same host (HOST_ID unchanged): the new start reclaims its host's dead leases at once;
 * - other host (HOST_ID changed, as every restart was before owner ids): the lease must expire (LEASE_TTL).
 * Usage: `bun bench/engine/recovery.ts [runs=5] [--baseline]` (the baseline waits ~LEASE_TTL = 60 s per run).
 * Printed only; no assertion. Record `uptime` next to the numbers.
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { botEnv } from "../../scripts/demo/bot-process.ts";
import { makePdf } from "../../scripts/samples/index.ts";
import { startEmulator } from "../../test/emulator/index.ts";
import { startBotProcess } from "../../test/support/bot-process.ts";
import { median } from "../queue/stats.ts";

const runs = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 5);
const baseline = process.argv.includes("--baseline");

/** The job's row of message `messageId`, or null before it exists. */
function row(dbFile: string, messageId: number): { status: string; lease_owner: string | null } | null {
  try {
    const db = new Database(dbFile, { readonly: true });
    try {
      return db.query("SELECT status, lease_owner FROM file_jobs WHERE message_id = ?").get(messageId) as { status: string; lease_owner: string | null } | null;
    } finally {
      db.close();
    }
  } catch {
    return null;
  }
}

/** Poll `f` every 10 ms until it is true; resolves with the time it became true (performance.now()). */
async function until(f: () => boolean, boundMs: number): Promise<number> {
  const end = performance.now() + boundMs;
  while (!f()) {
    if (performance.now() > end) throw new Error("bound passed");
    await Bun.sleep(10);
  }
  return performance.now();
}

/** One crash and restart; `otherHost`: the restart runs under another HOST_ID (no reclaim). Times in ms from the restart's spawn. */
async function once(otherHost: boolean): Promise<{ resumed: number; ready: number }> {
  const dir = mkdtempSync(join(tmpdir(), "docket-bench-recover-"));
  const dbFile = join(dir, "data", "db", "docket.sqlite");
  const em = await startEmulator({ mode: "cloud", repeatPollRule: false, rateLimits: {} });
  const env = botEnv(em, join(dir, "data"), { LOG_LEVEL: "warn", HOST_ID: "alpha", LEASE_TTL: "60s", DOWNLOAD_IDLE_TIMEOUT: "10m", JANITOR_INTERVAL: "1h" });
  try {
    em.faultFileDownload({ kind: "stall", afterBytes: 500 });
    const first = startBotProcess(env);
    const u = em.user();
    const sent = await u.sendDocument({ bytes: await makePdf({ pages: [[`bench ${Date.now()}`]] }), file_name: "b.pdf" });
    await until(() => em.calls.some((c) => c.method === "/file"), 60_000);
    const owner = row(dbFile, sent.message_id)!.lease_owner;
    await first.kill();
    const t0 = performance.now();
    const second = startBotProcess(otherHost ? { ...env, HOST_ID: "beta" } : env);
    const resumed = await until(() => {
      const r = row(dbFile, sent.message_id);
      return r !== null && r.lease_owner !== null && r.lease_owner !== owner;
    }, 180_000);
    const ready = await until(() => row(dbFile, sent.message_id)?.status === "ready", 180_000);
    await second.stop();
    return { resumed: resumed - t0, ready: ready - t0 };
  } finally {
    await em.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const load = (await Bun.$`uptime`.text()).trim();
const rows: Array<[string, number[], number[]]> = [];
for (const [label, other, n] of [["same host (reclaim at start)", false, runs], ...(baseline ? [["other host (lease expires, LEASE_TTL 60 s)", true, 1] as const] : [])] as const) {
  const resumed: number[] = [];
  const ready: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = await once(other);
    resumed.push(r.resumed);
    ready.push(r.ready);
    console.error(`${label} run ${i + 1}: resumed ${(r.resumed / 1000).toFixed(2)} s, ready ${(r.ready / 1000).toFixed(2)} s after the restart`);
  }
  rows.push([label, resumed, ready]);
}
console.log(`uptime: ${load}\n`);
console.log("| restart | runs | resumed after restart, s (median; min–max) | ready after restart, s (median) |");
console.log("| --- | ---: | ---: | ---: |");
for (const [label, resumed, ready] of rows) {
  const s = (x: number) => (x / 1000).toFixed(2);
  console.log(`| ${label} | ${resumed.length} | ${s(median(resumed))} (${s(Math.min(...resumed))}–${s(Math.max(...resumed))}) | ${s(median(ready))} |`);
}
