/** splitText(): property tests with fast-check (docket issue 3, item 9). */
import fc from "fast-check";
import type { MessageEntity } from "grammy/types";
import { describe, expect, test } from "vitest";
import { MESSAGE_LIMIT, splitText, type TextPart } from "../../bot/outbox/split.ts";

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;
const midPair = (t: string, i: number) => i > 0 && i < t.length && isHigh(t.charCodeAt(i - 1)) && isLow(t.charCodeAt(i));

/** Text from pieces that stress every rule: words, spaces, newlines, paragraphs, surrogate pairs. */
const textArb = fc.array(fc.constantFrom("a", "bc", "word", " ", " ", "\n", "\n\n", "😀", "é", "𝒳y"), { maxLength: 120 }).map((xs) => xs.join(""));

/** Entities on code-point boundaries, each tagged with a unique url to follow it across parts. */
function entitiesArb(text: string, disjoint: boolean): fc.Arbitrary<MessageEntity[]> {
  const points: number[] = [];
  for (let i = 0; i <= text.length; i++) if (!midPair(text, i)) points.push(i);
  const idx = fc.integer({ min: 0, max: points.length - 1 });
  return fc.array(fc.tuple(idx, idx), { maxLength: 8 }).map((pairs) => {
    const raw = pairs.map(([a, b]) => [points[Math.min(a, b)]!, points[Math.max(a, b)]!] as const).filter(([a, b]) => b > a);
    let chosen = raw;
    if (disjoint) {
      chosen = [];
      for (const r of [...raw].sort((x, y) => x[0] - y[0])) if (!chosen.some(([a, b]) => r[0] < b && a < r[1])) chosen.push(r);
    }
    return chosen.map(([a, b], i) => ({ type: "text_link" as const, url: `u${i}`, offset: a, length: b - a }));
  });
}

/** Check the structural properties every split must have; returns the pieces of each entity by url. */
function checkParts(text: string, entities: MessageEntity[], limit: number, parts: TextPart[]): Map<string, [number, number][]> {
  expect(parts.length).toBeGreaterThan(0);
  let pos = 0;
  const pieces = new Map<string, [number, number][]>();
  const gaps: [number, number][] = [];
  for (const p of parts) {
    expect(p.text.length).toBeLessThanOrEqual(limit);
    expect(p.offset).toBeGreaterThanOrEqual(pos);
    const gap = text.slice(pos, p.offset);
    expect(gap.trim()).toBe(""); // only dropped separators and dropped blank parts
    if (text.trim() !== "") expect(p.text.trim()).not.toBe(""); // Telegram: "message text is empty"
    gaps.push([pos, p.offset]);
    expect(text.slice(p.offset, p.offset + p.text.length)).toBe(p.text);
    expect(midPair(text, p.offset)).toBe(false);
    expect(midPair(text, p.offset + p.text.length)).toBe(false);
    for (const e of p.entities) {
      expect(e.offset).toBeGreaterThanOrEqual(0);
      expect(e.length).toBeGreaterThan(0);
      expect(e.offset + e.length).toBeLessThanOrEqual(p.text.length);
      const url = (e as { url: string }).url;
      const list = pieces.get(url) ?? [];
      list.push([p.offset + e.offset, p.offset + e.offset + e.length]);
      pieces.set(url, list);
    }
    pos = p.offset + p.text.length;
  }
  expect(text.slice(pos).trim()).toBe(""); // the tail is the last part, or dropped blanks
  gaps.push([pos, text.length]);
  // Every original entity is covered exactly, minus the dropped separator characters.
  const inGap = (i: number) => gaps.some(([a, b]) => i >= a && i < b);
  for (const e of entities) {
    const url = (e as { url: string }).url;
    const want: number[] = [];
    for (let i = e.offset; i < e.offset + e.length; i++) if (!inGap(i)) want.push(i);
    const got: number[] = [];
    for (const [a, b] of pieces.get(url) ?? []) for (let i = a; i < b; i++) got.push(i);
    expect(got).toEqual(want);
  }
  return pieces;
}

