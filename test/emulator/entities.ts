/**
 * Formatted-text parsing like TDLib (`parse_html`, `parse_markdown_v2`, `parse_markdown`): enough to return
 * the plain text + MessageEntity list and to reject malformed markup with TDLib's error details
 * ("Bad Request: can't parse entities: <detail>", botapi-facts.md §3). Offsets in errors are UTF-8 byte
 * offsets; entity offsets/lengths are UTF-16 code units (Bot API MessageEntity).
 * Not emulated: automatic url/mention/hashtag detection.
 */
import { ApiError, badRequest, E } from "./api-error.ts";

/** Bot API MessageEntity (subset of fields the emulator produces). */
export interface Entity {
  type: string;
  offset: number;
  length: number;
  url?: string;
  language?: string;
  custom_emoji_id?: string;
}

/** Parsed text: plain text and its entities (sorted by offset). */
export interface FormattedText {
  text: string;
  entities: Entity[];
}

/** Max message text length after entity parsing, UTF-16 units (Bot API sendMessage). */
export const MAX_TEXT_LENGTH = 4096;
/** Max caption length after entity parsing (Bot API sendDocument). */
export const MAX_CAPTION_LENGTH = 1024;
/** Max raw text size in bytes before parsing (TBA `get_formatted_text`: "text is too long"). */
const MAX_RAW_TEXT_BYTES = 32768;

function parseError(detail: string): ApiError {
  return badRequest(`can't parse entities: ${detail}`);
}

const enc = new TextEncoder();
function byteOffset(s: string, i: number): number {
  return enc.encode(s.slice(0, i)).byteLength;
}

const HTML_TAGS = new Set([
  "a", "b", "strong", "i", "em", "s", "strike", "del", "u", "ins", "tg-spoiler", "tg-emoji", "span", "pre", "code",
  "blockquote",
]);
const HTML_TYPE: Record<string, string> = {
  b: "bold", strong: "bold", i: "italic", em: "italic", s: "strikethrough", strike: "strikethrough",
  del: "strikethrough", u: "underline", ins: "underline", "tg-spoiler": "spoiler", span: "spoiler",
  "tg-emoji": "custom_emoji", pre: "pre", code: "code", a: "text_link", blockquote: "blockquote",
};
const NAMED_ENTITIES: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"' };

function isSpace(c: string | undefined): boolean {
  return c === " " || c === "\t" || c === "\r" || c === "\n";
}

