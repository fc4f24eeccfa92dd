/**
 * The executor: one action → exactly one grammY Api call → one Result. No decisions.
 *
 * Source: seed 002 "TelegramExecutor … тупой и это by design". Bot API methods: sendMessage,
 * editMessageText, deleteMessage, sendChatAction, sendMessageDraft (botapi-facts §6), and for posts
 * sendDocument, sendMediaGroup, editMessageReplyMarkup (post.ts).
 */
import type { Api } from "grammy";
import type { Action, Result } from "./action.ts";
import type { Chunk } from "./chunk.ts";
import { classify } from "./classify.ts";
import type { PostRequest } from "./post.ts";

/** Runs actions; tests may supply their own (the machine only sees Results). */
export interface Executor {
  /** Perform `action` in `chatId` through `api`; never throws (errors become Results). */
  execute(api: Api, chatId: number, action: Action, signal?: AbortSignal): Promise<Result>;
}

/** grammY's node build types signals with the abort-controller package; the runtime object is the same. */
type GrammySignal = Parameters<Api["deleteMessage"]>[2];

/** Text formatting fields: entities, or parse_mode — never both (Bot API). */
function format(c: Chunk): { parse_mode?: Chunk["parse_mode"]; entities?: Chunk["entities"][number][] } {
  if (c.parse_mode) return { parse_mode: c.parse_mode };
  return c.entities.length ? { entities: [...c.entities] } : {};
}

/** Fields a send and an edit both carry: the keyboard (set again on every edit) and the link preview. */
function markup(c: Chunk): { reply_markup?: NonNullable<Chunk["reply_markup"]>; link_preview_options?: NonNullable<Chunk["link_preview"]> } {
  return {
    ...(c.reply_markup ? { reply_markup: c.reply_markup } : {}),
    ...(c.link_preview ? { link_preview_options: c.link_preview } : {}),
  };
}

/** One post's call; resolves with the Bot API result. */
function post(api: Api, chatId: number, r: PostRequest, signal: GrammySignal): Promise<unknown> {
  switch (r.method) {
    case "sendDocument":
      return api.sendDocument(chatId, r.document, r.other, signal);
    case "sendMediaGroup":
      return api.sendMediaGroup(chatId, r.media, r.other, signal);
    case "editMessageReplyMarkup":
      return api.editMessageReplyMarkup(chatId, r.messageId, r.other, signal);
  }
}

/** The grammY executor. */
export const grammyExecutor: Executor = {
  async execute(api, chatId, action, abortSignal) {
    const signal = abortSignal as unknown as GrammySignal;
    try {
      const thread = action.threadId !== undefined ? { message_thread_id: action.threadId } : {};
      switch (action.type) {
        case "typing":
          await api.sendChatAction(chatId, "typing", thread, signal);
          return { ok: true };
        case "send": {
          const c = action.chunk!;
          const msg = await api.sendMessage(
            chatId,
            c.text,
            {
              ...thread,
              ...format(c),
              ...markup(c),
              ...(c.reply_to !== undefined ? { reply_parameters: { message_id: c.reply_to, allow_sending_without_reply: true } } : {}),
            },
            signal,
          );
          return { ok: true, messageId: msg.message_id };
        }
        case "edit": {
          const c = action.chunk!;
          await api.editMessageText(
            chatId,
            action.messageId!,
            c.text,
            {
              ...format(c),
              ...markup(c),
            },
            signal,
          );
          return { ok: true };
        }
        case "drop":
        case "delete":
          await api.deleteMessage(chatId, action.messageId!, signal);
          return { ok: true };
        case "post":
          return { ok: true, value: await post(api, chatId, action.request, signal) };
        case "draft": {
          const c = action.chunk!;
          await api.sendMessageDraft(chatId, action.draftId!, c.text, { ...thread, ...format(c) }, signal);
          return { ok: true };
        }
      }
    } catch (err) {
      return classify(err, action);
    }
  },
};
