/**
 * `/settings`: per-chat processing choices as an inline keyboard (issue 5 §6).
 * The choice becomes the job's `variant`, part of the idempotency key, so the same
 * file sent after a change is processed again with the new setting (seed 000:
 * "можно разрешить повтор, если с прошлого раза изменились настройки обработки").
 */
import { Composer, InlineKeyboard } from "grammy";
import type { DocketContext } from "../i18n/index.ts";
import type { Services } from "../services.ts";
import { answerQuery } from "./answer-query.ts";

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
export function settings(services: Services): Composer<DocketContext> {
  const c = new Composer<DocketContext>();
  c.command("settings", async (ctx) => {
    const s = await services.store.getSettings(ctx.chat.id);
    void services.reply(ctx.chat.id, ctx.t("settings-title"), { replyMarkup: keyboard(ctx, s.pdfAction) });
  });
  c.callbackQuery(/^settings:pdf:([a-z]+)$/, async (ctx) => {
    const action = ctx.match[1] as string;
    const chatId = ctx.chat?.id;
    const messageId = ctx.callbackQuery.message?.message_id;
    if (chatId === undefined || !(PDF_ACTIONS as readonly string[]).includes(action)) return answerQuery(services, ctx);
    await services.store.setSettings(chatId, { pdfAction: action }, services.now());
    services.log.info({ chat_id: chatId, pdf_action: action }, "chat settings changed");
    answerQuery(services, ctx, { text: ctx.t("settings-saved") });
    // The keyboard edit is a chat-bound call: the outbox paces it and honours the chat's hold (contract 7).
    if (messageId !== undefined) {
      const reply_markup = keyboard(ctx, action);
      services.background(() => services.post(chatId, { method: "editMessageReplyMarkup", messageId, other: { reply_markup } }), "settings keyboard");
    }
  });
  return c;
}
