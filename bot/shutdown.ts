/**
 * The bot's graceful-stop deadlines, in one place: `bot/main.ts` and `bot/app.ts` use them, and
 * the systemd unit's `TimeoutStopSec` must exceed their sum (test/bundle/systemd.test.ts), so
 * SIGKILL never cuts a drain that was still within its bounds.
 */

/** How long stopping intake (the long poll or the webhook server) may take, ms. */
export const INTAKE_STOP_MS = 3000;

/** `app.close()` deadline: running steps get this long, then pending chat deliveries get it again, ms. */
export const DRAIN_MS = 15_000;

/** The outbox's shutdown timeout (seed 002: `close()` waits this long, then cancels), ms. */
export const OUTBOX_CLOSE_MS = 10_000;

/** After the drain deadline aborts them, how long aborted deliveries may take to end, ms. */
export const ABORT_GRACE_MS = 1000;

/** Worst-case graceful stop: intake, then two drains (the first plus the abort grace), then the outbox, ms (44 000). */
export const SHUTDOWN_BOUND_MS = INTAKE_STOP_MS + 2 * DRAIN_MS + ABORT_GRACE_MS + OUTBOX_CLOSE_MS;
