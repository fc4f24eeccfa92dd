/**
 * The bot's exit statuses, in one place: the systemd unit's `RestartPreventExitStatus=` names the
 * ones a restart cannot fix (test/bundle/systemd.test.ts reads them from here).
 */

/** Clean stop (SIGTERM/SIGINT, also during start-up). */
export const EXIT_OK = 0;

/** A fault a restart may fix (long polling stopped, an unexpected crash): systemd restarts the unit. */
export const EXIT_FAILURE = 1;

/**
 * Invalid configuration (bot/config.ts names each variable), or a database schema newer than this
 * release (bot/db/schema-version.ts names both versions): restarting cannot help.
 */
export const EXIT_BAD_CONFIG = 2;

/**
 * The Bot API refused the token (401 Unauthorized) or `BOT_API_ROOT` is not a Bot API server (404 for
 * getMe): BSD sysexits `EX_CONFIG` (CONTRACTS.md §3). Restarting cannot help until the operator fixes
 * `BOT_TOKEN` / `BOT_API_ROOT`, so the unit never restarts on it.
 */
export const EXIT_TOKEN_REFUSED = 78;

/** Exit statuses systemd must not restart on (`RestartPreventExitStatus=`), in the unit's order. */
export const NO_RESTART_STATUSES: readonly number[] = Object.freeze([EXIT_BAD_CONFIG, EXIT_TOKEN_REFUSED]);
