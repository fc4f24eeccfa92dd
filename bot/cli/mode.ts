/**
 * `docket mode cloud|local`: move the bot between the cloud Bot API and a local
 * `telegram-bot-api --local` server, doing the Bot API steps in the documented
 * order (botapi-facts.md §4):
 *   probe the new server without the token (`GET <root>/`, botapi-facts.md §1: a
 *   telegram-bot-api server answers any path not starting with /bot with 404
 *   {"ok":false,"error_code":404,"description":"Not Found"}) so a server that is down
 *   refuses the switch before anything changed →
 *   stop the service (never two pollers, never webhook + getUpdates at once) →
 *   deleteWebhook on the old server → logOut (leaving the cloud) or close
 *   (leaving a local server) → getMe on the new server → rewrite the env file →
 *   start the service.
 * Any failed step stops the switch with a clear sentence; the env file is only
 * rewritten once the new server answered. `--dry-run` prints the plan.
 */
import { Api, GrammyError, HttpError } from "grammy";
import { redactSecrets } from "../log.ts";
import { readEnvFile, writeEnvFile } from "./env-file.ts";
import { probeBotApiServer } from "./probe.ts";

/** Options of {@link switchMode}. */
export interface ModeOptions {
  readonly target: "cloud" | "local";
  readonly envFile: string;
  /** Bot API root of the target (default: cloud https://api.telegram.org, local http://127.0.0.1:8081). */
  readonly apiRoot?: string;
  readonly dryRun?: boolean;
  /** Skip systemctl (tests, or when the operator manages the service). */
  readonly noRestart?: boolean;
  /** systemctl command (env SYSTEMCTL; default `systemctl`). */
  readonly systemctl?: readonly string[];
  /** Unit name (default docket.service). */
  readonly unit?: string;
  /** Where progress lines go. */
  readonly out?: (line: string) => void;
}

/** Thrown when a step fails; `message` is the operator sentence. */
export class ModeSwitchError extends Error {}

const DEFAULT_ROOT = { cloud: "https://api.telegram.org", local: "http://127.0.0.1:8081" } as const;

function describe(err: unknown, token: string): string {
  if (err instanceof GrammyError) return `${err.error_code} ${err.description}`;
  if (err instanceof HttpError) return `network error: ${redactSecrets(String(err.error), token)}`;
  return redactSecrets(err instanceof Error ? err.message : String(err), token);
}

/** readEnvFile with the operator's sentence on failure (not root → sudo). @throws ModeSwitchError */
function readEnvOrExplain(path: string): ReturnType<typeof readEnvFile> {
  try {
    return readEnvFile(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EACCES" || code === "EPERM") throw new ModeSwitchError(`cannot read ${path}: permission denied (it is root-only, mode 0600); run as root: sudo docket …`);
    if (code === "ENOENT") throw new ModeSwitchError(`${path} does not exist: is docket installed (scripts/install.sh)? Another file: --env FILE`);
    throw new ModeSwitchError(`cannot read ${path}: ${(err as Error).message}`);
  }
}

/**
 * Run the switch; resolves with the steps done (with `dryRun`: the plan).
 * @throws ModeSwitchError naming the failed step and the state things are in; a probe or
 *   env-file failure means nothing was changed
 */
export async function switchMode(opts: ModeOptions): Promise<string[]> {
  const out = opts.out ?? ((l: string) => console.log(l));
  const { text, values } = readEnvOrExplain(opts.envFile);
  const token = values.BOT_TOKEN;
  if (!token) throw new ModeSwitchError(`${opts.envFile} has no BOT_TOKEN`);
  const fromMode = (values.BOT_API_MODE as "cloud" | "local" | undefined) ?? "cloud";
  const fromRoot = (values.BOT_API_ROOT || DEFAULT_ROOT[fromMode]).replace(/\/+$/, "");
  const toRoot = (opts.apiRoot ?? (opts.target === fromMode ? fromRoot : DEFAULT_ROOT[opts.target])).replace(/\/+$/, "");
  if (opts.target === fromMode && toRoot === fromRoot) {
    out(`already in ${fromMode} mode at ${fromRoot}; nothing to do`);
    return [];
  }
  const leave = fromMode === "cloud" ? "logOut" : "close";
  const unit = opts.unit ?? "docket.service";
  const systemctl = opts.systemctl ?? ["systemctl"];
  const plan = [
    `probe ${toRoot}/ (no token): the server answers`,
    `stop ${unit}`,
    `deleteWebhook on ${fromRoot} (pending updates kept)`,
    `${leave} on ${fromRoot}${leave === "logOut" ? " (the cloud then refuses this bot for 10 minutes)" : ""}`,
    `getMe on ${toRoot}`,
    `write BOT_API_MODE=${opts.target} BOT_API_ROOT=${toRoot} to ${opts.envFile}`,
    `start ${unit}`,
  ];
  if (opts.dryRun) {
    for (const [i, s] of plan.entries()) out(`[dry-run] ${i + 1}. ${s}`);
    return plan;
  }
  const done: string[] = [];
  const step = async (i: number, fn: () => Promise<unknown>, hint: string) => {
    out(`${i + 1}. ${plan[i]}`);
    try {
      await fn();
      done.push(plan[i]!);
    } catch (err) {
      throw new ModeSwitchError(`step ${i + 1} failed (${plan[i]}): ${describe(err, token)}. ${hint}`);
    }
  };
  const run = async (args: string[]) => {
    if (opts.noRestart) return;
    const p = Bun.spawnSync([...systemctl, ...args]);
    if (p.exitCode !== 0) throw new Error(`${systemctl.join(" ")} ${args.join(" ")} exited ${p.exitCode}: ${p.stderr.toString().trim()}`);
  };
  const oldApi = new Api(token, { apiRoot: fromRoot });
  const newApi = new Api(token, { apiRoot: toRoot });
  await step(
    0,
    () => probeBotApiServer(toRoot, { strict: opts.target === "local" }),
    `Nothing was changed. ${opts.target === "local" ? "Start the local server first (docker compose … up -d bot-api, docs/local-mode.md) and" : "Check the network and"} run this command again.`,
  );
  await step(1, () => run(["stop", unit]), "Nothing was changed.");
  await step(2, () => oldApi.deleteWebhook({ drop_pending_updates: false }), `Nothing was changed; start the bot again with: systemctl start ${unit}`);
  await step(
    3,
    async () => {
      try {
        await (leave === "logOut" ? oldApi.logOut() : oldApi.close());
      } catch (err) {
        // Already logged out / closed is the state we want.
        if (err instanceof GrammyError && /Logged out|already been closed/i.test(err.description)) return;
        throw err;
      }
    },
    `The env file is unchanged; the bot is stopped. Fix the old server or retry.`,
  );
  await step(
    4,
    () => newApi.getMe(),
    `The bot is ${leave === "logOut" ? "logged out of the cloud (for 10 minutes)" : "closed on the old server"} and the env file still says ${fromMode}. Make ${toRoot} answer (is the local server running with --local and the right api id/hash?) and run this command again.`,
  );
  await step(5, async () => writeEnvFile(opts.envFile, text, { BOT_API_MODE: opts.target, BOT_API_ROOT: toRoot }), "The bot is stopped; edit the env file by hand.");
  await step(6, () => run(["start", unit]), `The env file now says ${opts.target}; start the service by hand.`);
  out(`switched to ${opts.target} mode at ${toRoot}`);
  return done;
}
