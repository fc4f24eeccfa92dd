/**
 * Access control middleware: users outside `ALLOWED_USER_IDS` get a polite refusal and nothing else
 * happens (no job, no disk). Admins are always allowed. The refusal is recorded like every intake
 * reply (`chat_replies`, sent from its record) and given at most once per user per day (issue 11
 * item 6: an outsider's 20 messages in a group drew 20 refusals and spent the group's 20 messages a
 * minute, so an allowed member's /help waited 60 s). In groups only what the bot would act on (a
 * file, a command) is refused; chatter gets silence, as it does from allowed members. The sender is
 * `sender_chat` when there is one (bot/intake/sender.ts: anonymous admins and channels share one `from`
 * id across all groups), so ALLOWED_USER_IDS may name a group or channel id to admit them.
 */
import { Composer } from "grammy";
import type { Config } from "../config.ts";
import type { DocketContext } from "../i18n/index.ts";
import type { Services } from "../services.ts";
import { answerQuery } from "./answer-query.ts";
import { senderOf } from "./sender.ts";

/** One refusal per user in this window, ms (24 h). */
export const REFUSAL_WINDOW_MS = 86_400_000;

/** Whether `userId` may use the bot (empty allow-list = everyone). */
export function isAllowed(config: Pick<Config, "allowedUserIds" | "adminUserIds">, userId: number | undefined): boolean {
  if (userId === undefined) return false;
  if (config.allowedUserIds.length === 0) return true;
  return config.allowedUserIds.includes(userId) || config.adminUserIds.includes(userId);
}

/** Middleware that stops updates from users who are not allowed; see the module doc. */
export function accessControl(services: Pick<Services, "config" | "store" | "replies" | "log" | "now" | "background">): Composer<DocketContext> {
  const c = new Composer<DocketContext>();
  c.use(async (ctx, next) => {
    const sender = ctx.msg ? senderOf(ctx.msg) : null;
    if (isAllowed(services.config, sender?.id ?? ctx.from?.id)) return next();
    const msg = ctx.message;
    // A button press is answered in the background (never awaited: it must not hold the batch).
    if (ctx.callbackQuery) return answerQuery(services, ctx);
    if (!msg || !sender) return;
    const actionable = msg.chat.type === "private" || msg.document !== undefined || msg.photo !== undefined || (msg.entities ?? []).some((e) => e.type === "bot_command" && e.offset === 0);
    if (!actionable) return;
    const reply = await services.store.recordRefusal(
      { updateId: ctx.update.update_id, chatId: msg.chat.id, userId: sender.id, replyTo: msg.message_id, text: ctx.t("intake-not-allowed") },
      services.now(),
      REFUSAL_WINDOW_MS,
    );
    if (reply) services.replies.deliver(reply, null);
    else services.log.debug({ user_id: sender.id, chat_id: msg.chat.id }, "not allowed; already refused within 24 h");
  });
  return c;
}
