/**
 * Parts shared by send/edit handlers: reply_markup validation and comparison, reply_parameters resolution,
 * and the stored message lookup for edits (Bot API sendMessage, editMessageText; botapi-facts.md §3).
 */
import { badRequest, E } from "./api-error.ts";
import { summarize, type Chat, type StoredMessage } from "./chats.ts";
import type { Ctx } from "./core.ts";

/**
 * Reads and validates `reply_markup`. Inline keyboards need an Array of Arrays of buttons with `text`, and
 * callback_data of 1–64 bytes ("Bad Request: BUTTON_DATA_INVALID"). An empty inline keyboard means none.
 * @returns the markup, or undefined when absent/empty.
 */
export function readReplyMarkup(c: Ctx): unknown {
  const m = c.args.json("reply_markup", "reply keyboard markup");
  if (m === undefined) return undefined;
  if (typeof m !== "object" || m === null || Array.isArray(m)) {
    throw badRequest("can't parse reply keyboard markup JSON object");
  }
  const ik = (m as { inline_keyboard?: unknown }).inline_keyboard;
  if (ik === undefined) return m;
  if (!Array.isArray(ik) || ik.some((row) => !Array.isArray(row))) {
    throw badRequest('Field "inline_keyboard" of the InlineKeyboardMarkup must be an Array of Arrays');
  }
  for (const b of (ik as unknown[][]).flat()) {
    const btn = b as { text?: unknown; callback_data?: unknown; url?: unknown };
    if (typeof btn !== "object" || btn === null || typeof btn.text !== "string") {
      throw badRequest("can't parse inline keyboard button: Field \"text\" must be of type String");
    }
    if (btn.callback_data !== undefined) {
      const n = Buffer.byteLength(String(btn.callback_data));
      if (n < 1 || n > 64) throw badRequest("BUTTON_DATA_INVALID");
    }
  }
  return (ik as unknown[][]).flat().length === 0 ? undefined : m;
}

/** Canonical JSON (sorted keys) for "message is not modified" comparisons. */
export function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, val: unknown) =>
    val && typeof val === "object" && !Array.isArray(val)
      ? Object.fromEntries(Object.entries(val as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
      : val,
  );
}

/**
 * Resolves reply_parameters (or legacy reply_to_message_id) to a message_id in this chat.
 * A missing target is dropped when allow_sending_without_reply is set, else
 * 400 "Bad Request: message to be replied not found".
 */
export function readReplyTo(c: Ctx, chat: Chat): number | undefined {
  const rp = c.args.json("reply_parameters") as
    | { message_id?: number; chat_id?: number | string; allow_sending_without_reply?: boolean }
    | undefined;
  const id = rp?.message_id ?? (c.args.has("reply_to_message_id") ? c.args.int("reply_to_message_id", 0) : undefined);
  if (id === undefined) return undefined;
  const allow = rp?.allow_sending_without_reply ?? c.args.bool("allow_sending_without_reply");
  const target = chat.get(Number(id));
  if (target && !target.deleted) return target.message_id;
  if (allow) return undefined;
  throw badRequest(E.replyNotFound);
}

/**
 * The bot message an edit addresses (chat_id + message_id).
 * @throws ApiError 400 "message to edit not found" for unknown or deleted messages (or inline_message_id),
 *   400 "message can't be edited" for messages the bot did not send.
 */
export function messageToEdit(c: Ctx, chat: Chat): StoredMessage {
  const m = chat.get(c.args.int("message_id", 0));
  if (!m || m.deleted) throw badRequest(E.messageToEditNotFound);
  if (m.from !== "bot") throw badRequest("message can't be edited");
  return m;
}

/** Content fields of a bot message (text or media + caption). */
export type BotContent = Partial<Pick<StoredMessage, "text" | "entities" | "caption" | "caption_entities" | "document" | "photo" | "media_group_id">>;

/**
 * Stores a bot message with the request's reply_markup / reply target, notes it in the transcript and returns
 * the Bot API Message.
 */
export function addBotMessage(c: Ctx, chat: Chat, content: BotContent, markup: unknown, replyTo: number | undefined): unknown {
  const m = chat.add({
    from: "bot",
    sender: c.core.botUser,
    date: c.core.date(c.now),
    ...content,
    ...(markup !== undefined ? { reply_markup: markup } : {}),
    ...(replyTo !== undefined ? { reply_to: replyTo } : {}),
  });
  chat.note(`bot #${m.message_id}: ${summarize(m)}`);
  return chat.apiMessage(m);
}

/**
 * Applies an edit: refuses it with "message is not modified" when content and reply_markup are unchanged,
 * draws on the chat's rate budget, then replaces content and markup (absent markup removes the keyboard).
 * @param same true when the new content equals the current one.
 * @throws ApiError 400 not modified, 429 rate limit.
 */
export function applyEdit(c: Ctx, chat: Chat, m: StoredMessage, content: BotContent, markup: unknown, same: boolean, what: string): unknown {
  if (same && canonical(m.reply_markup ?? null) === canonical(markup ?? null)) throw badRequest(E.notModified);
  c.core.rate(c, "message", chat);
  Object.assign(m, content);
  if (markup !== undefined) m.reply_markup = markup;
  else delete m.reply_markup;
  m.edits++;
  m.edit_date = c.core.date(c.now);
  chat.note(`bot #${m.message_id} ${what}: ${summarize(m)}`);
  return chat.apiMessage(m);
}
