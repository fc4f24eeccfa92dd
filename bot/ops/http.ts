/**
 * `/healthz` and `/metrics` on 127.0.0.1 (never public): health = database
 * reachable, Bot API reachable (getMe, cached 30 s), disk free vs the download
 * budget. 200 when all pass, 503 otherwise, JSON body with each check.
 */
import type { Database } from "bun:sqlite";
import { Api } from "grammy";
import { statfs } from "node:fs/promises";
import type { Logger } from "../log.ts";
import type { Metrics } from "./metrics.ts";

/** One health check result. */
export interface Check {
  readonly ok: boolean;
  readonly detail: string;
}

/** How long the Bot API check may take before it counts as down, ms. */
export const HEALTH_API_TIMEOUT_MS = 3000;

/** Inputs of the health checks. */
export interface HealthDeps {
  readonly sqlite: Database;
  /**
   * A plain Api (no auto-retry: a down Bot API must answer 503 within
   * {@link HEALTH_API_TIMEOUT_MS}, not hang in retries), see {@link healthApi}.
   */
  readonly api: Api;
  readonly dataDir: string;
  /** Bytes that must be free on the data filesystem (DOWNLOAD_BUDGET). */
  readonly budget: number;
}

/** A plain grammY Api for the health check: same token and `apiRoot`, no transformers. */
export function healthApi(token: string, apiRoot: string): Api {
  return new Api(token, { apiRoot });
}

/** Run the three checks. */
export async function health(deps: HealthDeps, cache: { at: number; check: Check | null }): Promise<Record<string, Check>> {
  let database: Check;
  try {
    deps.sqlite.query("SELECT 1").get();
    database = { ok: true, detail: "SELECT 1 ok" };
  } catch (err) {
    database = { ok: false, detail: String(err) };
  }
  if (!cache.check || Date.now() - cache.at > 30_000) {
    try {
      // grammY types its signal with the abort-controller polyfill; the runtime one is what it uses.
      const me = await deps.api.getMe(AbortSignal.timeout(HEALTH_API_TIMEOUT_MS) as never);
      cache.check = { ok: true, detail: `getMe ok (@${me.username})` };
    } catch (err) {
      cache.check = { ok: false, detail: `getMe failed: ${(err as Error).message}` };
    }
    cache.at = Date.now();
  }
  let disk: Check;
  try {
    const s = await statfs(deps.dataDir);
    const free = s.bavail * s.bsize;
    disk = { ok: free >= deps.budget, detail: `${Math.floor(free / 1048576)} MB free, budget ${Math.floor(deps.budget / 1048576)} MB` };
  } catch (err) {
    disk = { ok: false, detail: String(err) };
  }
  return { database, botApi: cache.check, disk };
}

/** Start the operations HTTP server on 127.0.0.1:`port` (0 = random); returns it for `stop()`. */
export function startOpsServer(port: number, deps: HealthDeps, metrics: Metrics, log: Logger): ReturnType<typeof Bun.serve> {
  const cache = { at: 0, check: null as Check | null };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (path === "/healthz") {
        const checks = await health(deps, cache);
        const ok = Object.values(checks).every((c) => c.ok);
        return Response.json({ ok, checks }, { status: ok ? 200 : 503 });
      }
      if (path === "/metrics") {
        return new Response(await metrics.registry.metrics(), { headers: { "content-type": metrics.registry.contentType } });
      }
      return new Response("Not Found", { status: 404 });
    },
  });
  log.info({ port: server.port }, "ops server on 127.0.0.1 (/healthz, /metrics)");
  return server;
}
