/** The pure decision after one try of a final status message (bot/status/final-rules.ts), on a fake clock. */
import { GrammyError } from "grammy";
import { describe, expect, test } from "vitest";
import { decideFinal, FINAL_MAX_TRIES } from "../../bot/status/final-rules.ts";

const T = 1_000_000;
const apiError = (code: number, description: string) => new GrammyError(description, { ok: false, error_code: code, description }, "editMessageText", {});

describe("decideFinal", () => {
  test("shown → done; shutdown → leave the record for the next start", () => {
    expect(decideFinal({ status: "ok" }, 0, T)).toEqual({ kind: "done" });
    expect(decideFinal({ status: "ok" }, 4, T)).toEqual({ kind: "done" });
    expect(decideFinal({ status: "closed" }, 0, T)).toEqual({ kind: "leave" });
  });

  test("the message or the chat is gone → give up at once, whatever the tries", () => {
    expect(decideFinal({ status: "partial" }, 0, T).kind).toBe("give_up");
    const blocked = decideFinal({ status: "failed", reason: "Forbidden: bot was blocked by the user", error: apiError(403, "Forbidden: bot was blocked by the user") }, 0, T);
    expect(blocked).toEqual({ kind: "give_up", why: "the chat cannot take it: Forbidden: bot was blocked by the user" });
    expect(decideFinal({ status: "failed", reason: "Bad Request: chat not found", error: apiError(400, "Bad Request: chat not found") }, 1, T).kind).toBe("give_up");
  });

  test("a transient failure retries after 30 s doubling (the reply backoff), then gives up after FINAL_MAX_TRIES", () => {
    const transient = { status: "failed" as const, reason: "Internal Server Error", error: apiError(500, "Internal Server Error") };
    expect(decideFinal(transient, 0, T)).toEqual({ kind: "retry", at: T + 30_000 });
    expect(decideFinal(transient, 1, T)).toEqual({ kind: "retry", at: T + 60_000 });
    expect(decideFinal(transient, 3, T)).toEqual({ kind: "retry", at: T + 240_000 });
    expect(decideFinal(transient, FINAL_MAX_TRIES - 1, T)).toEqual({ kind: "give_up", why: `${FINAL_MAX_TRIES} tries failed, the last: Internal Server Error` });
    // A network error has no Bot API code: transient.
    expect(decideFinal({ status: "failed", reason: "worker crashed", error: new Error("ECONNRESET") }, 0, T)).toEqual({ kind: "retry", at: T + 30_000 });
  });
});
