/**
 * The bot's operator side (bot/ops/runtime.ts `Ops`) around a test stack's app, wired as bot/main.ts
 * wires it: the plain operator Api for getMe/getWebhookInfo, the operator HTTP server on a free port
 * of 127.0.0.1, the phase `running` (monitor and alert sender started).
 */
import type { Config } from "../../bot/config.ts";
import { operatorApi } from "../../bot/ops/operator-api.ts";
import { Ops, type OpsOptions } from "../../bot/ops/runtime.ts";
import type { Stack } from "./stack.ts";

/** What {@link runningOps} changes besides the configuration. */
export interface RunningOpsOptions extends Pick<OpsOptions, "monitorIntervalMs" | "ttlMs"> {
  /** The Bot API root the operator Api calls (default the stack's: a dead or silent one tests failures). */
  readonly apiRoot?: string;
}

/**
 * Start the stack's Ops with `config` over the stack's configuration, listening and running.
 * @returns the Ops (close it after the test), its port and `http://127.0.0.1:<port>`
 */
export function runningOps(s: Stack, config: Partial<Config> = {}, opts: RunningOpsOptions = {}): { ops: Ops; port: number; base: string } {
  const { apiRoot = s.config.apiRoot, ...rest } = opts;
  const ops = new Ops({ config: { ...s.config, ...config }, app: s.app, log: s.app.services.log, api: operatorApi(s.config.token, apiRoot), ...rest });
  const port = ops.listen(0).port;
  ops.markRunning();
  return { ops, port, base: `http://127.0.0.1:${port}` };
}