/** TDLib `parse_html`. @throws ApiError 400 "can't parse entities: …". */
export function parseHtml(src: string): FormattedText {
  let out = "";
  const entities: Entity[] = [];
  const stack: Array<{ tag: string; offset: number; attrs: Record<string, string> }> = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (c === "&") {
      const m = /^&(?:#(\d{1,7})|#x([0-9a-fA-F]{1,6})|([a-zA-Z]+));/.exec(src.slice(i, i + 12));
      const named = m?.[3] !== undefined ? NAMED_ENTITIES[m[3]] : undefined;
      const code = m?.[1] !== undefined ? Number(m[1]) : m?.[2] !== undefined ? parseInt(m[2], 16) : undefined;
      if (m && (named !== undefined || (code !== undefined && code > 0 && code <= 0x10ffff))) {
        out += named ?? String.fromCodePoint(code!);
        i += m[0].length;
        continue;
      }
    }
    if (c !== "<") {
      out += c;
      i++;
      continue;
    }
    const begin = i++;
    if (src[i] !== "/") {
      while (i < src.length && !isSpace(src[i]) && src[i] !== ">") i++;
      if (i >= src.length) throw parseError(`Unclosed start tag at byte offset ${byteOffset(src, begin)}`);
      const tag = src.slice(begin + 1, i).toLowerCase();
      if (!HTML_TAGS.has(tag)) {
        throw parseError(`Unsupported start tag "${tag}" at byte offset ${byteOffset(src, begin)}`);
      }
      const attrs: Record<string, string> = {};
      while (src[i] !== ">") {
        while (i < src.length && isSpace(src[i])) i++;
        if (src[i] === ">") break;
        if (i >= src.length) throw parseError(`Unclosed start tag at byte offset ${byteOffset(src, begin)}`);
        const nameBegin = i;
        while (i < src.length && !isSpace(src[i]) && src[i] !== "=" && src[i] !== ">") i++;
        const name = src.slice(nameBegin, i).toLowerCase();
        if (name === "") {
          throw parseError(`Empty attribute name in the tag "${tag}" at byte offset ${byteOffset(src, begin)}`);
        }
        while (i < src.length && isSpace(src[i])) i++;
        if (src[i] !== "=") {
          if (tag === "blockquote" && name === "expandable") {
            attrs[name] = "";
            continue;
          }
          throw parseError(
            `Expected equal sign in declaration of an attribute of the tag "${tag}" at byte offset ${byteOffset(src, begin)}`,
          );
        }
        i++;
        while (i < src.length && isSpace(src[i])) i++;
        if (i >= src.length) throw parseError(`Unclosed start tag "${tag}" at byte offset ${byteOffset(src, begin)}`);
        let value = "";
        const q = src[i];
        if (q === '"' || q === "'") {
          const end = src.indexOf(q, i + 1);
          if (end < 0) throw parseError(`Unclosed start tag at byte offset ${byteOffset(src, begin)}`);
          value = src.slice(i + 1, end);
          i = end + 1;
        } else {
          const vb = i;
          while (i < src.length && /[A-Za-z0-9.\-]/.test(src[i]!)) i++;
          value = src.slice(vb, i);
        }
        attrs[name] = value.replace(/&(lt|gt|amp|quot);/g, (_, n: string) => NAMED_ENTITIES[n]!);
      }
      i++;
      if (tag === "span" && attrs.class !== "tg-spoiler") {
        throw parseError(`Tag "span" must have class "tg-spoiler" at byte offset ${byteOffset(src, begin)}`);
      }
      stack.push({ tag, offset: out.length, attrs });
    } else {
      if (stack.length === 0) throw parseError(`Unexpected end tag at byte offset ${byteOffset(src, begin)}`);
      i++;
      while (i < src.length && !isSpace(src[i]) && src[i] !== ">") i++;
      const endTag = src.slice(begin + 2, i).toLowerCase();
      while (i < src.length && isSpace(src[i])) i++;
      if (src[i] !== ">") throw parseError(`Unclosed end tag at byte offset ${byteOffset(src, begin)}`);
      i++;
      const open = stack.pop()!;
      if (endTag !== "" && endTag !== open.tag) {
        throw parseError(
          `Unmatched end tag at byte offset ${byteOffset(src, begin)}, expected "</${open.tag}>", found "</${endTag}>"`,
        );
      }
      const length = out.length - open.offset;
      if (length > 0) {
        const e: Entity = { type: HTML_TYPE[open.tag]!, offset: open.offset, length };
        if (open.tag === "a") {
          if (open.attrs.href === undefined || open.attrs.href === "") continue;
          e.url = open.attrs.href;
        }
        if (open.tag === "blockquote" && "expandable" in open.attrs) e.type = "expandable_blockquote";
        if (open.tag === "tg-emoji") e.custom_emoji_id = open.attrs["emoji-id"] ?? "";
        if (open.tag === "pre" || open.tag === "code") {
          // <pre><code class="language-x"> → one pre entity with language.
          const lang = /^language-(.+)$/.exec(open.attrs.class ?? "")?.[1];
          const outer = stack.at(-1);
          if (open.tag === "code" && lang && outer?.tag === "pre" && outer.offset === open.offset) {
            outer.attrs["data-language"] = lang;
            continue;
          }
          if (open.tag === "pre" && open.attrs["data-language"]) e.language = open.attrs["data-language"];
        }
        entities.push(e);
      }
    }
  }
  if (stack.length > 0) throw parseError(`Can't find end tag corresponding to start tag "${stack.at(-1)!.tag}"`);
  return { text: out, entities: sortEntities(entities) };
}

const MDV2_RESERVED = "_*[]()~`>#+-=|{}.!";
const MDV2_TYPE_NAME: Record<string, string> = {
  bold: "Bold", italic: "Italic", underline: "Underline", strikethrough: "Strikethrough", spoiler: "Spoiler",
  code: "Code", pre: "Pre", text_link: "TextUrl", custom_emoji: "CustomEmoji",
};

function reservedError(c: string): ApiError {
  return parseError(`Character '${c}' is reserved and must be escaped with the preceding '\\'`);
}

