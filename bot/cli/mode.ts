/**
 * `docket mode cloud|local`: move the bot between the cloud Bot API and a local
 * `telegram-bot-api --local` server, doing the Bot API steps in the documented order
 * (botapi-facts.md §4), and never leaving the bot stranded:
 *
 *   (Telegram's windows, from what docket recorded: refuse, or with --wait wait, before anything
 *   changed) → probe the new server without the token (`GET <root>/`, botapi-facts.md §1: a
 *   telegram-bot-api server answers any path not starting with /bot with 404
 *   {"ok":false,"error_code":404,"description":"Not Found"}) → when leaving a local server, probe it
 *   too (close needs it; `--force` leaves a dead one without close) → stop the service (never two
 *   pollers, never webhook + getUpdates at once) → deleteWebhook on the old server → logOut (leaving
 *   the cloud) or close (leaving a local server) → getMe on the new server → rewrite the env file →
 *   start the service.
 *
 * Once the service is stopped, any failed step rolls back: the env file gets its old text again
 * and the service is started in the old mode; the sentence names the step, what was rolled back
 * and the way out. Telegram's refusals (close 429 in the first 10 minutes after a launch, the
 * cloud's 10 minutes after a logOut) are recorded (./mode-state.ts) so the next run refuses before
 * stopping anything, or waits with `--wait`.
 */
import { Api, GrammyError, HttpError } from "grammy";
import { redactSecrets } from "../log.ts";
import { readEnvFile, writeEnvFile } from "../env-file.ts";
import { readModeState, modeStatePath, writeModeState } from "./mode-state.ts";
import { launchFromRetryAfter, pendingWindow, TELEGRAM_WINDOW_MS, utcClock, WINDOW_REASON, type ModeState, type Move } from "./mode-windows.ts";
import { probeBotApiServer } from "./probe.ts";
import { progressLine } from "../progress.ts";

