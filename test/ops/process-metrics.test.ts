/**
 * bot/ops/process-metrics.ts on Bun: the prom-client defaults docket keeps read real values; the ones it
 * drops are measured here to be blind, so a Bun that starts to support one fails this test (and the
 * family can come back); the event-loop lag (kept, and the liveness sampler bot/ops/event-loop.ts) sees a blocked loop.
 */
import { createServer } from "node:net";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { collectDefaultMetrics, Registry } from "prom-client";
import { expect, test } from "vitest";
import { EventLoopLag } from "../../bot/ops/event-loop.ts";
import { BLIND_ON_BUN, registerProcessMetrics } from "../../bot/ops/process-metrics.ts";
import { families, sample } from "../support/prom-text.ts";

const busy = (ms: number) => {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    // block the event loop
  }
};

test("kept defaults read real values; every blind one is gone", async () => {
  const r = new Registry();
  registerProcessMetrics(r);
  busy(50); // some CPU time to see
  const text = await r.metrics();
  expect(families(text)).toEqual([
    "process_cpu_user_seconds_total",
    "process_cpu_system_seconds_total",
    "process_cpu_seconds_total",
    "process_start_time_seconds",
    "process_resident_memory_bytes",
    "process_virtual_memory_bytes",
    "process_heap_bytes",
    "process_open_fds",
    "process_max_fds",
    "nodejs_eventloop_lag_seconds",
    "nodejs_eventloop_lag_min_seconds",
    "nodejs_eventloop_lag_max_seconds",
    "nodejs_eventloop_lag_mean_seconds",
    "nodejs_eventloop_lag_stddev_seconds",
    "nodejs_eventloop_lag_p50_seconds",
    "nodejs_eventloop_lag_p90_seconds",
    "nodejs_eventloop_lag_p99_seconds",
    "nodejs_heap_size_total_bytes",
    "nodejs_heap_size_used_bytes",
    "nodejs_external_memory_bytes",
  ]);
  expect(sample(text, "process_cpu_seconds_total")).toBeGreaterThan(0); // CPU time, not the wall clock of the busy wait: a loaded runner gives less
  expect(Math.abs(sample(text, "process_start_time_seconds")! - (Date.now() - performance.now()) / 1000)).toBeLessThan(5);
  expect(sample(text, "process_resident_memory_bytes")).toBeGreaterThan(20 * 1048576);
  expect(sample(text, "process_open_fds")).toBeGreaterThan(2);
  expect(sample(text, "process_max_fds")).toBeGreaterThan(sample(text, "process_open_fds")!);
  expect(sample(text, "nodejs_heap_size_used_bytes")).toBeGreaterThan(0);
  for (const name of BLIND_ON_BUN) expect(text).not.toContain(name);
});

test("a blocked loop shows in the kept nodejs_eventloop_lag_* and in the liveness sampler; why the others are dropped: no GC entries, 0 handles with a server open; why liveness has its own timer: Bun shares one delay histogram", async () => {
  const r = new Registry();
  registerProcessMetrics(r);
  const lag = new EventLoopLag(10_000, 20);
  lag.start();
  await Bun.sleep(100);
  busy(300);
  await Bun.sleep(60);
  // a GC under way: Bun emits no `gc` performance entries, so nodejs_gc_duration_seconds would stay empty
  const garbage: object[] = [];
  for (let i = 0; i < 1e6; i++) garbage.push({ i });
  garbage.length = 0;
  Bun.gc(true);
  await Bun.sleep(50);
  const text = await r.metrics(); // prom-client resets its own histogram here; the sampler's is another one
  const seen = lag.maxLagMs();
  lag.stop();
  expect(sample(text, "nodejs_eventloop_lag_max_seconds")).toBeGreaterThanOrEqual(0.25);
  expect(seen).toBeGreaterThanOrEqual(250);
  const withGc = new Registry();
  collectDefaultMetrics({ register: withGc });
  Bun.gc(true);
  await Bun.sleep(50);
  expect(await withGc.getSingleMetricAsString("nodejs_gc_duration_seconds")).not.toMatch(/_count\{/);

  // Bun 1.4.5: every monitorEventLoopDelay instance is the same histogram, so prom-client's reset at each
  // scrape would also reset a liveness histogram (the reason bot/ops/event-loop.ts uses a timer).
  const a = monitorEventLoopDelay({ resolution: 20 });
  const b = monitorEventLoopDelay({ resolution: 10 });
  a.enable();
  b.enable();
  await Bun.sleep(60);
  busy(100);
  await Bun.sleep(40);
  expect(a.count).toBeGreaterThan(0);
  b.reset();
  expect(a.count).toBe(0);
  a.disable();
  b.disable();

  const server = createServer().listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  try {
    const p = process as unknown as { _getActiveHandles?: () => unknown[]; getActiveResourcesInfo?: () => string[] };
    expect([p._getActiveHandles?.().length ?? 0, p.getActiveResourcesInfo?.().length ?? 0]).toEqual([0, 0]);
  } finally {
    server.close();
  }
});
