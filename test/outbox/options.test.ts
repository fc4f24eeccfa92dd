/** Options: seed 002 defaults in ms, frozen, validated. */
import { describe, expect, test } from "vitest";
import { DEFAULT_OPTIONS, makeOptions } from "../../bot/outbox/options.ts";

describe("Options", () => {
  test("defaults are the seed's, in milliseconds, and the result is frozen", () => {
    const o = makeOptions();
    expect([o.sendIntervalMs, o.editIntervalMs, o.deleteIntervalMs, o.actionIntervalMs]).toEqual([1000, 1000, 1000, 5000]);
    expect([o.backoffBaseMs, o.backoffMaxMs, o.backoffJitter, o.maxAttempts]).toEqual([1000, 30_000, 0.2, 5]);
    expect([o.streamTtlMs, o.machineTtlMs, o.typingEnabled, o.raiseOnFailure, o.timingsCapacity]).toEqual([5000, 30_000, true, true, 1024]);
    expect(Object.isFrozen(o)).toBe(true);
    expect(Object.isFrozen(DEFAULT_OPTIONS)).toBe(true);
    expect(makeOptions({ editIntervalMs: 250 }).editIntervalMs).toBe(250);
  });

  test("rejects negative, non-finite or meaningless values", () => {
    expect(() => makeOptions({ sendIntervalMs: -1 })).toThrow(RangeError);
    expect(() => makeOptions({ backoffMaxMs: Number.NaN })).toThrow(RangeError);
    expect(() => makeOptions({ maxAttempts: 0 })).toThrow(RangeError);
    expect(() => makeOptions({ backoffJitter: 1 })).toThrow(RangeError);
  });
});
