/**
 * Is Telegram delivering to our webhook? The pure judge of getWebhookInfo answers (issue 9 item 3,
 * bot side; issue 10 item 1). Rules, from how telegram-bot-api reports them (TBA Client.cpp
 * `webhook_error`, `finish_set_webhook`, `on_webhook_closed`): `last_error_date`/`last_error_message`
 * are set by every failed delivery and cleared only by setWebhook or deleteWebhook, never by a later
 * success — so an error counts only while it is newer than the last update the bot received and
 * younger than {@link WEBHOOK_ERROR_WINDOW_MS}; `pending_update_count` counts updates not delivered yet.
 *
 * Failing when:
 * - no webhook is set, or Telegram has another URL than WEBHOOK_URL (a switch that did not happen);
 * - a delivery error is current (see above);
 * - pending_update_count grew at every one of the last {@link GROWTH_SAMPLES} samples.
 */
import type { Check } from "./check.ts";

/** The getWebhookInfo fields the judge reads (Bot API: WebhookInfo). */
export interface WebhookInfoFields {
  /** Empty (or absent) when no webhook is set. */
  readonly url?: string;
  readonly pending_update_count: number;
  /** Epoch seconds of the most recent delivery error. */
  readonly last_error_date?: number;
  readonly last_error_message?: string;
}

/** A delivery error older than this no longer fails the check (no delivery was tried since), ms. */
export const WEBHOOK_ERROR_WINDOW_MS = 10 * 60_000;

/** pending_update_count must have grown over this many consecutive samples to fail the check. */
export const GROWTH_SAMPLES = 3;

/** The judge keeps the last samples of pending_update_count to see growth. */
export class WebhookJudge {
  private readonly pending: Array<{ readonly at: number; readonly n: number }> = [];
  /** The last answer judged (metrics: pending count, last error date in epoch s), or null. */
  last: { readonly pending: number; readonly lastErrorDate: number | null } | null = null;

  /** @param expectedUrl WEBHOOK_URL (what start-up registered) */
  constructor(private readonly expectedUrl: string) {}

  /**
   * Judge one getWebhookInfo answer.
   * @param info the answer
   * @param now epoch ms of the answer
   * @param lastUpdateAt epoch ms of the last update the bot received, or null
   */
  judge(info: WebhookInfoFields, now: number, lastUpdateAt: number | null): Check {
    this.last = { pending: info.pending_update_count, lastErrorDate: info.last_error_date ?? null };
    this.pending.push({ at: now, n: info.pending_update_count });
    if (this.pending.length > GROWTH_SAMPLES + 1) this.pending.shift();
    const pending = `pending_update_count ${info.pending_update_count}`;
    if (!info.url) return { ok: false, detail: `no webhook is set at Telegram (getWebhookInfo url is empty; ${pending}): restart the bot to set it again` };
    if (info.url !== this.expectedUrl) return { ok: false, detail: `Telegram delivers to ${info.url}, not WEBHOOK_URL ${this.expectedUrl} (${pending}): restart the bot to set it again` };
    const error = this.currentError(info, now, lastUpdateAt);
    if (error) return { ok: false, detail: `Telegram cannot deliver to the webhook: "${info.last_error_message}" at ${error} (${pending}); check nginx and the certificate` };
    const growth = this.growth();
    if (growth) return { ok: false, detail: `pending_update_count keeps growing (${growth}): updates are not being delivered` };
    const past = info.last_error_message && info.last_error_date ? `; last error "${info.last_error_message}" at ${isoSeconds(info.last_error_date)} has passed` : "";
    return { ok: true, detail: `delivering to ${info.url} (${pending}${past})` };
  }

  /** ISO time of a delivery error that still counts, or null. */
  private currentError(info: WebhookInfoFields, now: number, lastUpdateAt: number | null): string | null {
    if (!info.last_error_message || !info.last_error_date) return null;
    const at = info.last_error_date * 1000;
    if (now - at > WEBHOOK_ERROR_WINDOW_MS) return null;
    // Seconds resolution: an update received in the same second as the error is taken as after it.
    if (lastUpdateAt !== null && Math.floor(lastUpdateAt / 1000) >= info.last_error_date) return null;
    return isoSeconds(info.last_error_date);
  }

  /** "3 → 5 → 9 → 12 over 3 min" when every one of the last GROWTH_SAMPLES steps grew, else null. */
  private growth(): string | null {
    if (this.pending.length < GROWTH_SAMPLES + 1) return null;
    for (let i = 1; i < this.pending.length; i++) if (this.pending[i]!.n <= this.pending[i - 1]!.n) return null;
    const span = Math.round((this.pending.at(-1)!.at - this.pending[0]!.at) / 60_000);
    return `${this.pending.map((p) => p.n).join(" → ")} over ${span} min`;
  }
}

function isoSeconds(epochS: number): string {
  return new Date(epochS * 1000).toISOString().replace(/\.000Z$/, "Z");
}
