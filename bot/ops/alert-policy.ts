/**
 * The pure core of operator alerts (issue 10 item 3; CONTRACTS.md §2): which causes exist, whether an
 * alert goes out or is suppressed (at most once per cause per hour), what the admins read, and when
 * repeated processing crashes become an alert. Time and rows in, one decision out; the shell is
 * bot/ops/alerts.ts.
 */

/** Alert causes (CONTRACTS.md §2), with the title the admins read. */
export const ALERT_CAUSES = {
  disk_low: "disk below the byte budget",
  processing_crashes: "repeated processing crashes",
  backup_failed: "backup failed",
  verify_failed: "restore drill (backup verify) failed",
  webhook_error: "webhook in error",
  unit_failed: "a docket unit failed",
  bot_api_dir: "the local Bot API server's files are out of reach",
} as const;

/** One of {@link ALERT_CAUSES}. */
export type AlertCause = keyof typeof ALERT_CAUSES;

/** True when `s` names a cause. */
export function isAlertCause(s: string): s is AlertCause {
  return Object.hasOwn(ALERT_CAUSES, s);
}

/** At most one alert per cause per this long, ms. */
export const ALERT_EVERY_MS = 3_600_000;

/** An alert row as the policy sees it. */
export interface AlertRow {
  readonly id: number;
  readonly cause: string;
  readonly state: string;
  /** Epoch ms. */
  readonly createdAt: number;
  /** Epoch ms when it was sent or suppressed, or null. */
  readonly settledAt: number | null;
}

/**
 * Send or suppress a pending alert: suppressed when an alert of its cause was sent less than
 * {@link ALERT_EVERY_MS} before `now`.
 * @param recent alerts of the last hour (any cause, any state)
 * @returns `send` with how many of its cause were suppressed since the last one sent, or `suppress`
 *   naming when the last one went out
 */
export function decide(alert: AlertRow, recent: readonly AlertRow[], now: number): { readonly action: "send"; readonly suppressedSince: number } | { readonly action: "suppress"; readonly lastSentAt: number } {
  const same = recent.filter((r) => r.cause === alert.cause && r.id !== alert.id);
  const lastSent = same.filter((r) => r.state === "sent" && r.settledAt !== null && now - r.settledAt < ALERT_EVERY_MS).map((r) => r.settledAt!);
  if (lastSent.length > 0) return { action: "suppress", lastSentAt: Math.max(...lastSent) };
  return { action: "send", suppressedSince: same.filter((r) => r.state === "suppressed").length };
}

/**
 * The message the admins get (operator text, English; plain text, no parse mode).
 * @param host HOST_ID (which box)
 * @param suppressed alerts of this cause not sent in the last hour
 */
export function alertMessage(cause: AlertCause, text: string, host: string, suppressed: number): string {
  const more = suppressed > 0 ? `\n(${suppressed} more of this kind in the last hour were not sent: at most one per hour)` : "";
  return `⚠️ docket on ${host}: ${ALERT_CAUSES[cause]}\n${text}${more}`;
}

/** Crashes within {@link CrashWatch} `windowMs` that make an alert. */
export const CRASHES_FOR_ALERT = 3;

/**
 * Repeated processing crashes (`processing_crashed` tries): fed the running total of crashed tries
 * at each look, it fires once when the last `windowMs` saw at least {@link CRASHES_FOR_ALERT}, and
 * again only after a window without that many.
 */
export class CrashWatch {
  private readonly samples: Array<{ readonly at: number; readonly total: number }> = [];
  private firing = false;

  /** @param windowMs how far back crashes count, ms (default 10 min) */
  constructor(readonly windowMs = 600_000) {}

  /**
   * Look at the total at `now` (epoch ms).
   * @returns the number of crashes in the window when the alert should be raised now, else null
   */
  look(total: number, now: number): number | null {
    this.samples.push({ at: now, total });
    while (this.samples.length > 1 && this.samples[1]!.at <= now - this.windowMs) this.samples.shift();
    const inWindow = total - this.samples[0]!.total;
    if (inWindow >= CRASHES_FOR_ALERT) {
      if (this.firing) return null;
      this.firing = true;
      return inWindow;
    }
    this.firing = false;
    return null;
  }
}
