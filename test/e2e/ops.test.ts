/** /healthz and /metrics on 127.0.0.1 (issue 6 §4): real checks, real counts. */
import { afterEach, expect, test } from "vitest";
import { HEALTH_API_TIMEOUT_MS, healthApi, startOpsServer } from "../../bot/ops/http.ts";
import { copyRunner } from "../support/copy-runner.ts";
import { startStack, type Stack } from "../support/stack.ts";

let stack: Stack | null = null;
let server: ReturnType<typeof startOpsServer> | null = null;
afterEach(async () => {
  await server?.stop(true);
  await stack?.stop();
  stack = null;
  server = null;
});

test("healthz reports database, Bot API and disk; metrics count jobs by state and budget", async () => {
  stack = await startStack({ runner: copyRunner() });
  const { app } = stack;
  server = startOpsServer(0, { sqlite: app.db.sqlite, api: healthApi(stack.config.token, stack.config.apiRoot), dataDir: stack.config.dataDir, budget: 1024 }, app.services.metrics, app.services.log);
  expect(server.hostname).toBe("127.0.0.1");
  const base = `http://127.0.0.1:${server.port}`;
  const h = await fetch(`${base}/healthz`);
  expect(h.status).toBe(200);
  const body = await h.json();
  expect(body.ok).toBe(true);
  expect(body.checks.database).toEqual({ ok: true, detail: "SELECT 1 ok" });
  expect(body.checks.botApi.detail).toBe("getMe ok (@docket_test_bot)");
  expect(body.checks.disk.ok).toBe(true);

  const u = stack.em.user();
  const sent = await u.sendDocument({ bytes: new Uint8Array(500).fill(3), file_name: "m.bin" });
  const row = await stack.jobFor(u.chatId, sent.message_id);
  await stack.waitJob(row.id);
  const m = await (await fetch(`${base}/metrics`)).text();
  expect(m).toContain('docket_jobs{state="ready"} 1');
  expect(m).toContain('docket_jobs{state="accepted"} 0');
  expect(m).toContain("docket_queue_depth 0");
  // The reservation is released after `ready`, once source and intermediates are deleted (seed 000;
  // Finisher.releaseAfterReady): a scrape right at the commit may still count it. Wait for the release.
  await expect.poll(async () => (await fetch(`${base}/metrics`)).text()).toContain("docket_budget_in_use_bytes 0");
  expect(m).toMatch(/docket_processing_seconds_count\{type="application\/octet-stream"\} 1/);
  expect(m).toContain('docket_jobs_ended_total{status="ready",reason=""} 1');
  expect(m).not.toContain('reason="too_big"');

  // A file refused at intake ends too, and is counted with its reason.
  const big = await u.sendDocument({ bytes: new Uint8Array(500).fill(4), file_name: "big.pdf", file_size: 26_214_400 });
  expect((await stack.waitJob((await stack.jobFor(u.chatId, big.message_id)).id)).reason).toBe("too_big");
  const m2 = await (await fetch(`${base}/metrics`)).text();
  expect(m2).toContain('docket_jobs_ended_total{status="failed",reason="too_big"} 1');
  expect(m2).toContain('docket_jobs{state="failed"} 1');

  // A budget larger than the free disk makes the disk check fail: 503 naming it.
  await server.stop(true);
  server = startOpsServer(0, { sqlite: app.db.sqlite, api: healthApi(stack.config.token, stack.config.apiRoot), dataDir: stack.config.dataDir, budget: Number.MAX_SAFE_INTEGER }, app.services.metrics, app.services.log);
  const bad = await fetch(`http://127.0.0.1:${server.port}/healthz`);
  expect(bad.status).toBe(503);
  expect((await bad.json()).checks.disk.ok).toBe(false);
  expect((await fetch(`http://127.0.0.1:${server.port}/nope`)).status).toBe(404);
});

test("a Bot API that refuses or never answers: /healthz answers 503 naming botApi within the check's timeout", async () => {
  stack = await startStack({ runner: copyRunner() });
  const { app } = stack;
  // One root that refuses connections, one that accepts and never answers.
  const silent = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Promise<Response>(() => {}) });
  const refusing = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  const refusingRoot = `http://127.0.0.1:${refusing.port}`;
  await refusing.stop(true);
  try {
    for (const root of [refusingRoot, `http://127.0.0.1:${silent.port}`]) {
      await server?.stop(true);
      server = startOpsServer(0, { sqlite: app.db.sqlite, api: healthApi(stack.config.token, root), dataDir: stack.config.dataDir, budget: 1024 }, app.services.metrics, app.services.log);
      const res = await fetch(`http://127.0.0.1:${server.port}/healthz`, { signal: AbortSignal.timeout(HEALTH_API_TIMEOUT_MS + 5000) });
      expect(res.status).toBe(503);
      const body = await res.json();
      expect([body.ok, body.checks.botApi.ok, body.checks.database.ok]).toEqual([false, false, true]);
      expect(body.checks.botApi.detail).toMatch(/^getMe failed: /);
      expect(body.checks.botApi.detail).not.toContain(stack.config.token);
    }
  } finally {
    await silent.stop(true);
  }
}, 30_000);
