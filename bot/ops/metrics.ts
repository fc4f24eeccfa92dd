/**
 * Prometheus metrics (prom-client) for `/metrics`: jobs by state, queue depth,
 * budget in use, processing time, 429 holds. Gauges are read from the store at
 * scrape time so they are true after a restart.
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { JobStore } from "../jobs/store.ts";
import { JOB_STATES } from "../jobs/states.ts";

/** docket's metrics and their registry. */
export interface Metrics {
  readonly registry: Registry;
  /** Seconds one processor run took (the isolated child), by detected type. */
  readonly processingSeconds: Histogram<"type">;
  /** Chat holds after a 429 (outbox ChatHold events). */
  readonly chatHolds: Counter;
  /** Jobs that ended, by final state and reason. */
  readonly jobsEnded: Counter<"status" | "reason">;
}

/** Create the registry; `store` feeds the gauges on every scrape. */
export function createMetrics(store: JobStore, budgetTotal: number): Metrics {
  const registry = new Registry();
  // Set by docket_jobs's collect (registered after it, so it is serialized after the update): one count query per scrape.
  const queueDepth = new Gauge({ name: "docket_queue_depth", help: "Jobs waiting for a worker (accepted + fetched)", registers: [] });
  new Gauge({
    name: "docket_jobs",
    help: "Jobs by state",
    labelNames: ["state"],
    registers: [registry],
    async collect() {
      this.reset();
      const counts = await store.countByState();
      for (const s of JOB_STATES) this.set({ state: s }, counts[s] ?? 0);
      queueDepth.set((counts.accepted ?? 0) + (counts.fetched ?? 0));
    },
  });
  registry.registerMetric(queueDepth);
  new Gauge({
    name: "docket_budget_in_use_bytes",
    help: "Bytes reserved from the download budget",
    registers: [registry],
    async collect() {
      this.set(await store.budgetInUse());
    },
  });
  new Gauge({ name: "docket_budget_total_bytes", help: "The download byte budget (DOWNLOAD_BUDGET)", registers: [registry] }).set(budgetTotal);
  const processingSeconds = new Histogram({
    name: "docket_processing_seconds",
    help: "Processing time of one try, seconds",
    labelNames: ["type"],
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [registry],
  });
  const chatHolds = new Counter({ name: "docket_chat_holds_total", help: "Chats held after a 429 from Telegram", registers: [registry] });
  const jobsEnded = new Counter({ name: "docket_jobs_ended_total", help: "Jobs that ended, by state and reason", labelNames: ["status", "reason"], registers: [registry] });
  return { registry, processingSeconds, chatHolds, jobsEnded };
}
