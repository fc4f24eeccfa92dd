/**
 * The metrics as shipped (issue 10 item 2): docs/operations.md's table and `/metrics` name the same
 * families (at least 15 of docket's own), the Grafana dashboard uses only those, the example scrape
 * config passes `promtool check config`, and a real Prometheus scraping a running bot with that
 * config evaluates every dashboard query, each metric it names found as a series or as a family the
 * bot declared without samples yet.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Histogram } from "prom-client";
import { describe, expect, test } from "vitest";
import { createMetrics } from "../../bot/ops/metrics.ts";
import { IntakeActivity } from "../../bot/ops/activity.ts";
import { operatorApi } from "../../bot/ops/operator-api.ts";
import { Ops } from "../../bot/ops/runtime.ts";
import type { JobStore } from "../../bot/jobs/store.ts";
import { copyRunner } from "../support/copy-runner.ts";
import { freePort } from "../support/ports.ts";
import { families, familyTypes } from "../support/prom-text.ts";
import { startStack } from "../support/stack.ts";
import { toolPath, toolReady } from "../support/tools.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const SCRAPE_CONFIG = join(ROOT, "docs/monitoring/prometheus.yml");
const dashboard = JSON.parse(readFileSync(join(ROOT, "docs/monitoring/grafana-dashboard.json"), "utf8")) as { panels: Array<{ title: string; targets: Array<{ expr: string }> }> };
const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => ({ panel: p.title, expr: t.expr })));

/** A bot's registry with inert sources: its families are listed without a scrape (no collect runs). */
function registry() {
  return createMetrics({
    store: {} as JobStore,
    budgetTotal: 1,
    dataDir: tmpdir(),
    build: { version: "0", commit: "x" },
    mode: "cloud",
    storeKind: "sqlite",
    activity: new IntakeActivity(),
    chatsOnHold: () => 0,
    outboxQueue: () => 0,
    backupStatus: () => ({}),
    logCounts: () => ({}),
  }).registry.getMetricsAsArray();
}

/** Metric names a PromQL expression reads (docket's and the process families). */
function namesIn(expr: string): string[] {
  return [...new Set([...expr.matchAll(/\b((?:docket|process|nodejs)_[a-z0-9_]+)\b/g)].map((m) => m[1]!))];
}

/** A histogram's series name → its family (`x_bucket` → `x`), else the name. */
function familyOf(name: string, histograms: ReadonlySet<string>): string {
  const base = name.replace(/_(bucket|sum|count)$/, "");
  return base !== name && histograms.has(base) ? base : name;
}

describe("families", () => {
  const all = registry();
  const names = all.map((f) => f.name);

  test("docs/operations.md's metrics table and the registry list the same families; at least 15 of docket's own", () => {
    const doc = readFileSync(join(ROOT, "docs/operations.md"), "utf8");
    const section = doc.slice(doc.indexOf("## Metrics"), doc.indexOf("### Scraping and a dashboard"));
    const documented = section
      .split("\n")
      .filter((l) => l.startsWith("| `"))
      .flatMap((l) => [...l.split("|")[1]!.matchAll(/`([a-z0-9_]+)`/g)].map((m) => m[1]!));
    expect([...documented].sort()).toEqual([...names].sort());
    expect(names.filter((n) => n.startsWith("docket_")).length).toBeGreaterThanOrEqual(15);
  });

  test("the Grafana dashboard reads only exported families, and every panel has a query", () => {
    const histograms = new Set(all.filter((f) => f instanceof Histogram).map((f) => f.name));
    const known = new Set(names);
    const unknown = exprs.flatMap(({ panel, expr }) => namesIn(expr).filter((n) => !known.has(familyOf(n, histograms))).map((n) => `${panel}: ${n}`));
    expect(unknown).toEqual([]);
    expect(dashboard.panels.every((p) => p.targets.length > 0 && p.targets.every((t) => namesIn(t.expr).length > 0))).toBe(true);
    // The check can fail: a name the bot does not export is caught.
    expect(namesIn("rate(docket_jobs_total[5m]) + docket_step_duration_seconds_count").filter((n) => !known.has(familyOf(n, histograms)))).toEqual(["docket_jobs_total"]);
  });
});

