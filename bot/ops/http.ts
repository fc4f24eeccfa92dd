/**
 * The operator HTTP server on 127.0.0.1 (never public; issue 10 item 1):
 * - `GET /livez`   — liveness: the process, its event loop, the pools and the outbox; 200 or 503.
 * - `GET /readyz`  — readiness: every named check of bot/ops/readiness.ts; 200 or 503.
 * - `GET /healthz` — kept for compatibility (install.sh, older probes): database, botApi, disk.
 * - `GET /metrics` — Prometheus text (prom-client).
 * - `GET /status`  — the JSON `docket status` prints.
 * Bodies: `{ "ok": bool, "phase": "starting"|"running"|"stopping", "checks": { name: { ok, detail } } }`.
 * It starts before the Bot API handshake, so `/livez` answers while start-up waits for Telegram.
 * From the moment shutdown begins every path answers 503 at once, also a request already waiting
 * on a check: a probe during shutdown never hangs.
 */
import type { Logger } from "../log.ts";
import { runChecks, type CachedCheck } from "./check.ts";

/** Where the bot is in its life. */
export type Phase = "starting" | "running" | "stopping";

/** What the server answers from. */
export interface OpsHttpDeps {
  readonly phase: () => Phase;
  readonly liveness: readonly CachedCheck[];
  readonly readiness: readonly CachedCheck[];
  /** The checks of `/healthz` (database, botApi, disk). */
  readonly legacy: readonly CachedCheck[];
  /** The Prometheus text and its content type. */
  readonly metrics: () => Promise<{ readonly body: string; readonly contentType: string }>;
  /** The `/status` document (`docket status`). */
  readonly status: () => Promise<unknown>;
  /** Resolves when shutdown begins. */
  readonly stopping: Promise<void>;
  readonly log: Logger;
}

/** A running operator server. */
export interface OpsServer {
  /** The port it listens on (useful with port 0). */
  readonly port: number;
  /** Close the listener and its connections. */
  stop(): Promise<void>;
}

const STOPPING = () => Response.json({ ok: false, phase: "stopping" }, { status: 503 });

/**
 * Start the operator server on 127.0.0.1:`port` (0 = a free port).
 * @throws Error when the port is taken (start-up stops: the operator sees it at once)
 */
export function startOpsServer(port: number, deps: OpsHttpDeps): OpsServer {
  const answer = async (path: string): Promise<Response> => {
    if (path === "/livez") {
      const checks = await runChecks(deps.liveness);
      const ok = Object.values(checks).every((c) => c.ok);
      return Response.json({ ok, phase: deps.phase(), checks }, { status: ok ? 200 : 503 });
    }
    if (path === "/readyz" || path === "/healthz") {
      const checks = await runChecks(path === "/readyz" ? deps.readiness : deps.legacy);
      const ok = deps.phase() === "running" && Object.values(checks).every((c) => c.ok);
      return Response.json(path === "/readyz" ? { ok, phase: deps.phase(), checks } : { ok, checks }, { status: ok ? 200 : 503 });
    }
    if (path === "/metrics") {
      const m = await deps.metrics();
      return new Response(m.body, { headers: { "content-type": m.contentType } });
    }
    if (path === "/status") return Response.json(await deps.status());
    return new Response("Not Found", { status: 404 });
  };
  let stopping = false;
  void deps.stopping.then(() => (stopping = true));
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port,
    async fetch(req) {
      if (stopping) return STOPPING();
      const path = new URL(req.url).pathname;
      try {
        return await Promise.race([answer(path), deps.stopping.then(STOPPING)]);
      } catch (err) {
        deps.log.error({ err, path }, "operator endpoint failed");
        return Response.json({ ok: false, error: "internal error: see the journal" }, { status: 500 });
      }
    },
  });
  deps.log.info({ port: server.port }, "operator server on 127.0.0.1 (/livez, /readyz, /healthz, /metrics, /status)");
  return { port: server.port ?? port, stop: async () => void (await server.stop(true)) };
}
