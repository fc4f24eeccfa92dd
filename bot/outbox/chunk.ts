/**
 * Chunk: one desired chat message, normalized and content-hashed.
 *
 * Source: seed 002 "Chunk — что вообще можно попросить" and "key — как подвинуть сообщение вниз".
 * Field names follow the Bot API (sendMessage / editMessageText parameters).
 */
import { createHash } from "node:crypto";
import type { InlineKeyboardMarkup, LinkPreviewOptions, MessageEntity, ParseMode } from "grammy/types";

/** What a caller may pass for one message. Only `text` is required. */
export interface ChunkInput {
  /** Message text, 1–4096 UTF-16 code units after entity parsing (Bot API: sendMessage.text). */
  text: string;
  /** Formatting as entities (offsets/lengths in UTF-16 code units). Ignored when parse_mode is set. */
  entities?: readonly MessageEntity[];
  /** Inline keyboard; set again on every edit, so dropping it from the chunk removes it from the message. */
  reply_markup?: InlineKeyboardMarkup;
  /** Bot API LinkPreviewOptions, e.g. `{ is_disabled: true }`. */
  link_preview?: LinkPreviewOptions;
  /** message_id to reply to; sent as reply_parameters with allow_sending_without_reply. Used on send only. */
  reply_to?: number;
  /** For static, already marked-up texts ("HTML", "MarkdownV2"); when set, entities are not sent. */
  parse_mode?: ParseMode;
  /** Message identity: same key → edit in place; a new key → delete and re-send at the bottom. Not hashed. */
  key?: string;
}

/** A normalized, frozen chunk with its content hash. Build with {@link toChunk}. */
export interface Chunk {
  readonly text: string;
  /** Empty when parse_mode is set (the two forms exclude each other in the Bot API). */
  readonly entities: readonly MessageEntity[];
  readonly reply_markup: InlineKeyboardMarkup | undefined;
  readonly link_preview: LinkPreviewOptions | undefined;
  readonly reply_to: number | undefined;
  readonly parse_mode: ParseMode | undefined;
  /** Identity; `""` when the caller gave none. */
  readonly key: string;
  /** sha256 (hex) over every field except `key` (seed: content_hash). */
  readonly hash: string;
}

/** JSON with object keys sorted, so equal content gives an equal hash whatever the key order. */
function stableJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v as object).sort()) sorted[k] = (v as Record<string, unknown>)[k];
    return sorted;
  });
}

/**
 * Normalize one input (a string means `{ text }`) into a frozen {@link Chunk}.
 * @throws TypeError when text is not a string.
 */
export function toChunk(input: ChunkInput | string): Chunk {
  const c: ChunkInput = typeof input === "string" ? { text: input } : input;
  if (typeof c.text !== "string") throw new TypeError("outbox chunk text must be a string");
  const parse_mode = c.parse_mode;
  const entities = parse_mode ? [] : (c.entities ?? []);
  const body = {
    text: c.text,
    entities,
    reply_markup: c.reply_markup,
    link_preview: c.link_preview,
    reply_to: c.reply_to,
    parse_mode,
  };
  const hash = createHash("sha256").update(stableJson(body)).digest("hex");
  return Object.freeze({ ...body, entities: Object.freeze([...entities]), key: c.key ?? "", hash });
}
