/**
 * Telegram's 10-minute windows around a server switch (botapi-facts.md §4; tdlib/telegram-bot-api
 * Client.cpp `on_cmd` and the Bot API docs of logOut and close), judged from what `docket mode`
 * recorded (./mode-state.ts). Pure: state and time in, one decision out.
 * - logOut: after a logOut the cloud refuses the bot for 10 minutes.
 * - close: a local server answers close with 429 during the first 10 minutes after the bot was
 *   launched on it (when the launch came more than 10 minutes after the server started; docket
 *   cannot see the server's start, so it assumes the rule applies).
 */

/** Length of both windows, ms. */
export const TELEGRAM_WINDOW_MS = 10 * 60_000;

/** What `docket mode` recorded about the bot's sessions (epoch ms, and the server's Bot API root). */
export interface ModeState {
  /** The last logOut docket did, on which server. */
  readonly logOut?: { readonly at: number; readonly root: string };
  /** When the bot was (at the latest) launched on a local server and not closed since. */
  readonly launch?: { readonly at: number; readonly root: string };
}

/** A switch: the server the bot leaves and the one it goes to. */
export interface Move {
  readonly fromMode: "cloud" | "local";
  readonly fromRoot: string;
  readonly target: "cloud" | "local";
  readonly toRoot: string;
}

/** A time before which Telegram refuses a step of the switch. */
export interface TelegramWindow {
  /** Epoch ms from which the step is accepted. */
  readonly until: number;
  /** Which rule: the close window of a local server, or the cloud's refusal after logOut. */
  readonly rule: "close" | "logOut";
  /** The rule in one clause, for the operator's sentence. */
  readonly reason: string;
}

/** Operator clause of each rule. */
export const WINDOW_REASON = {
  close: "a local Bot API server answers close with 429 during the first 10 minutes after the bot was launched on it (Bot API: close)",
  logOut: "the cloud Bot API refuses the bot for 10 minutes after a logOut (Bot API: logOut)",
} as const;

/**
 * The latest window, recorded in `state`, that the switch `move` would meet at `now`; null when
 * none is pending.
 */
export function pendingWindow(state: ModeState, move: Move, now: number): TelegramWindow | null {
  const windows: TelegramWindow[] = [];
  if (move.fromMode === "local" && state.launch?.root === move.fromRoot) {
    windows.push({ until: state.launch.at + TELEGRAM_WINDOW_MS, rule: "close", reason: WINDOW_REASON.close });
  }
  if (move.target === "cloud" && state.logOut?.root === move.toRoot) {
    windows.push({ until: state.logOut.at + TELEGRAM_WINDOW_MS, rule: "logOut", reason: WINDOW_REASON.logOut });
  }
  const open = windows.filter((w) => w.until > now).sort((a, b) => b.until - a.until);
  return open[0] ?? null;
}

/** The launch time a close answered with 429 `retry_after` seconds at `now` implies (epoch ms). */
export function launchFromRetryAfter(now: number, retryAfterSeconds: number): number {
  return now + retryAfterSeconds * 1000 - TELEGRAM_WINDOW_MS;
}

/** `HH:MM:SS UTC` of an epoch-ms time, for the operator's sentence. */
export function utcClock(ms: number): string {
  return `${new Date(ms).toISOString().slice(11, 19)} UTC`;
}
