/**
 * Text message methods: sendMessage, editMessageText, editMessageReplyMarkup, editMessageCaption, deleteMessage,
 * sendChatAction, sendMessageDraft, answerCallbackQuery (Bot API; strings per botapi-facts.md §3, §6).
 * Validation runs before the rate limit, so a rejected request does not use up the chat's budget.
 */
import { badRequest, E } from "./api-error.ts";
import type { Ctx, Handler } from "./core.ts";
import { formatText } from "./entities.ts";
import { addBotMessage, applyEdit, canonical, messageToEdit, readReplyMarkup, readReplyTo } from "./message-parts.ts";

const CHAT_ACTIONS = new Set([
  "typing", "upload_photo", "record_video", "upload_video", "record_voice", "upload_voice", "upload_document",
  "choose_sticker", "find_location", "record_video_note", "upload_video_note",
]);

function sendMessage(c: Ctx): unknown {
  const chat = c.core.chatFor(c, true);
  const ft = formatText(c.args.str("text"), c.args.str("parse_mode"), c.args.json("entities"), "text");
  const markup = readReplyMarkup(c);
  const replyTo = readReplyTo(c, chat);
  c.core.rate(c, "message", chat);
  return addBotMessage(c, chat, { text: ft.text, entities: ft.entities }, markup, replyTo);
}

function editMessageText(c: Ctx): unknown {
  const chat = c.core.chatFor(c, true);
  const m = messageToEdit(c, chat);
  const ft = formatText(c.args.str("text"), c.args.str("parse_mode"), c.args.json("entities"), "text");
  const markup = readReplyMarkup(c);
  if (m.text === undefined) throw badRequest("there is no text in the message to edit");
  const same = m.text === ft.text && canonical(m.entities ?? []) === canonical(ft.entities);
  return applyEdit(c, chat, m, { text: ft.text, entities: ft.entities }, markup, same, "edited");
}

function editMessageReplyMarkup(c: Ctx): unknown {
  const chat = c.core.chatFor(c, true);
  const m = messageToEdit(c, chat);
  return applyEdit(c, chat, m, {}, readReplyMarkup(c), true, "markup edited");
}

function editMessageCaption(c: Ctx): unknown {
  const chat = c.core.chatFor(c, true);
  const m = messageToEdit(c, chat);
  if (!m.document && !m.photo) throw badRequest("there is no caption in the message to edit");
  const ft = formatText(c.args.str("caption"), c.args.str("parse_mode"), c.args.json("caption_entities"), "caption");
  const markup = readReplyMarkup(c);
  const same = (m.caption ?? "") === ft.text && canonical(m.caption_entities ?? []) === canonical(ft.entities);
  return applyEdit(c, chat, m, { caption: ft.text, caption_entities: ft.entities }, markup, same, "caption edited");
}

function deleteMessage(c: Ctx): unknown {
  const chat = c.core.chatFor(c, true);
  const m = chat.get(c.args.int("message_id", 0));
  if (!m || m.deleted) throw badRequest(E.messageToDeleteNotFound);
  // In a group the bot is a plain member here (no admin rights), so others' messages stay.
  if (chat.type === "group" && m.from !== "bot") throw badRequest("message can't be deleted");
  m.deleted = true;
  chat.note(`bot deleted #${m.message_id}`);
  return true;
}

function sendChatAction(c: Ctx): unknown {
  const chat = c.core.chatFor(c, true);
  const action = c.args.str("action") ?? "";
  if (!CHAT_ACTIONS.has(action)) throw badRequest(E.wrongAction);
  c.core.rate(c, "chatAction", chat);
  chat.actions.push(action);
  chat.note(`bot action: ${action}`);
  return true;
}

function sendMessageDraft(c: Ctx): unknown {
  const chat = c.core.chatFor(c, true);
  if (chat.type !== "private") throw badRequest(E.draftPeerInvalid);
  const draftId = c.args.int("draft_id", 0);
  if (draftId === 0) throw badRequest("parameter \"draft_id\" must be non-zero");
  const ft = formatText(c.args.str("text"), c.args.str("parse_mode"), c.args.json("entities"), "draft");
  c.core.rate(c, "draft", chat);
  chat.drafts.push({ draft_id: draftId, text: ft.text });
  chat.note(`bot draft ${draftId}: ${ft.text.length > 80 ? `${ft.text.slice(0, 80)}…` : ft.text}`);
  return true;
}

function answerCallbackQuery(c: Ctx): unknown {
  const id = c.args.str("callback_query_id") ?? "";
  const q = c.core.callbackQueries.get(id);
  if (!q || q.answered) throw badRequest(E.queryTooOld);
  c.chatId = q.chatId;
  q.answered = true;
  const text = c.args.str("text");
  if (text !== undefined && text.length > 200) throw badRequest("MESSAGE_TOO_LONG");
  c.core.chats.get(q.chatId)?.note(`bot answered callback${text ? `: ${text}` : ""}`);
  return true;
}

/** Handlers by canonical method name. */
export const messageMethods: Record<string, Handler> = {
  sendMessage,
  editMessageText,
  editMessageReplyMarkup,
  editMessageCaption,
  deleteMessage,
  sendChatAction,
  sendMessageDraft,
  answerCallbackQuery,
};