/** TDLib `parse_markdown_v2` (without nested-entity restrictions). @throws ApiError 400 "can't parse entities: …". */
export function parseMarkdownV2(src: string): FormattedText {
  let out = "";
  const entities: Entity[] = [];
  const stack: Array<{ type: string; offset: number; byte: number; lang?: string }> = [];
  let quoteStart = -1;
  const closeQuote = () => {
    if (quoteStart >= 0 && out.length > quoteStart) {
      entities.push({ type: "blockquote", offset: quoteStart, length: out.length - quoteStart });
    }
    quoteStart = -1;
  };
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    const next = src[i + 1];
    if (c === "\\" && next !== undefined && next.charCodeAt(0) > 0 && next.charCodeAt(0) <= 126) {
      out += next;
      i++;
      continue;
    }
    const top = stack.at(-1);
    const reserved = top && (top.type === "code" || top.type === "pre") ? "`" : MDV2_RESERVED;
    // '>' at the start of a line opens a blockquote line (Bot API MarkdownV2 "Block quotation").
    if (c === ">" && reserved !== "`" && (i === 0 || src[i - 1] === "\n")) {
      if (quoteStart < 0) quoteStart = out.length;
      continue;
    }
    if (c === "\n" && quoteStart >= 0 && src[i + 1] !== ">") {
      closeQuote();
    }
    if (!reserved.includes(c)) {
      out += c;
      continue;
    }
    let isEnd = false;
    if (top) {
      switch (top.type) {
        case "bold": isEnd = c === "*"; break;
        case "italic": isEnd = c === "_" && next !== "_"; break;
        case "code": isEnd = c === "`"; break;
        case "pre": isEnd = c === "`" && next === "`" && src[i + 2] === "`"; break;
        case "text_link": case "custom_emoji": isEnd = c === "]"; break;
        case "underline": isEnd = c === "_" && next === "_"; break;
        case "strikethrough": isEnd = c === "~"; break;
        case "spoiler": isEnd = c === "|" && next === "|"; break;
      }
    }
    if (!isEnd) {
      const byte = byteOffset(src, i);
      let type: string;
      let lang: string | undefined;
      switch (c) {
        case "_": if (next === "_") { type = "underline"; i++; } else type = "italic"; break;
        case "*": type = "bold"; break;
        case "~": type = "strikethrough"; break;
        case "|": if (next === "|") { type = "spoiler"; i++; } else throw reservedError(c); break;
        case "[": type = "text_link"; break;
        case "`":
          if (next === "`" && src[i + 2] === "`") {
            type = "pre";
            i += 3;
            const nl = src.indexOf("\n", i);
            const header = nl >= 0 ? src.slice(i, nl) : "";
            if (nl >= 0 && /^[^\s`]+$/.test(header)) { lang = header; i = nl; }
            else if (nl >= 0 && header === "") i = nl;
            else i -= 1;
          } else type = "code";
          break;
        case "!": if (next === "[") { type = "custom_emoji"; i++; } else throw reservedError(c); break;
        default: throw reservedError(c);
      }
      stack.push({ type, offset: out.length, byte, ...(lang ? { lang } : {}) });
      continue;
    }
    const open = stack.pop()!;
    const e: Entity = { type: open.type, offset: open.offset, length: out.length - open.offset };
    if (open.type === "underline" || open.type === "spoiler") i++;
    if (open.type === "pre") {
      i += 2;
      if (open.lang) e.language = open.lang;
    }
    if (open.type === "text_link" || open.type === "custom_emoji") {
      let url = "";
      if (src[i + 1] === "(") {
        i += 2;
        const urlBegin = byteOffset(src, i);
        while (i < src.length && src[i] !== ")") {
          const n = src[i + 1];
          if (src[i] === "\\" && n !== undefined && n.charCodeAt(0) > 0 && n.charCodeAt(0) <= 126) {
            url += n;
            i += 2;
            continue;
          }
          url += src[i++];
        }
        if (src[i] !== ")") throw parseError(`Can't find end of a URL at byte offset ${urlBegin}`);
      } else {
        url = out.slice(open.offset);
      }
      if (open.type === "custom_emoji") e.custom_emoji_id = url.replace(/^tg:\/\/emoji\?id=/, "");
      else if (url === "") continue;
      else e.url = url;
    }
    if (e.length > 0) entities.push(e);
  }
  closeQuote();
  const open = stack.at(-1);
  if (open) throw parseError(`Can't find end of ${MDV2_TYPE_NAME[open.type]} entity at byte offset ${open.byte}`);
  return { text: out, entities: sortEntities(entities) };
}

/** TDLib `parse_markdown` (legacy "Markdown"). @throws ApiError 400 "can't parse entities: …". */
export function parseMarkdownLegacy(src: string): FormattedText {
  let out = "";
  const entities: Entity[] = [];
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === "\\" && "_*`[".includes(src[i + 1] ?? "\0")) {
      out += src[++i];
      continue;
    }
    if (!"_*`[".includes(c)) {
      out += c;
      continue;
    }
    const begin = byteOffset(src, i);
    let end = c === "[" ? "]" : c;
    let pre = false;
    i++;
    if (c === "`" && src[i] === "`" && src[i + 1] === "`") {
      i += 2;
      pre = true;
      end = "`";
    }
    const offset = out.length;
    while (i < src.length && (src[i] !== end || (pre && !(src[i + 1] === "`" && src[i + 2] === "`")))) out += src[i++];
    if (i >= src.length) throw parseError(`Can't find end of the entity starting at byte offset ${begin}`);
    const length = out.length - offset;
    if (pre) i += 2;
    let type = c === "*" ? "bold" : c === "_" ? "italic" : pre ? "pre" : c === "`" ? "code" : "text_link";
    const e: Entity = { type, offset, length };
    if (c === "[") {
      if (src[i + 1] === "(") {
        const close = src.indexOf(")", i + 2);
        if (close < 0) throw parseError(`Can't find end of the entity starting at byte offset ${begin}`);
        e.url = src.slice(i + 2, close);
        i = close;
      } else type = "";
    }
    if (length > 0 && type !== "") entities.push(e);
  }
  return { text: out, entities: sortEntities(entities) };
}

