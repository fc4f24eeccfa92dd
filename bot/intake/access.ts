/**
 * Access control middleware: users outside `ALLOWED_USER_IDS` get a polite
 * refusal and nothing else happens (no job, no disk). Admins are always allowed.
 */
import { Composer } from "grammy";
import type { Config } from "../config.ts";
import type { DocketContext } from "../i18n/index.ts";
import type { Services } from "../services.ts";
import { answerQuery } from "./answer-query.ts";

/** Whether `userId` may use the bot (empty allow-list = everyone). */
export function isAllowed(config: Pick<Config, "allowedUserIds" | "adminUserIds">, userId: number | undefined): boolean {
  if (userId === undefined) return false;
  if (config.allowedUserIds.length === 0) return true;
  return config.allowedUserIds.includes(userId) || config.adminUserIds.includes(userId);
}

/**
 * Middleware that stops updates from users who are not allowed, replying once per message; a button
 * press is answered in the background (never awaited: it must not hold the batch).
 */
export function accessControl(config: Pick<Config, "allowedUserIds" | "adminUserIds">, services: Pick<Services, "reply" | "background">): Composer<DocketContext> {
  const { reply } = services;
  const c = new Composer<DocketContext>();
  c.use(async (ctx, next) => {
    if (isAllowed(config, ctx.from?.id)) return next();
    if (ctx.callbackQuery) return answerQuery(services, ctx);
    if (ctx.message) void reply(ctx.message.chat.id, ctx.t("intake-not-allowed"), { replyTo: ctx.message.message_id });
  });
  return c;
}
