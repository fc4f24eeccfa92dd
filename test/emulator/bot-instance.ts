/**
 * The bot's instance on a Bot API server, and Telegram's rules for leaving it (botapi-facts.md §4,
 * tdlib/telegram-bot-api ClientManager.cpp and Client.cpp `on_cmd`, `get_closing_error`):
 * - An instance is launched by the first request with the token after the server started (or after
 *   the instance was closed). A `close` while there is no instance answers
 *   400 "Bad Request: the bot has already been closed".
 * - `close` answers 429 "Too Many Requests: retry after N" during the first 10 minutes after the
 *   instance was launched, when it was launched more than 10 minutes after the server started
 *   (N = the rest of those 10 minutes, whole seconds, truncated as in TBA). Otherwise it closes the
 *   instance: the next request launches a new one.
 * - After `logOut` every request answers 400 "Logged out" for 10 minutes (the cloud refuses the bot
 *   for 10 minutes after a logOut; the exact answer inside the window is UNCONFIRMED, TBA answers
 *   "Logged out" while the logged-out instance lives). After the window a request logs the bot in
 *   again as a new instance.
 */
import { ApiError, badRequest, E } from "./api-error.ts";

/** Length of the close window after a launch and of the refusal after logOut, ms (Telegram: 10 minutes). */
export const SERVER_WINDOW_MS = 10 * 60_000;

/** Launch, close and logOut state of the bot on one server. */
export class BotInstance {
  /** When the server started, epoch ms. */
  readonly serverStartedAt: number;
  /** When the current instance was launched, epoch ms; undefined = no instance (never launched, or closed). */
  launchedAt: number | undefined;
  /** When logOut was called, epoch ms, while its window lasts. */
  loggedOutAt: number | undefined;

  constructor(now: number) {
    this.serverStartedAt = now;
  }

  /**
   * Called for every request with a valid token: refuses it inside the logOut window, otherwise
   * launches an instance if there is none (except for `close`, which finds none).
   * @returns the error to answer with, or undefined to go on
   */
  admit(method: string, now: number): ApiError | undefined {
    if (this.loggedOutAt !== undefined) {
      if (now < this.loggedOutAt + SERVER_WINDOW_MS) return new ApiError(400, E.loggedOut);
      this.loggedOutAt = undefined;
    }
    if (this.launchedAt === undefined && method !== "close") this.launchedAt = now;
    return undefined;
  }

  /** `close`. @throws ApiError 400 already closed, or 429 with retry_after inside the launch window */
  close(now: number): void {
    if (this.launchedAt === undefined) throw badRequest(E.alreadyClosed);
    const retryAfter = Math.trunc((SERVER_WINDOW_MS - (now - this.launchedAt)) / 1000);
    if (retryAfter > 0 && this.launchedAt > this.serverStartedAt + SERVER_WINDOW_MS) {
      throw new ApiError(429, `Too Many Requests: retry after ${retryAfter}`, retryAfter);
    }
    this.launchedAt = undefined;
  }

  /** `logOut`: the instance ends and the server refuses the bot for {@link SERVER_WINDOW_MS}. */
  logOut(now: number): void {
    this.loggedOutAt = now;
    this.launchedAt = undefined;
  }
}
