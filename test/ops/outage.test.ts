/**
 * bot/ops/outage.ts, the pure core of "the Bot API does not answer" (issue 9 item 2), with a fake
 * clock: which failures are retried and which end start-up (401/404, CONTRACTS.md §3), the capped
 * backoff, and the journal rule — one line per kind, a reminder while it lasts, a fresh outage after
 * a success.
 */
import { GrammyError, HttpError } from "grammy";
import { describe, expect, test } from "vitest";
import { backoffMs, classifyAttempt, NotBotApiAnswer, OutageTracker, type RetryableFailure } from "../../bot/ops/outage.ts";

const apiError = (error_code: number, description: string, retry_after?: number) =>
  new GrammyError("Call to 'getMe' failed!", { ok: false, error_code, description, ...(retry_after ? { parameters: { retry_after } } : {}) }, "getMe", {});
const netError = (code: string, message: string) => new HttpError("Network request for 'getMe' failed!", Object.assign(new TypeError(message), { code }));

describe("classifyAttempt", () => {
  test.each([
    ["refused", netError("ECONNREFUSED", "ECONNREFUSED: Unable to connect. Is the computer able to access the url?"), "ECONNREFUSED: Unable to connect. Is the computer able to access the url?"],
    ["dns", netError("ENOTFOUND", "getaddrinfo ENOTFOUND api.telegram.org"), "ENOTFOUND: getaddrinfo ENOTFOUND api.telegram.org"],
    ["dns", netError("EAI_AGAIN", "getaddrinfo EAI_AGAIN api.telegram.org"), "EAI_AGAIN: getaddrinfo EAI_AGAIN api.telegram.org"],
    ["network", netError("ECONNRESET", "ECONNRESET: The socket connection was closed unexpectedly"), "ECONNRESET: The socket connection was closed unexpectedly"],
    ["timeout", new HttpError("x", new DOMException("The operation timed out.", "TimeoutError")), "no answer within 10 s"],
    ["http", new HttpError("x", new NotBotApiAnswer(502, "Bad Gateway")), "HTTP 502 Bad Gateway with a non-JSON body (not a Bot API answer: a proxy or another server)"],
    ["api", apiError(500, "Internal Server Error: restart"), "HTTP 500 Internal Server Error: restart"],
    ["api", apiError(400, "Logged out"), "HTTP 400 Logged out"],
  ])("%s: %s", (kind, err, cause) => {
    expect(classifyAttempt(err, 10_000)).toEqual({ retry: true, kind, cause });
  });

  test("a 429 is retried no sooner than its retry_after", () => {
    expect(classifyAttempt(apiError(429, "Too Many Requests: retry after 7", 7), 10_000)).toEqual({ retry: true, kind: "api", cause: "HTTP 429 Too Many Requests: retry after 7", retryAfterMs: 7000 });
  });

  test("401 and 404 end start-up: a restart cannot fix them", () => {
    expect(classifyAttempt(apiError(401, "Unauthorized"), 10_000)).toEqual({ retry: false, errorCode: 401, description: "Unauthorized" });
    expect(classifyAttempt(apiError(404, "Not Found"), 10_000)).toEqual({ retry: false, errorCode: 404, description: "Not Found" });
  });
});

describe("backoffMs", () => {
  test("doubles from 1 s up to the cap; jitter takes off at most half", () => {
    const cap = { capMs: 30_000 };
    expect([1, 2, 3, 4, 5, 6, 7, 40].map((a) => backoffMs(a, cap, 0))).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000]);
    expect(backoffMs(3, cap, 0.999_999)).toBe(2000);
    expect(backoffMs(1, cap, 0.5)).toBe(750);
  });

  test("never below a 429's retry_after, even above the cap", () => {
    expect(backoffMs(1, { capMs: 5000 }, 0, 60_000)).toBe(60_000);
  });
});

describe("OutageTracker", () => {
  const refused: RetryableFailure = { retry: true, kind: "refused", cause: "ECONNREFUSED: Unable to connect" };
  const timeout: RetryableFailure = { retry: true, kind: "timeout", cause: "no answer within 10 s" };

  test("one line per kind, a reminder every 10 min while it lasts, quiet in between", () => {
    const t = new OutageTracker(600_000);
    const at = (min: number) => Date.parse("2026-11-30T10:00:00Z") + min * 60_000;
    const seen = [
      t.failed(refused, at(0)),
      t.failed(refused, at(1)),
      t.failed(refused, at(5)),
      t.failed(timeout, at(6)),
      t.failed(timeout, at(15)),
      t.failed(timeout, at(16)),
      t.failed(refused, at(17)),
      t.failed(refused, at(28)),
    ];
    expect(seen).toEqual(["new-kind", "quiet", "quiet", "new-kind", "quiet", "reminder", "new-kind", "reminder"]);
    expect([t.attempts, t.since, t.last]).toEqual([8, at(0), refused]);
  });

  test("a success ends the outage (attempts and length) and the next failure is a new one", () => {
    const t = new OutageTracker();
    expect(t.succeeded(1000)).toBeNull();
    t.failed(refused, 1000);
    t.failed(refused, 3000);
    expect(t.succeeded(4500)).toEqual({ attempts: 2, ms: 3500 });
    expect([t.attempts, t.since, t.last]).toEqual([0, null, null]);
    expect(t.failed(refused, 9000)).toBe("new-kind");
  });
});