describe.skipIf(!toolReady("prometheus"))("with Prometheus", () => {
  test("promtool accepts the shipped scrape config", () => {
    const promtool = resolve(toolPath("prometheus")!, "../promtool");
    const r = Bun.spawnSync([promtool, "check", "config", SCRAPE_CONFIG]);
    expect([r.exitCode, r.stdout.toString()]).toEqual([0, expect.stringContaining("SUCCESS")]);
  });

  test("a real Prometheus scrapes a running bot with it and evaluates every dashboard query", async () => {
    const stack = await startStack({ runner: copyRunner() });
    const dir = mkdtempSync(join(tmpdir(), "docket-prom-"));
    const ops = new Ops({ config: stack.config, app: stack.app, log: stack.app.services.log, api: operatorApi(stack.config.token, stack.config.apiRoot) });
    let prom: ReturnType<typeof Bun.spawn> | null = null;
    try {
      const botPort = ops.listen(0).port;
      ops.markRunning();
      const u = stack.em.user();
      const sent = await u.sendDocument({ bytes: new Uint8Array(700).fill(5), file_name: "p.bin" });
      await stack.waitJob((await stack.jobFor(u.chatId, sent.message_id)).id);
      // The shipped config, pointed at this bot's port and scraping every second.
      const shipped = readFileSync(SCRAPE_CONFIG, "utf8");
      expect(shipped).toContain('targets: ["127.0.0.1:8090"]');
      const config = shipped.replace('targets: ["127.0.0.1:8090"]', `targets: ["127.0.0.1:${botPort}"]`).replace(/scrape_interval: 30s/, "scrape_interval: 1s").replace(/scrape_timeout: 10s/, "scrape_timeout: 1s");
      writeFileSync(join(dir, "prometheus.yml"), config);
      const promPort = freePort();
      prom = Bun.spawn([toolPath("prometheus")!, `--config.file=${join(dir, "prometheus.yml")}`, `--storage.tsdb.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${promPort}`], { stdout: "ignore", stderr: "ignore" });
      const api = `http://127.0.0.1:${promPort}/api/v1`;
      const query = async (q: string) => (await (await fetch(`${api}/query?query=${encodeURIComponent(q)}`)).json()) as { status: string; error?: string; data?: { result: unknown[] } };
      await expect.poll(async () => (await query('up{job="docket"}').catch(() => null))?.data?.result.length ?? 0).toBe(1);
      await expect.poll(async () => ((await query('up{job="docket"} == 1')).data?.result.length ?? 0)).toBe(1);
      // Two scrapes at least, so rate() and increase() have points.
      await expect.poll(async () => ((await query('count_over_time(up{job="docket"}[1m])')).data?.result[0] as { value: [number, string] } | undefined)?.value[1] ?? "0").not.toMatch(/^[01]$/);

      const scraped = await (await fetch(`http://127.0.0.1:${botPort}/metrics`)).text();
      const declared = new Set(families(scraped));
      const histograms = new Set([...familyTypes(scraped)].filter(([, t]) => t === "histogram").map(([n]) => n));
      const seriesNames = new Set(((await (await fetch(`${api}/label/__name__/values`)).json()) as { data: string[] }).data);
      const problems: string[] = [];
      for (const { panel, expr } of exprs) {
        const r = await query(expr);
        if (r.status !== "success") problems.push(`${panel}: ${expr}: ${r.error}`);
        for (const n of namesIn(expr)) {
          if (!seriesNames.has(n) && !declared.has(familyOf(n, histograms))) problems.push(`${panel}: ${n} is neither a series in Prometheus nor a family of /metrics`);
        }
      }
      expect(problems).toEqual([]);
      // And the bot's data is there: the job it just finished.
      const ready = (await query('docket_jobs{state="ready"}')).data?.result as Array<{ value: [number, string] }>;
      expect(ready.map((r) => r.value[1])).toEqual(["1"]);
    } finally {
      prom?.kill("SIGTERM");
      await prom?.exited;
      await ops.close();
      await stack.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
