/**
 * `/settings`: per-chat processing choices as an inline keyboard (issue 5 §6).
 * The choice becomes the job's `variant`, part of the idempotency key, so the same
 * file sent after a change is processed again with the new setting (seed 000:
 * "можно разрешить повтор, если с прошлого раза изменились настройки обработки"). In a group only its
 * admins may open or press it (bot/intake/sender.ts; getChatMember through bot/intake/chat-admins.ts).
 */
import { Composer, InlineKeyboard } from "grammy";
import type { DocketContext } from "../i18n/index.ts";
import type { Services } from "../services.ts";
import { answerQuery } from "./answer-query.ts";
import type { ChatAdmins } from "./chat-admins.ts";
import { mayChangeSettings, senderOf } from "./sender.ts";

/**
 * PDF actions a chat can choose (processors/pdf: `default` = text (scanned pages recognized) +
 * preview, `pages` = ZIP of page JPEGs, `searchable` = text + the original pages with an invisible
 * text layer; issue 13 §4).
 */
export const PDF_ACTIONS = ["default", "pages", "searchable"] as const;

function keyboard(ctx: DocketContext, current: string): InlineKeyboard {
  const kb = new InlineKeyboard();
  for (const a of PDF_ACTIONS) kb.text(`${a === current ? "✅ " : ""}${ctx.t(`settings-pdf-${a}`)}`, `settings:pdf:${a}`).row();
  return kb;
}

/** The Composer with /settings and its buttons. */
export function settings(services: Services, admins: ChatAdmins): Composer<DocketContext> {
  const c = new Composer<DocketContext>();
  const adminIds = services.config.adminUserIds;
  c.command("settings", async (ctx) => {
    const msg = ctx.msg;
    const sender = msg ? senderOf(msg) : null;
    if (!msg || !sender) return;
    // In a group only its admins may change how the group's files are processed (issue 11 item 6).
    await admins.whenKnown(services, ctx.chat.id, sender.userId, mayChangeSettings(sender, ctx.chat.type, adminIds), async (ok) => {
      if (!ok) return void services.reply(ctx.chat.id, ctx.t("settings-admins-only"), { replyTo: msg.message_id });
      const s = await services.store.getSettings(ctx.chat.id);
      void services.reply(ctx.chat.id, ctx.t("settings-title"), { replyMarkup: keyboard(ctx, s.pdfAction) });
    }, "/settings");
  });
  c.callbackQuery(/^settings:pdf:([a-z]+)$/, async (ctx) => {
    const action = ctx.match[1] as string;
    const chat = ctx.chat;
    if (chat === undefined || !(PDF_ACTIONS as readonly string[]).includes(action)) return answerQuery(services, ctx);
    // The presser is `from` (a button press has no sender_chat); a keyboard an admin opened is not everyone's.
    const sender = senderOf({ from: ctx.from, chat });
    await admins.whenKnown(services, chat.id, ctx.from.id, sender ? mayChangeSettings(sender, chat.type, adminIds) : "no", (ok) => (ok ? choose(ctx, chat.id, action) : answerQuery(services, ctx, { text: ctx.t("settings-admins-only") })), "settings button");
  });

  /** Store the choice, answer the press, and redraw the keyboard (through the outbox). */
  const choose = async (ctx: DocketContext & { callbackQuery: { message?: { message_id: number } } }, chatId: number, action: string): Promise<void> => {
    const messageId = ctx.callbackQuery.message?.message_id;
    await services.store.setSettings(chatId, { pdfAction: action }, services.now());
    services.log.info({ chat_id: chatId, pdf_action: action }, "chat settings changed");
    answerQuery(services, ctx, { text: ctx.t("settings-saved") });
    // The keyboard edit is a chat-bound call: the outbox paces it and honours the chat's hold (contract 7).
    if (messageId !== undefined) {
      const reply_markup = keyboard(ctx, action);
      services.background(() => services.post(chatId, { method: "editMessageReplyMarkup", messageId, other: { reply_markup } }), "settings keyboard");
    }
  };
  return c;
}
