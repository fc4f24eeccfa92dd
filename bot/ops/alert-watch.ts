/**
 * What makes the bot raise an operator alert by itself (issue 10 item 3), at the readiness monitor's
 * pace: a readiness check that starts failing (`disk` → disk_low, `webhook` → webhook_error,
 * `backup` → backup_failed, `botApiDir` → bot_api_dir in local mode: every local job would end
 * `file_not_readable` until the operator fixes it), a restore drill newly recorded as failed (verify_failed), and repeated
 * processing crashes (processing_crashes, bot/ops/alert-policy.ts CrashWatch). `unit_failed` comes
 * only from `docket notify` (the OnFailure= hook). Each raise is one journal line at warning and a
 * pending alert; the once-per-hour rule is the sender's.
 */
import { readBackupStatus } from "../backup/status.ts";
import { CrashWatch, type AlertCause } from "./alert-policy.ts";
import type { Alerts } from "./alerts.ts";
import type { Check } from "./check.ts";
import type { Metrics } from "./metrics.ts";

/** Readiness checks whose failure is an alert, and its cause. */
const CAUSE_OF_CHECK: Readonly<Record<string, AlertCause>> = { disk: "disk_low", webhook: "webhook_error", backup: "backup_failed", botApiDir: "bot_api_dir" };

/** Raises alerts from readiness transitions, the backup status file and the crash counter. */
export class AlertWatch {
  private readonly crashes = new CrashWatch();
  /** `at` of the last failed verify already alerted (epoch s). */
  private verifyAlertedAt: number | null = null;

  constructor(
    private readonly alerts: Pick<Alerts, "raise">,
    private readonly metrics: Pick<Metrics, "tryFailures">,
    private readonly dataDir: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** The monitor's onChange: a check that starts failing raises its cause (when it has one). */
  onReadinessChange(name: string, check: Check): void {
    const cause = CAUSE_OF_CHECK[name];
    if (cause && !check.ok) void this.alerts.raise(cause, check.detail);
  }

  /** The monitor's onRound: a newly failed restore drill; repeated processing crashes. */
  async round(): Promise<void> {
    const verify = readBackupStatus(this.dataDir).verify;
    // A drill that failed long ago (before a restart) is not news: only one of the last 24 h alerts.
    if (verify && !verify.ok && verify.at !== this.verifyAlertedAt && this.now() - verify.at * 1000 < 86_400_000) {
      this.verifyAlertedAt = verify.at;
      const at = new Date(verify.at * 1000).toISOString();
      void this.alerts.raise("verify_failed", `the restore drill at ${at} failed${verify.error ? `: ${verify.error}` : ""}; the backups may not restore: run docket backup verify and read docs/backup.md`);
    }
    const crashed = (await this.metrics.tryFailures.get()).values.filter((v) => v.labels.reason === "processing_crashed").reduce((n, v) => n + v.value, 0);
    const inWindow = this.crashes.look(crashed, this.now());
    if (inWindow !== null) {
      void this.alerts.raise(
        "processing_crashes",
        `${inWindow} processing tries crashed in the last ${Math.round(this.crashes.windowMs / 60_000)} min (reason processing_crashed): journalctl -u docket -p warning --since -15min; dmesg for OOM kills; PROCESS_MEMORY_MB`,
      );
    }
  }
}
