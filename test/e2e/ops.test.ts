/**
 * The operator endpoints on 127.0.0.1 (issue 10 item 1): `/livez` (process, event loop, pools,
 * outbox — never Telegram or the disk), `/readyz` (named, cached checks), `/healthz` (kept for
 * compatibility), `/metrics`; 503 at once during shutdown, even for a probe already waiting on a
 * check. The real bot stack against the emulator, with the bot's own Ops.
 */
import { afterEach, expect, test } from "vitest";
import { writeBackupStatus } from "../../bot/backup/status.ts";
import type { Config } from "../../bot/config.ts";
import type { Ops } from "../../bot/ops/runtime.ts";
import { copyRunner } from "../support/copy-runner.ts";
import { runningOps } from "../support/ops.ts";
import { startStack, type Stack } from "../support/stack.ts";

let stack: Stack | null = null;
let ops: Ops | null = null;
const servers: Array<{ stop(force?: boolean): unknown }> = [];
afterEach(async () => {
  await ops?.close();
  for (const s of servers.splice(0)) await s.stop(true);
  await stack?.stop();
  stack = null;
  ops = null;
});

/** The bot's Ops around the stack's app, listening on a free port, running; `apiRoot` for getMe. */
const opsFor = (s: Stack, overrides: Partial<Config> = {}, apiRoot = s.config.apiRoot) => runningOps(s, overrides, { apiRoot });

async function get(url: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  return { status: res.status, body: res.headers.get("content-type")?.includes("json") ? JSON.parse(text) : text };
}

test("livez, readyz and healthz name every check; metrics count jobs by state and budget", async () => {
  stack = await startStack({ runner: copyRunner() });
  const started = opsFor(stack, { downloadBudget: 1048576 });
  ops = started.ops;
  const { base } = started;

  const live = await get(`${base}/livez`);
  expect(live.status).toBe(200);
  expect(Object.keys(live.body.checks)).toEqual(["eventLoop", "pools", "outbox"]);
  expect(live.body.checks.pools.detail).toMatch(/^4\/4 download and \d+\/\d+ processing loops running$/);
  expect(live.body.checks.outbox).toEqual({ ok: true, detail: "open" });

  const ready = await get(`${base}/readyz`);
  expect([ready.status, ready.body.ok, ready.body.phase]).toEqual([200, true, "running"]);
  expect(Object.keys(ready.body.checks)).toEqual(["database", "botApi", "disk", "polling", "backup"]);
  expect(ready.body.checks.database).toEqual({ ok: true, detail: "SELECT 1 ok" });
  expect(ready.body.checks.botApi).toEqual({ ok: true, detail: "getMe ok (@docket_test_bot)" });
  expect(ready.body.checks.backup.detail).toMatch(/^no backup has run yet \(the database is 0 h old; BACKUP_MAX_AGE 48 h\)$/);

  const health = await get(`${base}/healthz`);
  expect(health.status).toBe(200);
  expect(Object.keys(health.body)).toEqual(["ok", "checks"]);
  expect(Object.keys(health.body.checks)).toEqual(["database", "botApi", "disk"]);

  // Cached: ten probes within the ttl ask Telegram nothing more.
  const before = stack.em.count("getMe");
  await Promise.all(Array.from({ length: 10 }, () => get(`${base}/readyz`)));
  expect(stack.em.count("getMe")).toBe(before);

  const u = stack.em.user();
  const sent = await u.sendDocument({ bytes: new Uint8Array(500).fill(3), file_name: "m.bin" });
  await stack.waitJob((await stack.jobFor(u.chatId, sent.message_id)).id);
  const m = (await get(`${base}/metrics`)).body as string;
  expect(m).toContain('docket_jobs{state="ready"} 1');
  expect(m).toContain('docket_jobs{state="accepted"} 0');
  expect(m).toContain("docket_queue_depth 0");
  // The reservation is released after `ready`, once source and intermediates are deleted (seed 000;
  // Finisher.releaseAfterReady): a scrape right at the commit may still count it. Wait for the release.
  await expect.poll(async () => (await get(`${base}/metrics`)).body).toContain("docket_budget_in_use_bytes 0");
  expect(m).toContain('docket_jobs_ended_total{status="ready",reason=""} 1');
  expect((await fetch(`${base}/nope`)).status).toBe(404);
});