/** Options of {@link switchMode}. */
export interface ModeOptions {
  readonly target: "cloud" | "local";
  readonly envFile: string;
  /** Bot API root of the target (default: cloud https://api.telegram.org, local http://127.0.0.1:8081). */
  readonly apiRoot?: string;
  readonly dryRun?: boolean;
  /** Skip systemctl (tests, or when the operator manages the service). */
  readonly noRestart?: boolean;
  /** Wait out a Telegram window (the bot keeps running meanwhile) instead of refusing. */
  readonly wait?: boolean;
  /** Leaving a local server that does not answer: go on without deleteWebhook and close on it. */
  readonly force?: boolean;
  /** systemctl command (env SYSTEMCTL; default `systemctl`). */
  readonly systemctl?: readonly string[];
  /** Unit name (default docket.service). */
  readonly unit?: string;
  /** The session record (default: mode-state.json next to the env file). */
  readonly stateFile?: string;
  /** Where progress lines go. */
  readonly out?: (line: string) => void;
  /** Clock, epoch ms (tests: the emulator's manual clock). */
  readonly now?: () => number;
  /** Sleep used by --wait (tests: advance the manual clock). */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** Thrown when a step fails; `message` is the operator sentence (already redacted). Exit status 1. */
export class ModeSwitchError extends Error {}

/**
 * Thrown when Telegram refuses the switch for now (one of its 10-minute windows) and nothing is
 * changed: refused before the service was stopped, or rolled back cleanly. Exit status 75
 * (EX_TEMPFAIL): the same command works from `until`, or at once with `--wait`.
 */
export class ModeWindowError extends ModeSwitchError {
  constructor(
    message: string,
    /** Epoch ms from which the switch can go through. */
    readonly until: number,
    /** Telegram's answer that showed the window, when a call did. */
    readonly answer?: unknown,
  ) {
    super(message);
  }
}

const DEFAULT_ROOT = { cloud: "https://api.telegram.org", local: "http://127.0.0.1:8081" } as const;
/** Time limit of each Bot API call of the switch, seconds (grammY's default of 500 s would hang on a dead server). */
const CALL_TIMEOUT_S = 30;
/** Attempts with --wait: the first, and a retry after each window that was waited out. */
const MAX_ATTEMPTS = 3;

function describe(err: unknown, token: string): string {
  if (err instanceof GrammyError) return `${err.error_code} ${err.description}`;
  if (err instanceof HttpError) return `network error: ${redactSecrets(String(err.error), token)}`;
  return redactSecrets(err instanceof Error ? err.message : String(err), token);
}

/** No answer, or a server error: what --force accepts from a local server being left. */
function isDeadServer(err: unknown): boolean {
  return err instanceof HttpError || (err instanceof GrammyError && err.error_code >= 500);
}

/** The cloud refusing a bot it logged out less than 10 minutes ago (400 "Logged out", or a 429). */
function logOutRefusal(err: unknown): GrammyError | null {
  return err instanceof GrammyError && (err.description === "Logged out" || err.error_code === 429) ? err : null;
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
 * Run the switch; resolves with the steps done (with `dryRun`: the plan). With `wait`, a Telegram
 * window is waited out (the bot keeps running) and the switch tried again.
 * @throws ModeWindowError when Telegram refuses it for now and nothing is changed (exit 75)
 * @throws ModeSwitchError naming the failed step, what was rolled back and the way out (exit 1)
 */
export async function switchMode(opts: ModeOptions): Promise<string[]> {
  const now = opts.now ?? Date.now;
  const sleep = opts.sleep ?? ((ms: number) => Bun.sleep(ms));
  const out = opts.out ?? ((l: string) => console.log(l));
  for (let attempt = 1; ; attempt++) {
    try {
      return await attemptSwitch(opts, now, out);
    } catch (err) {
      if (!(err instanceof ModeWindowError) || !opts.wait || attempt >= MAX_ATTEMPTS) throw err;
      const ms = Math.max(0, err.until - now());
      out(`waiting ${Math.ceil(ms / 1000)} s, until ${utcClock(err.until)}, for Telegram's window; the bot keeps running meanwhile`);
      const line = progressLine();
      for (let left = ms; left > 0; left = err.until - now()) {
        line.update(`  ${Math.ceil(left / 1000)} s left`);
        await sleep(Math.min(left, 5000));
      }
      line.done();
    }
  }
}

async function attemptSwitch(opts: ModeOptions, now: () => number, out: (l: string) => void): Promise<string[]> {
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
  if (opts.force && fromMode !== "local") {
    throw new ModeSwitchError(`--force only leaves a local Bot API server that does not answer; the bot is in ${fromMode} mode. Nothing was changed.`);
  }
  const move: Move = { fromMode, fromRoot, target: opts.target, toRoot };
  const leave = fromMode === "cloud" ? "logOut" : "close";
  const unit = opts.unit ?? "docket.service";
  const systemctl = opts.systemctl ?? ["systemctl"];
  const stateFile = opts.stateFile ?? modeStatePath(opts.envFile);
  let state: ModeState = readModeState(stateFile);
  const saveState = (next: ModeState) => {
    state = next;
    try {
      writeModeState(stateFile, next);
    } catch (err) {
      out(`  note: cannot record Telegram's window in ${stateFile} (${(err as Error).message}); the next run learns it from Telegram again`);
    }
  };

  const plan = [
    `probe ${toRoot}/ (no token): the server answers`,
    ...(leave === "close" ? [`probe ${fromRoot}/ (no token): the server being left answers${opts.force ? " (--force: may be dead)" : ""}`] : []),
    `stop ${unit}`,
    `deleteWebhook on ${fromRoot} (pending updates kept)`,
    `${leave} on ${fromRoot}${leave === "logOut" ? " (the cloud then refuses this bot for 10 minutes)" : ""}`,
    `getMe on ${toRoot}`,
    `write BOT_API_MODE=${opts.target} BOT_API_ROOT=${toRoot} to ${opts.envFile}`,
    `start ${unit}`,
  ];
  const at = (prefix: string) => plan.findIndex((s) => s.startsWith(prefix));
  const window = pendingWindow(state, move, now());
  if (opts.dryRun) {
    for (const [i, s] of plan.entries()) out(`[dry-run] ${i + 1}. ${s}`);
    if (window) out(`[dry-run] note: a real run is refused until ${utcClock(window.until)}: ${window.reason} (--wait waits)`);
    return plan;
  }
  if (window) {
    const secs = Math.ceil((window.until - now()) / 1000);
    throw new ModeWindowError(
      `refused before anything was changed: ${window.reason}; not before ${utcClock(window.until)} (in ${secs} s). The bot keeps running in ${fromMode} mode. Run this command again then, or add --wait to wait here.`,
      window.until,
    );
  }

  const done: string[] = [];
  const say = (i: number, suffix = "") => out(`${i + 1}. ${plan[i]}${suffix}`);
  const run = (args: string[]) => {
    if (opts.noRestart) return;
    const p = Bun.spawnSync([...systemctl, ...args]);
    if (p.exitCode !== 0) throw new Error(`${systemctl.join(" ")} ${args.join(" ")} exited ${p.exitCode}: ${p.stderr.toString().trim()}`);
  };
  /** A step before the service is stopped: a failure changes nothing. */
  const before = async (i: number, fn: () => Promise<unknown>, hint: string) => {
    say(i);
    try {
      await fn();
      done.push(plan[i]!);
    } catch (err) {
      throw new ModeSwitchError(`step ${i + 1} failed (${plan[i]}): ${describe(err, token)}. ${hint}`);
    }
  };
  const apiOpts = { timeoutSeconds: CALL_TIMEOUT_S };
  const oldApi = new Api(token, { apiRoot: fromRoot, ...apiOpts });
  const newApi = new Api(token, { apiRoot: toRoot, ...apiOpts });

  await before(
    0,
    () => probeBotApiServer(toRoot, { strict: opts.target === "local" }),
    `Nothing was changed. ${opts.target === "local" ? "Start the local server first (docker compose … up -d bot-api, docs/local-mode.md) and" : "Check the network and"} run this command again.`,
  );
  let oldDead = false;
  if (leave === "close") {
    const i = 1;
    say(i);
    try {
      await probeBotApiServer(fromRoot, { strict: true });
      done.push(plan[i]!);
    } catch (err) {
      if (!opts.force) {
        throw new ModeSwitchError(
          `step ${i + 1} failed (${plan[i]}): ${describe(err, token)}. Nothing was changed. close needs the local server: start it (docker compose … up -d bot-api) and run this command again; if it is gone for good, add --force to leave it without deleteWebhook and close.`,
        );
      }
      oldDead = true;
      out(`  --force: ${describe(err, token)}; deleteWebhook and close on ${fromRoot} are skipped`);
    }
  }
  const stopAt = at("stop ");
  await before(stopAt, () => Promise.resolve(run(["stop", unit])), "Nothing was changed.");

  // From here on the service is stopped: every failure rolls back (env file, restart).
  let envWritten = false;
  let closedOld = false;
  let loggedOutNow = false;
  let alreadyLoggedOut = false;
  const rollback = (): string => {
    const parts: string[] = [];
    if (envWritten) {
      try {
        writeEnvFile(opts.envFile, text, {});
        parts.push(`${opts.envFile} has its old text again`);
      } catch (err) {
        parts.push(`${opts.envFile} could NOT be restored (${(err as Error).message}): put BOT_API_MODE=${fromMode} BOT_API_ROOT=${fromRoot} back by hand`);
      }
    }
    if (opts.noRestart) parts.push(`${unit} was left stopped (--no-restart)`);
    else {
      try {
        run(["start", unit]);
        parts.push(
          `${unit} was started again in ${fromMode} mode${
            loggedOutNow || alreadyLoggedOut
              ? `, but the bot is logged out of the cloud: the cloud refuses it until ${utcClock((state.logOut?.at ?? now()) + TELEGRAM_WINDOW_MS)} and the bot connects by itself then`
              : ""
          }`,
        );
        // Started on the local server it just closed on: that is a new launch there.
        if (closedOld) saveState({ ...state, launch: { at: now(), root: fromRoot } });
      } catch (err) {
        parts.push(`${unit} could NOT be started again (${describe(err, token)}): run systemctl start ${unit}; journalctl -u ${unit}`);
      }
    }
    return `Rolled back: ${parts.join("; ")}.`;
  };
  const after = async (i: number, fn: () => Promise<unknown>, wayOut: (err: unknown) => string) => {
    say(i);
    try {
      await fn();
      done.push(plan[i]!);
    } catch (err) {
      const cause = describe(err instanceof ModeWindowError && err.answer !== undefined ? err.answer : err, token);
      const rolledBack = rollback();
      if (err instanceof ModeWindowError) throw new ModeWindowError(`step ${i + 1} failed (${plan[i]}): ${cause}. ${rolledBack} ${err.message}`, err.until);
      throw new ModeSwitchError(`step ${i + 1} failed (${plan[i]}): ${cause}. ${rolledBack} ${wayOut(err)}`);
    }
  };
  const deadHint = (err: unknown) =>
    leave === "close" && isDeadServer(err) ? ` If the local server is gone for good, run this command with --force (it leaves it without deleteWebhook and close).` : "";
  await after(
    at("deleteWebhook"),
    async () => {
      if (oldDead) return out("  skipped (--force)");
      try {
        await oldApi.deleteWebhook({ drop_pending_updates: false });
      } catch (err) {
        // The cloud after a logOut: the webhook went with it (TBA erases it on logOut).
        if (err instanceof GrammyError && err.description === "Logged out") {
          alreadyLoggedOut = true;
          return out(`  ${fromRoot} answers "Logged out": the bot is already logged out there`);
        }
        if (opts.force && isDeadServer(err)) return out(`  --force: ${describe(err, token)}; skipped`);
        throw err;
      }
    },
    (err) => `Nothing else was changed. Check ${fromRoot} and run this command again.${deadHint(err)}`,
  );
  await after(
    at(`${leave} on`),
    async () => {
      if (oldDead || alreadyLoggedOut) return out(`  skipped (${oldDead ? "--force" : "already logged out"})`);
      try {
        if (leave === "logOut") {
          await oldApi.logOut();
          loggedOutNow = true;
          saveState({ ...state, logOut: { at: now(), root: fromRoot } });
        } else {
          await oldApi.close();
          closedOld = true;
          const { launch: _closed, ...rest } = state;
          saveState(rest);
        }
      } catch (err) {
        // Already logged out / closed is the state we want.
        if (err instanceof GrammyError && /^(Logged out|Bad Request: the bot has already been closed)$/.test(err.description)) return;
        if (leave === "close" && err instanceof GrammyError && err.error_code === 429 && err.parameters.retry_after !== undefined) {
          const launchAt = launchFromRetryAfter(now(), err.parameters.retry_after);
          saveState({ ...state, launch: { at: launchAt, root: fromRoot } });
          const until = launchAt + TELEGRAM_WINDOW_MS;
          throw new ModeWindowError(`Telegram: ${WINDOW_REASON.close}. Run this command again after ${utcClock(until)}, or add --wait.`, until, err);
        }
        if (opts.force && isDeadServer(err)) return out(`  --force: ${describe(err, token)}; skipped`);
        throw err;
      }
    },
    (err) => `Nothing else was changed. Check ${fromRoot} and run this command again.${deadHint(err)}`,
  );
  await after(
    at("getMe on"),
    async () => {
      try {
        await newApi.getMe();
      } catch (err) {
        const refusal = opts.target === "cloud" ? logOutRefusal(err) : null;
        if (!refusal) throw err;
        // The cloud still refuses the bot after a logOut. Known: the recorded logOut, a retry_after;
        // and the rollback relaunches the bot on the local server it closed (a new close window).
        // Nothing known: the logOut may have been just now, so the whole window.
        const retry = refusal.parameters.retry_after;
        const known = [retry !== undefined ? now() + retry * 1000 : 0, state.logOut?.root === toRoot ? state.logOut.at + TELEGRAM_WINDOW_MS : 0, closedOld ? now() + TELEGRAM_WINDOW_MS : 0];
        const until = Math.max(...known) || now() + TELEGRAM_WINDOW_MS;
        throw new ModeWindowError(`Telegram: ${WINDOW_REASON.logOut}. Run this command again after ${utcClock(until)}, or add --wait.`, until, err);
      }
      if (opts.target === "local" && state.launch?.root !== toRoot) saveState({ ...state, launch: { at: now(), root: toRoot } });
    },
    () =>
      loggedOutNow || alreadyLoggedOut
        ? `To go on to local mode instead, make ${toRoot} answer (is the local server running with --local and the right api id/hash?) and run this command again (no second logOut is needed).`
        : `Check ${toRoot} (network, api id/hash of a local server) and run this command again.`,
  );
  await after(
    at("write "),
    async () => {
      writeEnvFile(opts.envFile, text, { BOT_API_MODE: opts.target, BOT_API_ROOT: toRoot });
      envWritten = true;
    },
    () => `Free space or fix the permissions of ${opts.envFile} and run this command again.`,
  );
  await after(
    at("start "),
    () => Promise.resolve(run(["start", unit])),
    () => `Look at journalctl -u ${unit}; fix the cause and run this command again.`,
  );
  if (oldDead) {
    out(`  note: ${fromRoot} was left without close (--force). If that server comes back, it may serve this bot too: stop its container for good, or delete the bot's folder under its --dir before starting it again (docs/local-mode.md).`);
  }
  out(`switched to ${opts.target} mode at ${toRoot}`);
  return done;
}
