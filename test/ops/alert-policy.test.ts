/**
 * bot/ops/alert-policy.ts with a fake clock (issue 10 item 3; CONTRACTS.md §2): at most one alert per
 * cause per hour (other causes are not held back), the message names the host, the cause and how many
 * were not sent, and repeated crashes fire once per burst.
 */
import { describe, expect, test } from "vitest";
import { ALERT_CAUSES, ALERT_EVERY_MS, alertMessage, CrashWatch, CRASHES_FOR_ALERT, decide, isAlertCause, type AlertRow } from "../../bot/ops/alert-policy.ts";

const T0 = Date.parse("2026-11-30T10:00:00Z");
const row = (id: number, cause: string, state: string, settledAt: number | null = null): AlertRow => ({ id, cause, state, createdAt: settledAt ?? T0, settledAt });

describe("decide: once per cause per hour", () => {
  test("the first of a cause is sent; the next within the hour is suppressed; after the hour it is sent with the count", () => {
    const sent = row(1, "disk_low", "sent", T0);
    expect(decide(row(9, "disk_low", "pending"), [], T0)).toEqual({ action: "send", suppressedSince: 0 });
    expect(decide(row(2, "disk_low", "pending"), [sent], T0 + ALERT_EVERY_MS - 1)).toEqual({ action: "suppress", lastSentAt: T0 });
    const later = [sent, row(2, "disk_low", "suppressed", T0 + 60_000), row(3, "disk_low", "suppressed", T0 + 120_000)];
    expect(decide(row(4, "disk_low", "pending"), later, T0 + ALERT_EVERY_MS)).toEqual({ action: "send", suppressedSince: 2 });
  });

  test("another cause, or a failed send, does not hold an alert back", () => {
    expect(decide(row(2, "webhook_error", "pending"), [row(1, "disk_low", "sent", T0)], T0 + 1000).action).toBe("send");
    expect(decide(row(2, "disk_low", "pending"), [row(1, "disk_low", "failed", T0), row(3, "disk_low", "no_admins", T0)], T0 + 1000).action).toBe("send");
  });
});

test("the message: host, title, text, and what was not sent", () => {
  expect(alertMessage("backup_failed", "restic: wrong password", "vps-1", 0)).toBe("⚠️ docket on vps-1: backup failed\nrestic: wrong password");
  expect(alertMessage("disk_low", "1 MB free", "vps-1", 3)).toBe("⚠️ docket on vps-1: disk below the byte budget\n1 MB free\n(3 more of this kind in the last hour were not sent: at most one per hour)");
  expect(Object.keys(ALERT_CAUSES)).toEqual(["disk_low", "processing_crashes", "backup_failed", "verify_failed", "webhook_error", "unit_failed", "bot_api_dir"]);
  expect([isAlertCause("unit_failed"), isAlertCause("toString"), isAlertCause("disk")]).toEqual([true, false, false]);
});

describe("CrashWatch", () => {
  test(`${CRASHES_FOR_ALERT} crashes within the window fire once; quiet for a window re-arms it`, () => {
    const w = new CrashWatch(600_000);
    const min = (m: number) => T0 + m * 60_000;
    const seen = [w.look(0, min(0)), w.look(1, min(1)), w.look(2, min(2)), w.look(3, min(3)), w.look(5, min(4)), w.look(5, min(20)), w.look(6, min(21)), w.look(8, min(22))];
    expect(seen).toEqual([null, null, null, 3, null, null, null, 3]);
  });

  test("crashes spread wider than the window never fire", () => {
    const w = new CrashWatch(600_000);
    expect([0, 1, 2, 3, 4].map((n) => w.look(n, T0 + n * 6 * 60_000))).toEqual([null, null, null, null, null]);
  });
});