describe("splitText", () => {
  test("a text within the limit is one part, unchanged", () => {
    const ents: MessageEntity[] = [{ type: "bold", offset: 0, length: 5 }];
    expect(splitText("hello world", ents)).toEqual([{ text: "hello world", entities: ents, offset: 0 }]);
    expect(splitText("")).toEqual([{ text: "", entities: [], offset: 0 }]);
  });

  test("prefers paragraph, then line, then word boundaries", () => {
    expect(splitText("aaaa\n\nbb\ncc dd", [], 10).map((p) => p.text)).toEqual(["aaaa", "bb\ncc dd"]);
    expect(splitText("aaaa\nbbbb cc", [], 10).map((p) => p.text)).toEqual(["aaaa", "bbbb cc"]);
    expect(splitText("aaaa bbbbbbb", [], 10).map((p) => p.text)).toEqual(["aaaa", "bbbbbbb"]);
    expect(splitText("abcdefghijkl", [], 10).map((p) => p.text)).toEqual(["abcdefghij", "kl"]);
  });

  test("no blank part: a cut at a trailing separator or inside a run of spaces is dropped", () => {
    const long = "x".repeat(MESSAGE_LIMIT);
    expect(splitText(long + "\n").map((p) => p.text)).toEqual([long]);
    expect(splitText(long + "\n\n \n").map((p) => p.text)).toEqual([long]);
    expect(splitText("a" + " ".repeat(10) + "b", [], 3).map((p) => [p.text, p.offset])).toEqual([
      ["a  ", 0],
      ["b", 11],
    ]);
    // a blank text stays one (blank) part: the caller sent it
    expect(splitText(" ".repeat(7), [], 3).map((p) => p.text)).toEqual(["   "]);
  });

  test("never inside a surrogate pair, even on a hard cut", () => {
    const t = "a" + "😀".repeat(10); // 21 code units
    const parts = splitText(t, [], 4);
    expect(parts.map((p) => p.text)).toEqual(["a😀", "😀😀", "😀😀", "😀😀", "😀😀", "😀"]);
  });

  test("never inside an entity when a cut outside exists; an entity longer than the limit is split in two", () => {
    const t = "intro " + "x".repeat(8) + " tail";
    const bold: MessageEntity = { type: "bold", offset: 6, length: 8 };
    expect(splitText(t, [bold], 12).map((p) => [p.text, p.entities])).toEqual([
      ["intro", []],
      ["xxxxxxxx", [{ type: "bold", offset: 0, length: 8 }]],
      ["tail", []],
    ]);
    const pre: MessageEntity = { type: "pre", offset: 0, length: 15, language: "ts" };
    expect(splitText("line one\nline two", [pre], 10).map((p) => p.entities)).toEqual([
      [{ type: "pre", offset: 0, length: 8, language: "ts" }],
      [{ type: "pre", offset: 0, length: 6, language: "ts" }],
    ]);
  });

  test("a real-size text: 10 000 units of paragraphs with entities fit in ≤ 4096-unit parts", () => {
    const para = "Lorem ipsum dolor sit amet, 😀 consectetur adipiscing elit. ".repeat(6);
    const text = Array.from({ length: 28 }, () => para).join("\n\n");
    const ents: MessageEntity[] = [];
    for (let i = 0; i < 28; i++) ents.push({ type: "italic", offset: i * (para.length + 2), length: 11 });
    const parts = splitText(text, ents.map((e, i) => ({ ...e, type: "text_link", url: `u${i}` })));
    expect(parts.length).toBe(3);
    for (const p of parts) expect(p.text.length).toBeLessThanOrEqual(MESSAGE_LIMIT);
    expect(parts.every((p) => !p.text.startsWith("\n") && !p.text.endsWith("\n\n"))).toBe(true);
    expect(parts.flatMap((p) => p.entities)).toHaveLength(28);
  });

  test("property: parts ≤ limit, contiguous but for dropped separators, no split pair, entities re-based exactly", () => {
    fc.assert(
      fc.property(
        textArb.chain((t) => fc.tuple(fc.constant(t), entitiesArb(t, false), fc.integer({ min: 2, max: 40 }))),
        ([text, entities, limit]) => {
          checkParts(text, entities, limit, splitText(text, entities, limit));
        },
      ),
      { numRuns: 400 },
    );
  });

  test("property: disjoint entities no longer than the limit are never split", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 40 }).chain((limit) =>
          textArb.chain((t) => fc.tuple(fc.constant(t), entitiesArb(t, true).map((es) => es.filter((e) => e.length <= limit)), fc.constant(limit))),
        ),
        ([text, entities, limit]) => {
          const pieces = checkParts(text, entities, limit, splitText(text, entities, limit));
          for (const [, list] of pieces) expect(list).toHaveLength(1);
        },
      ),
      { numRuns: 400 },
    );
  });
});
