/** The pure intake decision (bot/jobs/intake-rules.ts) and the reply sender's failure rules (bot/intake/replies.ts). */
import { GrammyError, HttpError } from "grammy";
import { describe, expect, test } from "vitest";
import type { FileJob } from "../../bot/db/schema.ts";
import { decideExisting, decideNew, replyKindOf, validDeclaredSize, type IntakeDecision } from "../../bot/jobs/intake-rules.ts";
import { isFinalReplyFailure, ReplyNotDelivered, replyBackoffMs } from "../../bot/intake/replies.ts";
import { StreamFailedError } from "../../bot/outbox/index.ts";

const T0 = Date.parse("2026-11-30T10:00:00.000Z");
const job = (over: Partial<FileJob>): FileJob => ({ updateId: 1, status: "accepted", reason: null, resultExpiresAt: null, ...over }) as FileJob;
const input = { updateId: 2, tooBig: false, edited: false };

describe("decideExisting (seed 000: one file, two deliveries)", () => {
  test.each<[string, Partial<FileJob>, Partial<typeof input>, IntakeDecision]>([
    ["same update", { updateId: 2 }, {}, { kind: "redelivered" }],
    ["same update beats an edit", { updateId: 2 }, { edited: true }, { kind: "redelivered" }],
    ["edit that kept the file", {}, { edited: true }, { kind: "edit_kept_file" }],
    ["running job", { status: "processing" }, {}, { kind: "duplicate" }],
    ["running job, now too big", { status: "fetched" }, { tooBig: true }, { kind: "duplicate" }],
    ["live result", { status: "ready", resultExpiresAt: "2026-11-30T11:00:00.000Z" }, {}, { kind: "resend" }],
    ["live result, now too big: the result is still there", { status: "ready", resultExpiresAt: "2026-11-30T11:00:00.000Z" }, { tooBig: true }, { kind: "resend" }],
    ["result past its TTL", { status: "ready", resultExpiresAt: "2026-11-30T10:00:00.000Z" }, {}, { kind: "rearm", from: "expired", expireFirst: true }],
    ["result past its TTL, too big", { status: "ready", resultExpiresAt: "2026-11-30T09:00:00.000Z" }, { tooBig: true }, { kind: "too_big_again", expireFirst: true }],
    ["expired", { status: "expired" }, {}, { kind: "rearm", from: "expired", expireFirst: false }],
    ["failed, fixable", { status: "failed", reason: "download_failed" }, {}, { kind: "rearm", from: "failed", expireFirst: false }],
    ["failed too_big, still too big: told why", { status: "failed", reason: "too_big" }, { tooBig: true }, { kind: "too_big_again", expireFirst: false }],
    ["failed too_big, fits now (mode switch)", { status: "failed", reason: "too_big" }, {}, { kind: "rearm", from: "failed", expireFirst: false }],
    ["failed for good", { status: "failed", reason: "not_pdf" }, {}, { kind: "duplicate" }],
    ["failed, unknown reason", { status: "failed", reason: "something" }, {}, { kind: "duplicate" }],
  ])("%s", (_name, row, over, expected) => {
    expect(decideExisting(job(row), { ...input, ...over }, T0)).toEqual(expected);
  });
});

describe("decideNew: the size limit before the quota (issue 11 item 5)", () => {
  const limits = { maxInFlight: 2, maxBytesPerDay: 1000 };
  test("too big: decided without reading the quota at all", () => {
    expect(decideNew({ tooBig: true }, () => expect.unreachable("quota read"), limits)).toEqual({ kind: "too_big" });
  });
  test("in flight first, then bytes; under both: accept", () => {
    expect(decideNew({ tooBig: false }, () => ({ inFlight: 2, bytesToday: 5000 }), limits)).toEqual({ kind: "limit", limit: "in_flight", count: 2 });
    expect(decideNew({ tooBig: false }, () => ({ inFlight: 1, bytesToday: 1000 }), limits)).toEqual({ kind: "limit", limit: "bytes_per_day", used: 1000 });
    expect(decideNew({ tooBig: false }, () => ({ inFlight: 1, bytesToday: 999 }), limits)).toEqual({ kind: "accept" });
  });
  test("reply kinds: none for a redelivered update or a kept file", () => {
    expect(replyKindOf({ kind: "redelivered" })).toBeNull();
    expect(replyKindOf({ kind: "edit_kept_file" })).toBeNull();
    expect(replyKindOf({ kind: "rearm", from: "failed", expireFirst: false })).toBe("accepted");
    expect(replyKindOf({ kind: "too_big_again", expireFirst: false })).toBe("too_big_again");
  });
});

test("validDeclaredSize: non-negative safe integers only (issue 11 item 6)", () => {
  expect([0, 1, 20 << 20, Number.MAX_SAFE_INTEGER].map(validDeclaredSize)).toEqual([0, 1, 20 << 20, Number.MAX_SAFE_INTEGER]);
  expect([-1, -10_000_000, 1.5, Number.MAX_SAFE_INTEGER + 1, Number.NaN, Infinity, "5", null, undefined].map(validDeclaredSize)).toEqual(Array(9).fill(null));
});

describe("reply failures (bot/intake/replies.ts)", () => {
  const apiError = (code: number, description: string) => new GrammyError(`Call to 'sendMessage' failed! (${code}: ${description})`, { ok: false, error_code: code, description }, "sendMessage", {});
  test("final: 403 and 400 (also as the cause of the outbox's StreamFailedError), a final ReplyNotDelivered", () => {
    expect(isFinalReplyFailure(apiError(403, "Forbidden: bot was blocked by the user"))).toBe(true);
    expect(isFinalReplyFailure(apiError(400, "Bad Request: chat not found"))).toBe(true);
    const dead = new StreamFailedError(1, 5, { status: "failed", messageIds: [], reason: "Forbidden: bot was blocked by the user", error: apiError(403, "Forbidden: bot was blocked by the user") });
    expect(isFinalReplyFailure(dead)).toBe(true);
    expect(isFinalReplyFailure(new ReplyNotDelivered("no message", true))).toBe(true);
  });
  test("not final: 429, 5xx, network, a cancelled stream, a non-final ReplyNotDelivered", () => {
    expect(isFinalReplyFailure(apiError(429, "Too Many Requests: retry after 5"))).toBe(false);
    expect(isFinalReplyFailure(apiError(502, "Bad Gateway"))).toBe(false);
    expect(isFinalReplyFailure(new HttpError("Network request for 'sendMessage' failed!", new Error("ECONNRESET")))).toBe(false);
    expect(isFinalReplyFailure(new StreamFailedError(1, 5, { status: "failed", messageIds: [], reason: "worker cancelled" }))).toBe(false);
    expect(isFinalReplyFailure(new ReplyNotDelivered("later", false))).toBe(false);
  });
  test("backoff: 30 s doubling, capped at 10 min", () => {
    expect([1, 2, 3, 5, 6, 20].map(replyBackoffMs)).toEqual([30_000, 60_000, 120_000, 480_000, 600_000, 600_000]);
  });
});
