/**
 * Operator alerts, the I/O shell (issue 10 item 3; CONTRACTS.md §2). An alert is a row in the store's
 * `ops_alerts` table — raised by the bot itself (disk, webhook, backup, crashes) or recorded by
 * `docket notify` (the OnFailure= hook, the backup scripts) — and one journal line at warning. The
 * sender claims pending rows, sends each to every ADMIN_USER_IDS through the outbox (its pacing and
 * 429 holds), and settles it: `sent`, `suppressed` (its cause went out less than an hour ago: at
 * most once per cause per hour), `failed`, or `no_admins`. Without a running bot the rows wait; the
 * notify command sends them itself then (bot/cli/notify-command.ts).
 */
import type { JobStore, OpsAlert } from "../jobs/store.ts";
import type { Logger } from "../log.ts";
import type { Metrics } from "./metrics.ts";
import { ALERT_EVERY_MS, alertMessage, decide, isAlertCause, type AlertCause, type AlertRow } from "./alert-policy.ts";

/** A stored alert as the policy reads it (epoch ms). */
function policyRow(a: OpsAlert): AlertRow {
  return { id: a.id, cause: a.cause, state: a.state, createdAt: Date.parse(a.createdAt), settledAt: a.settledAt ? Date.parse(a.settledAt) : null };
}

/** What the sender needs. */
export interface AlertDeps {
  readonly store: JobStore;
  readonly log: Logger;
  readonly metrics?: Pick<Metrics, "alerts">;
  /** ADMIN_USER_IDS. */
  readonly admins: readonly number[];
  /** HOST_ID, named in every message. */
  readonly host: string;
  /** Send one plain-text message to a private chat (through the outbox); rejects when Telegram refused it. */
  readonly send: (chatId: number, text: string) => Promise<void>;
  /** Clock, epoch ms. */
  readonly now?: () => number;
}

/** Raise and deliver alerts. */
export class Alerts {
  private timer: ReturnType<typeof setInterval> | null = null;
  private delivering: Promise<void> | null = null;
  private warnedNoAdmins = false;

  constructor(private readonly deps: AlertDeps) {}

  private get now(): number {
    return (this.deps.now ?? Date.now)();
  }

  /**
   * Record an alert: a pending row and one journal line at warning (`alert <cause>: <text>`).
   * @returns the alert's id
   */
  async record(cause: AlertCause, text: string, source: "bot" | "cli"): Promise<number> {
    const id = await this.deps.store.recordAlert({ cause, text, source }, this.now);
    this.deps.log.warn({ alert: id, cause, source }, `alert ${cause}: ${text}`);
    return id;
  }

  /** {@link record} an alert of the bot and deliver it now (never throws: a failure is logged). */
  async raise(cause: AlertCause, text: string): Promise<void> {
    try {
      await this.record(cause, text, "bot");
    } catch (err) {
      this.deps.log.error({ err, cause }, `could not record alert ${cause}: ${text}`);
      return;
    }
    void this.deliver();
  }

  /** Deliver pending alerts every `everyMs` (and after each raise) until {@link stop}. */
  start(everyMs = 15_000): void {
    if (this.timer) return;
    void this.deliver();
    this.timer = setInterval(() => void this.deliver(), everyMs);
    this.timer.unref?.();
  }

  /** Stop the timer; resolves once a delivery in progress has ended. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.delivering;
  }

  /** One delivery round over every pending alert (rounds never overlap). */
  deliver(): Promise<void> {
    this.delivering ??= this.round().finally(() => (this.delivering = null));
    return this.delivering;
  }

  private async round(): Promise<void> {
    const { store, log } = this.deps;
    try {
      for (const alert of await store.pendingAlerts(this.now)) {
        if (!(await store.claimAlert(alert.id, this.now))) continue; // another sender has it
        await this.settle(alert);
      }
    } catch (err) {
      log.error({ err }, "alert delivery round failed; pending alerts are tried again");
    }
  }

  private async settle(alert: OpsAlert): Promise<void> {
    const { store, log, admins } = this.deps;
    const cause = isAlertCause(alert.cause) ? alert.cause : "unit_failed";
    const count = (result: string) => this.deps.metrics?.alerts.inc({ cause: alert.cause, result });
    const recent = await store.alertsSince(this.now - ALERT_EVERY_MS);
    const d = decide(policyRow(alert), recent.map(policyRow), this.now);
    if (d.action === "suppress") {
      await store.settleAlert(alert.id, "suppressed", `same cause sent at ${new Date(d.lastSentAt).toISOString()}`, this.now);
      count("suppressed");
      return;
    }
    if (admins.length === 0) {
      await store.settleAlert(alert.id, "no_admins", "ADMIN_USER_IDS is empty", this.now);
      count("no_admins");
      if (!this.warnedNoAdmins) log.warn("ADMIN_USER_IDS is empty: alerts stay in the journal only; set it to your Telegram user id to get them in Telegram");
      this.warnedNoAdmins = true;
      return;
    }
    const text = alertMessage(cause, alert.text, this.deps.host, d.suppressedSince);
    const failures: string[] = [];
    for (const admin of admins) {
      try {
        await this.deps.send(admin, text);
      } catch (err) {
        failures.push(`${admin}: ${(err as Error).message}`);
      }
    }
    if (failures.length === admins.length) {
      await store.settleAlert(alert.id, "failed", failures.join("; "), this.now);
      count("failed");
      log.error({ alert: alert.id, cause: alert.cause, failures }, `alert ${alert.cause} could not be sent to any admin (has each of ADMIN_USER_IDS started a chat with the bot?)`);
      return;
    }
    await store.settleAlert(alert.id, "sent", failures.length ? `not delivered to ${failures.join("; ")}` : null, this.now);
    count("sent");
    if (failures.length) log.warn({ alert: alert.id, failures }, "alert not delivered to every admin");
  }
}
