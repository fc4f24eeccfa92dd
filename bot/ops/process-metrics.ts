/**
 * Process metrics (issue 10 item 2: "default process metrics … where Bun supports them; where it
 * does not, measured equivalents": the child's peak RSS and docket's own gauges stand in for the
 * heap-space and GC detail JavaScriptCore does not expose). prom-client's defaults are collected, then the families that
 * read nothing real on Bun are dropped, each for a measured reason (test/ops/process-metrics.test.ts
 * keeps measuring them, so a Bun that starts to support one fails that test and it can come back):
 * - `nodejs_active_handles*`, `nodejs_active_requests*`, `nodejs_active_resources*`: always 0
 *   (`process._getActiveHandles()` and `getActiveResourcesInfo()` return nothing);
 * - `nodejs_heap_space_size_*`: JavaScriptCore has no V8 heap spaces (all but one read 0);
 * - `nodejs_gc_duration_seconds`: no `gc` performance entries are ever emitted;
 * - `nodejs_version_info`: Bun's Node-compatibility version, not the runtime (docket_build_info has the release).
 * Kept (real on Bun, from /proc/self, process.cpuUsage/memoryUsage and perf_hooks.monitorEventLoopDelay):
 * `process_cpu_*_seconds_total`, `process_start_time_seconds`, `process_resident_memory_bytes`,
 * `process_virtual_memory_bytes`, `process_heap_bytes`, `process_open_fds`, `process_max_fds`,
 * `nodejs_eventloop_lag_*` (the histogram's statistics since the previous scrape),
 * `nodejs_heap_size_total_bytes`, `nodejs_heap_size_used_bytes`, `nodejs_external_memory_bytes`.
 */
import { collectDefaultMetrics, type Registry } from "prom-client";

/** prom-client default families dropped on Bun (see the module doc for each reason). */
export const BLIND_ON_BUN: readonly string[] = Object.freeze([
  "nodejs_active_handles",
  "nodejs_active_handles_total",
  "nodejs_active_requests",
  "nodejs_active_requests_total",
  "nodejs_active_resources",
  "nodejs_active_resources_total",
  "nodejs_heap_space_size_total_bytes",
  "nodejs_heap_space_size_used_bytes",
  "nodejs_heap_space_size_available_bytes",
  "nodejs_gc_duration_seconds",
  "nodejs_version_info",
]);

/** Register prom-client's default process metrics in `registry`, minus {@link BLIND_ON_BUN} when running on Bun. */
export function registerProcessMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry });
  if (typeof Bun === "undefined") return;
  for (const name of BLIND_ON_BUN) registry.removeSingleMetric(name);
}
