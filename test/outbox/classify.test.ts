/** classify(): grammY errors → machine results (seed 002 "classify"; strings from botapi-facts §3). */
import { GrammyError, HttpError } from "grammy";
import { describe, expect, test } from "vitest";
import type { Action } from "../../bot/outbox/action.ts";
import { classify } from "../../bot/outbox/classify.ts";
import { toChunk } from "../../bot/outbox/chunk.ts";

function gerr(error_code: number, description: string, retry_after?: number): GrammyError {
  return new GrammyError(`Call failed (${error_code}: ${description})`, { ok: false, error_code, description, ...(retry_after ? { parameters: { retry_after } } : {}) }, "editMessageText", {});
}
const edit: Action = { kind: "edit", type: "edit", streamId: 1, index: 0, chunk: toChunk("x"), messageId: 5, draftId: null, threadId: undefined };
const del: Action = { ...edit, kind: "delete", type: "delete", chunk: null };

describe("classify", () => {
  test("classified by shape, not instanceof: a Bot API error from another grammY copy is not 'transient'", () => {
    /** What a second copy of grammY (or a wrapper) throws: same fields, a different class. */
    class OtherGrammyError extends Error {
      constructor(
        readonly error_code: number,
        readonly description: string,
        readonly parameters: { retry_after?: number } = {},
      ) {
        super(`Call failed (${error_code}: ${description})`);
      }
    }
    expect(classify(new OtherGrammyError(403, "Forbidden: bot was blocked by the user"), edit)).toMatchObject({ kind: "stream_dead" });
    expect(classify(new OtherGrammyError(400, "Bad Request: message to edit not found"), edit)).toMatchObject({ kind: "message_dead" });
    expect(classify(new OtherGrammyError(400, "Bad Request: message is not modified"), edit)).toEqual({ ok: true });
    expect(classify(new OtherGrammyError(400, "Bad Request: message to delete not found"), del)).toEqual({ ok: true });
    expect(classify(new OtherGrammyError(429, "Too Many Requests: retry after 3", { retry_after: 3 }), edit)).toMatchObject({ kind: "transient", retryAfterMs: 3000 });
    // no Bot API fields: a network failure stays transient
    expect(classify(Object.assign(new Error("socket hang up"), { error_code: "ECONNRESET" }), edit)).toMatchObject({ kind: "transient", reason: "Error: socket hang up" });
  });

  test("429 → transient with retry_after in ms, and the error object kept", () => {
    const e = gerr(429, "Too Many Requests: retry after 5", 5);
    expect(classify(e, edit)).toEqual({ ok: false, kind: "transient", reason: "Too Many Requests: retry after 5", error: e, retryAfterMs: 5000 });
  });

  test.each([
    [403, "Forbidden: bot was blocked by the user"],
    [403, "Forbidden: user is deactivated"],
    [400, "Bad Request: chat not found"],
    [400, "Bad Request: TOPIC_CLOSED"],
    [400, "Bad Request: not enough rights to send text messages to the chat"],
  ])("stream dead: %i %s (checked before the generic bad request)", (code, d) => {
    expect(classify(gerr(code, d), edit)).toMatchObject({ ok: false, kind: "stream_dead", reason: d });
  });

  test.each([
    "Bad Request: message to edit not found",
    "Bad Request: message is too long",
    "Bad Request: can't parse entities: Can't find end of the entity starting at byte offset 894",
    "Bad Request: BUTTON_DATA_INVALID",
  ])("message dead: %s", (d) => {
    expect(classify(gerr(400, d), edit)).toMatchObject({ ok: false, kind: "message_dead" });
  });

  test('"message is not modified" is success; "message to delete not found" is success for a delete', () => {
    expect(classify(gerr(400, "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message"), edit)).toEqual({ ok: true });
    expect(classify(gerr(400, "Bad Request: message to delete not found"), del)).toEqual({ ok: true });
    expect(classify(gerr(400, "Bad Request: message to delete not found"), edit)).toMatchObject({ ok: false, kind: "transient" });
  });

  test("anything else is transient: HttpError, 5xx, unknown 400", () => {
    const h = new HttpError("Network request for 'sendMessage' failed!", new Error("ECONNRESET"));
    expect(classify(h, edit)).toMatchObject({ ok: false, kind: "transient", error: h });
    expect(classify(gerr(500, "Internal Server Error: restart"), edit)).toMatchObject({ kind: "transient" });
    expect(classify(gerr(400, "Bad Request: something new"), edit)).toMatchObject({ kind: "transient" });
    expect(classify(new TypeError("boom"), edit)).toMatchObject({ kind: "transient", reason: "TypeError: boom" });
  });
});
