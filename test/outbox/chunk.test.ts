/** Chunk normalization and content hash (seed 002 "Chunk", "key"). */
import { describe, expect, test } from "vitest";
import { toChunk } from "../../bot/outbox/chunk.ts";

describe("toChunk", () => {
  test("hash covers everything but key; key order inside reply_markup does not matter", () => {
    const kb = { inline_keyboard: [[{ text: "Go", callback_data: "go" }]] };
    const kb2 = { inline_keyboard: [[{ callback_data: "go", text: "Go" }]] };
    expect(toChunk({ text: "a", key: "1" }).hash).toBe(toChunk({ text: "a", key: "2" }).hash);
    expect(toChunk({ text: "a", reply_markup: kb }).hash).toBe(toChunk({ text: "a", reply_markup: kb2 }).hash);
    expect(toChunk({ text: "a", reply_markup: kb }).hash).not.toBe(toChunk("a").hash);
    expect(toChunk({ text: "a", link_preview: { is_disabled: true } }).hash).not.toBe(toChunk("a").hash);
    expect(toChunk({ text: "a", reply_to: 5 }).hash).not.toBe(toChunk("a").hash);
    expect(toChunk({ text: "a", entities: [{ type: "bold", offset: 0, length: 1 }] }).hash).not.toBe(toChunk("a").hash);
    // parse_mode changes what the chat shows ("<b>a</b>" bold vs literal): a switch must be sent
    expect(toChunk({ text: "a", parse_mode: "HTML" }).hash).not.toBe(toChunk("a").hash);
    expect(toChunk({ text: "a", parse_mode: "HTML" }).hash).not.toBe(toChunk({ text: "a", parse_mode: "MarkdownV2" }).hash);
  });

  test("parse_mode drops entities (two exclusive forms of the same thing)", () => {
    const c = toChunk({ text: "<b>a</b>", parse_mode: "HTML", entities: [{ type: "bold", offset: 0, length: 1 }] });
    expect(c.entities).toEqual([]);
    expect(c.parse_mode).toBe("HTML");
    expect(Object.isFrozen(c)).toBe(true);
    expect(() => toChunk({ text: 5 as unknown as string })).toThrow(TypeError);
  });
});
