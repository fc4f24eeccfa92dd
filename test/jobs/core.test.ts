/** Pure core of the job engine: transitions, resume steps, lease rules, budget, retry (fake clock, ms per test). */
import { describe, expect, test } from "vitest";
import { fits, refinedReservation, reservationFor } from "../../bot/jobs/budget.ts";
import { isClaimable, isLeased, isLongDead, iso, leaseDeadline, renewAt } from "../../bot/jobs/lease.ts";
import { backoffMs, decideAfterFailure, exhaustedAtClaim } from "../../bot/jobs/retry.ts";
import { canTransition, isActive, isResultAlive, poolFor, resumeStep, visibleState } from "../../bot/jobs/states.ts";

const T0 = Date.parse("2026-11-30T10:00:00.000Z");

describe("states (seed 000: forward-only transitions)", () => {
  test("the working path moves forward only", () => {
    expect(canTransition("accepted", "fetched")).toBe(true);
    expect(canTransition("fetched", "processing")).toBe(true);
    expect(canTransition("processing", "ready")).toBe(true);
    expect(canTransition("ready", "expired")).toBe(true);
    expect(canTransition("fetched", "accepted")).toBe(false);
    expect(canTransition("processing", "fetched")).toBe(false);
    expect(canTransition("ready", "processing")).toBe(false);
    expect(canTransition("accepted", "ready")).toBe(false);
  });
  test("every active state may fail; final states are not active", () => {
    for (const s of ["accepted", "fetched", "processing"] as const) {
      expect(canTransition(s, "failed")).toBe(true);
      expect(isActive(s)).toBe(true);
    }
    for (const s of ["ready", "failed", "expired"] as const) expect(isActive(s)).toBe(false);
  });
  test("resume rules by state (seed 000)", () => {
    expect(resumeStep("accepted")).toBe("download");
    expect(resumeStep("fetched")).toBe("verify");
    expect(resumeStep("processing")).toBe("reprocess");
    expect(poolFor("accepted")).toBe("download");
    expect(poolFor("fetched")).toBe("process");
    expect(poolFor("processing")).toBe("process");
  });
});

describe("lease rules", () => {
  const free = { leaseUntil: null, leaseOwner: null, notBefore: null };
  test("a job never leased is claimable", () => expect(isClaimable(free, T0)).toBe(true));
  test("a live lease blocks, an expired one does not", () => {
    const held = { ...free, leaseOwner: "w1", leaseUntil: leaseDeadline(T0, 60_000) };
    expect(isClaimable(held, T0 + 59_999)).toBe(false);
    expect(isClaimable(held, T0 + 60_000)).toBe(true);
    expect(isLeased(held, T0 + 59_999)).toBe(true);
    expect(isLeased(held, T0 + 60_000)).toBe(false);
    expect(isLeased(free, T0)).toBe(false);
  });
  test("backoff (not_before) blocks until it passes", () => {
    const waiting = { ...free, notBefore: iso(T0 + 2000) };
    expect(isClaimable(waiting, T0 + 1999)).toBe(false);
    expect(isClaimable(waiting, T0 + 2000)).toBe(true);
  });
  test("renewal is due once a third of the TTL has passed", () => {
    expect(renewAt(leaseDeadline(T0, 60_000), 60_000)).toBe(T0 + 20_000);
    expect(renewAt(leaseDeadline(T0, 90), 90)).toBe(T0 + 50); // never a busy loop on tiny TTLs
  });
  test("long-dead leases are those expired by more than the grace", () => {
    const held = { ...free, leaseUntil: iso(T0) };
    expect(isLongDead(held, T0 + 10_000, 10_000)).toBe(false);
    expect(isLongDead(held, T0 + 10_001, 10_000)).toBe(true);
    expect(isLongDead(free, T0 + 1e9, 0)).toBe(false);
  });
});

