/**
 * bot/ops/webhook-state.ts: judging getWebhookInfo the way telegram-bot-api fills it (issue 9 item 3,
 * bot side): `last_error_*` stays after later successes, so an error counts only while it is newer
 * than the last update received and younger than the window; a pending count that grows at every
 * sample fails; a URL other than WEBHOOK_URL, or none, fails.
 */
import { describe, expect, test } from "vitest";
import { GROWTH_SAMPLES, WEBHOOK_ERROR_WINDOW_MS, WebhookJudge } from "../../bot/ops/webhook-state.ts";

const URL_ = "https://bot.example.org/tg/hook";
const T0 = Date.parse("2026-11-30T10:00:00Z");
const s = (ms: number) => Math.floor(ms / 1000);

describe("WebhookJudge", () => {
  test("healthy: the URL matches, nothing pending, no error", () => {
    expect(new WebhookJudge(URL_).judge({ url: URL_, pending_update_count: 0 }, T0, null)).toEqual({ ok: true, detail: `delivering to ${URL_} (pending_update_count 0)` });
  });

  test("a current delivery error fails with Telegram's message; an update received after it, or age, clears it", () => {
    const info = { url: URL_, pending_update_count: 4, last_error_date: s(T0 - 5000), last_error_message: "Wrong response from the webhook: 502 Bad Gateway" };
    const j = new WebhookJudge(URL_);
    expect(j.judge(info, T0, T0 - 60_000)).toEqual({
      ok: false,
      detail: `Telegram cannot deliver to the webhook: "Wrong response from the webhook: 502 Bad Gateway" at 2026-11-30T09:59:55Z (pending_update_count 4); check nginx and the certificate`,
    });
    expect(j.judge(info, T0, null).ok).toBe(false);
    // Delivered since (TBA never clears last_error_* on success): ok, and the detail says the error has passed.
    const after = new WebhookJudge(URL_).judge({ ...info, pending_update_count: 0 }, T0, T0 - 1000);
    expect(after).toEqual({ ok: true, detail: `delivering to ${URL_} (pending_update_count 0; last error "Wrong response from the webhook: 502 Bad Gateway" at 2026-11-30T09:59:55Z has passed)` });
    // No delivery tried for longer than the window: the old error no longer counts.
    expect(new WebhookJudge(URL_).judge(info, T0 - 5000 + WEBHOOK_ERROR_WINDOW_MS + 1000, null).ok).toBe(true);
  });

  test(`pending_update_count growing at each of ${GROWTH_SAMPLES} samples fails; one dip resets it`, () => {
    const j = new WebhookJudge(URL_);
    const at = (i: number) => T0 + i * 60_000;
    const verdicts = [3, 5, 9].map((n, i) => j.judge({ url: URL_, pending_update_count: n }, at(i), null).ok);
    expect(verdicts).toEqual([true, true, true]);
    expect(j.judge({ url: URL_, pending_update_count: 12 }, at(3), null)).toEqual({ ok: false, detail: "pending_update_count keeps growing (3 → 5 → 9 → 12 over 3 min): updates are not being delivered" });
    expect(j.judge({ url: URL_, pending_update_count: 11 }, at(4), null).ok).toBe(true);
    expect(j.judge({ url: URL_, pending_update_count: 15 }, at(5), null).ok).toBe(true);
  });

  test("no webhook, or another URL than WEBHOOK_URL, fails naming both", () => {
    const j = new WebhookJudge(URL_);
    expect(j.judge({ url: "", pending_update_count: 2 }, T0, null)).toEqual({ ok: false, detail: "no webhook is set at Telegram (getWebhookInfo url is empty; pending_update_count 2): restart the bot to set it again" });
    expect(j.judge({ url: "https://old.example.org/tg/hook", pending_update_count: 0 }, T0, null)).toEqual({
      ok: false,
      detail: `Telegram delivers to https://old.example.org/tg/hook, not WEBHOOK_URL ${URL_} (pending_update_count 0): restart the bot to set it again`,
    });
  });
});
