/**
 * splitText(): cut a long text into message-sized parts.
 *
 * Rules (docket issue 3, item 9; Bot API: message text is 1–4096 characters after entity parsing,
 * counted in UTF-16 code units like JS string length and MessageEntity offsets):
 * - each part is ≤ `limit` UTF-16 code units;
 * - cut at the last paragraph break ("\n\n") in the window, else the last line break, else the
 *   last space, else anywhere; the separator itself is dropped (a run of newlines for paragraphs);
 * - never between the two halves of a surrogate pair;
 * - never inside an entity — unless no such point exists in the window, which only happens when
 *   an entity (or overlapping entities) alone exceeds the limit: then entities longer than the
 *   limit are ignored for the cut and split in two (first still respecting shorter entities, then
 *   ignoring all). A split entity appears in both parts with the same type and fields;
 * - entity offsets are re-based to each part;
 * - no part is blank (empty or whitespace only) unless the whole text is: Telegram trims a message
 *   text and answers 400 "message text is empty" for a blank one, so a cut at a trailing
 *   separator or inside a run of spaces must not leave such a part (audit-002 MEDIUM 2). Blank
 *   parts are dropped, like the separators around them.
 */
import type { MessageEntity } from "grammy/types";

/** Bot API message text limit in UTF-16 code units. */
export const MESSAGE_LIMIT = 4096;

/** One part: its text, its re-based entities, and where it started in the original text. */
export interface TextPart {
  readonly text: string;
  readonly entities: MessageEntity[];
  /** Offset of this part in the original text, UTF-16 code units. */
  readonly offset: number;
}

function isHigh(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
function isLow(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** A cut: the part ends at `at`, the next part starts at `next` (≥ at; the gap is the dropped separator). */
interface Cut {
  at: number;
  next: number;
}

/**
 * Split `text` (with its `entities`) into parts of at most `limit` UTF-16 code units, none of
 * them blank when `text` is not blank. Always returns at least one part (an empty or blank text
 * gives its first part, which is blank).
 * @throws RangeError when limit < 2 (a surrogate pair must fit).
 */
export function splitText(text: string, entities: readonly MessageEntity[] = [], limit = MESSAGE_LIMIT): TextPart[] {
  if (!(limit >= 2)) throw new RangeError("splitText limit must be ≥ 2");
  const parts: TextPart[] = [];
  let s = 0;
  while (text.length - s > limit) {
    const cut = findCut(text, entities, s, s + limit, limit);
    parts.push(slice(text, entities, s, cut.at));
    s = cut.next;
  }
  parts.push(slice(text, entities, s, text.length));
  const filled = parts.filter((p) => p.text.trim() !== "");
  return filled.length > 0 ? filled : parts.slice(0, 1);
}

function slice(text: string, entities: readonly MessageEntity[], a: number, b: number): TextPart {
  const out: MessageEntity[] = [];
  for (const e of entities) {
    const st = Math.max(e.offset, a);
    const en = Math.min(e.offset + e.length, b);
    if (en > st) out.push({ ...e, offset: st - a, length: en - st });
  }
  return { text: text.slice(a, b), entities: out, offset: a };
}

/** Find the best cut in (s, e]; see the file header for the order of preference. */
function findCut(text: string, all: readonly MessageEntity[], s: number, e: number, limit: number): Cut {
  const inWindow = all.filter((x) => x.offset < e && x.offset + x.length > s);
  const short = inWindow.filter((x) => x.length <= limit);
  for (const guard of [inWindow, short, []]) {
    const cut = bestCut(text, guard, s, e);
    if (cut) return cut;
  }
  // Unreachable: with no guard a hard cut at e or e-1 always exists (limit ≥ 2).
  return { at: e, next: e };
}

function bestCut(text: string, guard: readonly MessageEntity[], s: number, e: number): Cut | null {
  /** Start of the outermost guarding entity strictly containing c, or -1. */
  const enclosingStart = (c: number): number => {
    let start = -1;
    for (const x of guard) if (x.offset < c && c < x.offset + x.length && (start === -1 || x.offset < start)) start = x.offset;
    return start;
  };
  const bySeparator = (sep: string, skipRun: boolean): Cut | null => {
    for (let c = text.lastIndexOf(sep, e); c > s; c = text.lastIndexOf(sep, c - 1)) {
      if (enclosingStart(c) !== -1) continue;
      let next = c + sep.length;
      if (skipRun) while (text[next] === "\n") next++;
      return { at: c, next };
    }
    return null;
  };
  const cut = bySeparator("\n\n", true) ?? bySeparator("\n", false) ?? bySeparator(" ", false);
  if (cut) return cut;
  for (let c = e; c > s; ) {
    const st = enclosingStart(c);
    if (st !== -1) {
      c = st;
      continue;
    }
    if (isHigh(text.charCodeAt(c - 1)) && isLow(text.charCodeAt(c))) {
      c--;
      continue;
    }
    return { at: c, next: c };
  }
  return null;
}