describe("byte budget (seed 000: budget in bytes, not jobs)", () => {
  const MB = 1 << 20;
  test("declared size × multiplier", () => expect(reservationFor(10 * MB, 2.5, 20 * MB, 1000 * MB)).toBe(25 * MB));
  test("unknown size reserves the mode's download limit × multiplier, as a sized file that large would (issue 11 item 5)", () => {
    expect(reservationFor(null, 2.5, 20 * MB, 1000 * MB)).toBe(50 * MB);
    expect(reservationFor(null, 2.5, 20 * MB, 1000 * MB)).toBe(reservationFor(20 * MB, 2.5, 20 * MB, 1000 * MB));
  });
  test("never more than the whole budget (a huge job can run alone)", () => {
    expect(reservationFor(null, 2, 2000 * MB, 100 * MB)).toBe(100 * MB);
    expect(fits(0, 100 * MB, 100 * MB)).toBe(true);
  });
  test("a reservation that does not fit waits", () => {
    expect(fits(60 * MB, 40 * MB, 100 * MB)).toBe(true);
    expect(fits(60 * MB, 41 * MB, 100 * MB)).toBe(false);
    expect(fits(0, 500 * MB, 100 * MB)).toBe(true);
  });
  test("refined after download from the real size", () => expect(refinedReservation(3 * MB, 2, 1000 * MB)).toBe(6 * MB));
  test("a refinement never raises what the claim reserved, so it always fits (never overbooks)", () => {
    expect(refinedReservation(30 * MB, 2, 1000 * MB, 0, 40 * MB)).toBe(40 * MB);
    // Any download the size checks let through (real = declared, or unsized and ≤ the limit) refines down or equal.
    for (const [declared, real] of [[5 * MB, 5 * MB], [null, 20 * MB], [null, 1], [2048, 2048]] as const) {
      const reserved = reservationFor(declared, 2.5, 20 * MB, 1000 * MB, 8 * MB);
      expect(refinedReservation(real, 2.5, 1000 * MB, 8 * MB, reserved)).toBeLessThanOrEqual(reserved);
      expect(refinedReservation(real, 2.5, 1000 * MB, 8 * MB, reserved)).toBe(Math.max(8 * MB, Math.ceil(real * 2.5)));
    }
  });
  test("a floor for small files (their outputs have a size of their own), still capped by the budget", () => {
    expect(reservationFor(2048, 2.5, 20 * MB, 1000 * MB, 8 * MB)).toBe(8 * MB);
    expect(refinedReservation(2048, 2.5, 1000 * MB, 8 * MB)).toBe(8 * MB);
    expect(reservationFor(10 * MB, 2.5, 20 * MB, 1000 * MB, 8 * MB)).toBe(25 * MB);
    expect(reservationFor(2048, 2.5, 20 * MB, 4 * MB, 8 * MB)).toBe(4 * MB);
  });
});

describe("retry decisions (seed 000: attempts bound retries)", () => {
  const transient = { reason: "download_failed" as const, retryable: true, detail: "HTTP 502" };
  const final = { reason: "encrypted" as const, retryable: false, params: { x: 1 }, detail: "PasswordException" };
  test("retryable with attempts left → retry after backoff", () => {
    expect(decideAfterFailure(transient, 1, 3, T0)).toEqual({ kind: "retry", notBefore: T0 + 1000 });
    expect(decideAfterFailure(transient, 2, 3, T0)).toEqual({ kind: "retry", notBefore: T0 + 2000 });
  });
  test("retryable at the maximum → failed with the reason", () => {
    expect(decideAfterFailure(transient, 3, 3, T0)).toEqual({ kind: "fail", reason: "download_failed", params: {} });
  });
  test("non-retryable fails at once with its params", () => {
    expect(decideAfterFailure(final, 1, 5, T0)).toEqual({ kind: "fail", reason: "encrypted", params: { x: 1 } });
  });
  test("a claim beyond MAX_ATTEMPTS (every earlier try died unclassified) is exhausted; up to it is not", () => {
    expect([1, 2, 3, 4, 10].map((a) => exhaustedAtClaim(a, 3))).toEqual([false, false, false, true, true]);
    expect(exhaustedAtClaim(1, 1)).toBe(false);
  });
  test("backoff doubles and is capped at 60 s", () => {
    expect([1, 2, 3, 4].map(backoffMs)).toEqual([1000, 2000, 4000, 8000]);
    expect(backoffMs(30)).toBe(60_000);
  });
});

describe("retention as the user sees it (seed 000: result_expires_at)", () => {
  const at = (ms: number) => new Date(T0 + ms).toISOString();
  test("a ready result is alive strictly before result_expires_at; past it the user sees expired", () => {
    const ready = { status: "ready" as const, resultExpiresAt: at(1000) };
    expect([isResultAlive(ready, T0 + 999), isResultAlive(ready, T0 + 1000)]).toEqual([true, false]);
    expect([visibleState(ready, T0), visibleState(ready, T0 + 1000)]).toEqual(["ready", "expired"]);
  });
  test("other states show as stored, and only ready can be alive", () => {
    expect(visibleState({ status: "failed", resultExpiresAt: null }, T0)).toBe("failed");
    expect(visibleState({ status: "processing", resultExpiresAt: at(-5) }, T0)).toBe("processing");
    expect(isResultAlive({ status: "expired", resultExpiresAt: at(1000) }, T0)).toBe(false);
    expect(isResultAlive({ status: "ready", resultExpiresAt: null }, T0)).toBe(false);
  });
});