/**
 * Strips leading and trailing whitespace (code units ≤ U+0020) like TDLib's `fix_formatted_text`, shifting
 * and clipping entities; entities left empty are dropped. So "hello\n" is stored and returned as "hello".
 */
export function trimFormatted(ft: FormattedText): FormattedText {
  let start = 0;
  let end = ft.text.length;
  while (start < end && ft.text.charCodeAt(start) <= 0x20) start++;
  while (end > start && ft.text.charCodeAt(end - 1) <= 0x20) end--;
  if (start === 0 && end === ft.text.length) return ft;
  const entities: Entity[] = [];
  for (const e of ft.entities) {
    const a = Math.max(e.offset, start);
    const b = Math.min(e.offset + e.length, end);
    if (b > a) entities.push({ ...e, offset: a - start, length: b - a });
  }
  return { text: ft.text.slice(start, end), entities };
}

function sortEntities(list: Entity[]): Entity[] {
  return list.sort((a, b) => a.offset - b.offset || b.length - a.length);
}

/**
 * Resolves a message text or caption the way TBA does: parse_mode (HTML | MarkdownV2 | Markdown, case-insensitive)
 * or explicit entities.
 * @param kind "text" (1–4096 after parsing, "message text is empty"/"message is too long") or
 *   "caption" (0–1024, "message caption is too long").
 * @throws ApiError 400 with the exact Bot API descriptions.
 */
export function formatText(
  raw: string | undefined,
  parseMode: string | undefined,
  explicit: unknown,
  kind: "text" | "caption" | "draft",
): FormattedText {
  const src = raw ?? "";
  if (enc.encode(src).byteLength > MAX_RAW_TEXT_BYTES) throw badRequest(E.textTooLong);
  let ft: FormattedText;
  const mode = (parseMode ?? "").toLowerCase();
  if (mode === "html") ft = parseHtml(src);
  else if (mode === "markdownv2") ft = parseMarkdownV2(src);
  else if (mode === "markdown") ft = parseMarkdownLegacy(src);
  else if (mode === "") ft = { text: src, entities: Array.isArray(explicit) ? (explicit as Entity[]) : [] };
  else throw badRequest("unsupported parse_mode");
  if (kind !== "draft") ft = trimFormatted(ft);
  if (kind === "text" && ft.text === "") throw badRequest(E.textEmpty);
  const max = kind === "caption" ? MAX_CAPTION_LENGTH : MAX_TEXT_LENGTH;
  if (ft.text.length > max) throw badRequest(kind === "caption" ? E.captionTooLong : E.messageTooLong);
  return ft;
}