test("disk below the rest of the budget, an old or failed backup: readyz 503 naming the check; livez stays 200", async () => {
  stack = await startStack({ runner: copyRunner() });
  const started = opsFor(stack, { downloadBudget: Number.MAX_SAFE_INTEGER, backupMaxAgeMs: 3_600_000 });
  ops = started.ops;
  const disk = await get(`${started.base}/readyz`);
  expect(disk.status).toBe(503);
  expect(disk.body.checks.disk.ok).toBe(false);
  expect(disk.body.checks.disk.detail).toMatch(/MB reserved\): needs \d+ MB free; free disk space or lower DOWNLOAD_BUDGET$/);
  expect((await get(`${started.base}/livez`)).status).toBe(200);
  await ops.close();

  const now = Math.floor(Date.now() / 1000);
  const dataDir = stack.config.dataDir;
  const backupOf = async (patch: Parameters<typeof writeBackupStatus>[1]) => {
    await writeBackupStatus(dataDir, patch);
    const o = opsFor(stack!, { backupMaxAgeMs: 3_600_000 });
    ops = o.ops;
    const r = await get(`${o.base}/readyz`);
    await o.ops.close();
    return [r.status, r.body.checks.backup] as const;
  };
  expect(await backupOf({ backup: { ok: true, at: now - 60, bytes: 3 * 1048576, where: "local" }, verify: { ok: true, at: now - 30 } })).toEqual([
    200,
    { ok: true, detail: `last good backup at ${new Date((now - 60) * 1000).toISOString()} (0 h ago, 3 MB, local; last verify passed at ${new Date((now - 30) * 1000).toISOString()})` },
  ]);
  const [oldStatus, old] = await backupOf({ backup: { ok: true, at: now - 7200, bytes: 1, where: "restic" } });
  expect([oldStatus, old.ok]).toEqual([503, false]);
  expect(old.detail).toMatch(/ is older than BACKUP_MAX_AGE 1 h: is docket-backup\.timer running\?$/);
  expect(await backupOf({ backup: { ok: false, at: now, bytes: 0, where: "restic", error: "restic: wrong password or no key found" } })).toEqual([
    503,
    { ok: false, detail: `the last backup failed at ${new Date(now * 1000).toISOString()}: restic: wrong password or no key found` },
  ]);
});

test("a Bot API that refuses or never answers: readyz and healthz answer 503 naming botApi within the check's deadline", async () => {
  stack = await startStack({ runner: copyRunner() });
  // One root that refuses connections, one that accepts and never answers.
  const silent = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Promise<Response>(() => {}) });
  servers.push(silent);
  const refusing = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  const refusingRoot = `http://127.0.0.1:${refusing.port}`;
  await refusing.stop(true);
  for (const root of [refusingRoot, `http://127.0.0.1:${silent.port}`]) {
    await ops?.close();
    const o = opsFor(stack, {}, root);
    ops = o.ops;
    for (const path of ["/readyz", "/healthz"]) {
      const res = await get(`${o.base}${path}`);
      expect(res.status).toBe(503);
      expect([res.body.ok, res.body.checks.botApi.ok, res.body.checks.database.ok]).toEqual([false, false, true]);
      expect(res.body.checks.botApi.detail).toMatch(/^getMe failed: /);
      expect(res.body.checks.botApi.detail).not.toContain(stack.config.token);
    }
    expect((await get(`${o.base}/livez`)).status).toBe(200);
  }
}, 30_000);

test("a closed outbox fails livez, naming it, while readyz knows nothing of it", async () => {
  stack = await startStack({ runner: copyRunner() });
  const started = opsFor(stack, { downloadBudget: 1048576 });
  ops = started.ops;
  expect((await get(`${started.base}/livez`)).status).toBe(200);
  await stack.app.outbox.close();
  const live = await get(`${started.base}/livez`);
  expect([live.status, live.body.ok, live.body.checks.outbox, live.body.checks.pools.ok, live.body.checks.eventLoop.ok]).toEqual([503, false, { ok: false, detail: "closed: chat messages are not delivered" }, true, true]);
  expect((await get(`${started.base}/readyz`)).status).toBe(200);
});

test("shutdown: a probe already waiting on a check and every later request answer 503 'stopping' at once", async () => {
  stack = await startStack({ runner: copyRunner() });
  const silent = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Promise<Response>(() => {}) });
  servers.push(silent);
  const o = opsFor(stack, {}, `http://127.0.0.1:${silent.port}`);
  ops = o.ops;
  // getMe against a server that never answers: this probe waits on the botApi check (deadline 3 s).
  const waiting = fetch(`${o.base}/readyz`);
  await expect.poll(() => silent.pendingRequests).toBe(1);
  ops.markStopping();
  const r = await waiting;
  expect([r.status, await r.json()]).toEqual([503, { ok: false, phase: "stopping" }]);
  for (const path of ["/livez", "/readyz", "/healthz", "/metrics", "/status"]) {
    const res = await get(`${o.base}${path}`);
    expect([path, res.status, res.body]).toEqual([path, 503, { ok: false, phase: "stopping" }]);
  }
});
