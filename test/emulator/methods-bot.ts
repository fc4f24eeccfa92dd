/**
 * Bot-level methods: getMe, getUpdates, setWebhook, deleteWebhook, getWebhookInfo, logOut, close,
 * set/get/deleteMyCommands, getChat, getChatMember (botapi-facts.md §2, §4; TBA `process_*_query`).
 */
import { ApiError, badRequest, E, tooManyRequests } from "./api-error.ts";
import { OkWithDescription, type Ctx, type Handler } from "./core.ts";
import { LONG_POLL_MAX_TIMEOUT } from "./update-queue.ts";

function getMe(c: Ctx): unknown {
  return {
    ...c.core.botUser,
    can_join_groups: true,
    can_read_all_group_messages: false,
    supports_inline_queries: false,
    can_connect_to_business: false,
    has_main_web_app: false,
  };
}

function readAllowedUpdates(c: Ctx): string[] | undefined {
  const v = c.args.json("allowed_updates", "allowed_updates");
  if (v === undefined) return undefined;
  if (!Array.isArray(v)) throw badRequest("can't parse allowed_updates JSON array");
  return v.map(String);
}

function getUpdates(c: Ctx): Promise<unknown[]> {
  const allowedUpdates = readAllowedUpdates(c);
  return c.core.updates.getUpdates(
    {
      offset: c.args.int("offset", 0),
      limit: c.args.int("limit", 100, 1, 100),
      timeout: c.args.int("timeout", 0, 0, LONG_POLL_MAX_TIMEOUT),
      ...(allowedUpdates !== undefined ? { allowedUpdates } : {}),
    },
    c.signal,
    c.now,
  );
}

/** Webhook URL checks: cloud needs HTTPS on 443/80/88/8443 (unless allowHttpWebhook); local accepts HTTP. */
function checkWebhookUrl(c: Ctx, raw: string): void {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw badRequest("invalid webhook URL specified");
  }
  if (u.protocol !== "https:" && u.protocol !== "http:") throw badRequest("invalid webhook URL specified");
  if (c.core.mode === "local" || c.core.opts.allowHttpWebhook) return;
  if (u.protocol !== "https:") throw badRequest("bad webhook: An HTTPS URL must be provided for webhook");
  const port = u.port === "" ? 443 : Number(u.port);
  if (![443, 80, 88, 8443].includes(port)) {
    throw badRequest("bad webhook: Webhook can be set up only on ports 80, 88, 443 or 8443");
  }
}

function setWebhook(c: Ctx): unknown {
  const url = c.args.str("url") ?? "";
  const q = c.core.updates;
  if (url === "") return deleteWebhook(c);
  checkWebhookUrl(c, url);
  const secret = c.args.str("secret_token");
  if (secret !== undefined && secret !== "") {
    if (secret.length > 256) throw badRequest("secret token is too long");
    if (!/^[A-Za-z0-9_-]+$/.test(secret)) throw badRequest("secret token contains unallowed characters");
  }
  // setWebhook with a URL at most once per second per bot.
  if (c.now - c.core.lastSetWebhookAt < 1000) throw tooManyRequests(1000);
  c.core.lastSetWebhookAt = c.now;
  const local = c.core.mode === "local";
  const maxConnections = c.args.int("max_connections", local ? 100 : 40, 1, local ? 100_000 : 100);
  const allowedUpdates = readAllowedUpdates(c);
  const next = {
    url,
    ...(secret ? { secretToken: secret } : {}),
    maxConnections,
    ...(allowedUpdates && allowedUpdates.length > 0 ? { allowedUpdates } : {}),
    ...(c.args.str("ip_address") ? { ipAddress: c.args.str("ip_address")! } : {}),
  };
  const same = JSON.stringify(q.webhook) === JSON.stringify(next);
  if (c.args.bool("drop_pending_updates")) q.clear();
  q.setWebhook(next);
  return new OkWithDescription(true, same ? "Webhook is already set" : "Webhook was set");
}

function deleteWebhook(c: Ctx): unknown {
  const q = c.core.updates;
  const had = q.webhook !== undefined;
  if (c.args.bool("drop_pending_updates")) q.clear();
  q.deleteWebhook();
  return new OkWithDescription(true, had ? "Webhook was deleted" : "Webhook is already deleted");
}

function getWebhookInfo(c: Ctx): unknown {
  const q = c.core.updates;
  const w = q.webhook;
  const info: Record<string, unknown> = {
    url: w?.url ?? "",
    has_custom_certificate: false,
    pending_update_count: q.pending,
  };
  if (w) {
    info.max_connections = w.maxConnections;
    info.ip_address = w.ipAddress ?? "127.0.0.1";
    if (w.allowedUpdates) info.allowed_updates = w.allowedUpdates;
    if (q.webhookError) {
      info.last_error_date = q.webhookError.date;
      info.last_error_message = q.webhookError.message;
    }
  }
  return info;
}

function logOut(c: Ctx): unknown {
  c.core.instance.logOut(c.now);
  c.core.updates.clear();
  c.core.updates.deleteWebhook();
  return true;
}

/** close: the launch-window 429 and "already been closed" rules of bot-instance.ts. */
function close(c: Ctx): unknown {
  c.core.instance.close(c.now);
  return true;
}

function setMyCommands(c: Ctx): unknown {
  const cmds = c.args.json("commands", "commands");
  if (!Array.isArray(cmds)) throw badRequest("can't parse commands JSON array");
  if (cmds.length > 100) throw badRequest("too much commands specified");
  for (const cmd of cmds as Array<{ command?: unknown; description?: unknown }>) {
    const name = typeof cmd?.command === "string" ? cmd.command.replace(/^\//, "") : "";
    if (!/^[a-z0-9_]{1,32}$/.test(name)) throw badRequest("BOT_COMMAND_INVALID");
    const d = typeof cmd.description === "string" ? cmd.description : "";
    if (d.length < 1 || d.length > 256) throw badRequest("command description must be non-empty");
  }
  c.core.commands = cmds;
  return true;
}

function getMyCommands(c: Ctx): unknown {
  return c.core.commands;
}

function deleteMyCommands(c: Ctx): unknown {
  c.core.commands = [];
  return true;
}

function getChat(c: Ctx): unknown {
  const chat = c.core.chatFor(c, false);
  return { ...chat.apiChat(), accent_color_id: 0, max_reaction_count: 11, accepted_gift_types: {} };
}

/** The rights of an administrator (Bot API ChatMemberAdministrator) as the emulator reports them. */
const ADMIN_RIGHTS = {
  can_be_edited: false,
  is_anonymous: false,
  can_manage_chat: true,
  can_delete_messages: true,
  can_manage_video_chats: true,
  can_restrict_members: true,
  can_promote_members: false,
  can_change_info: true,
  can_invite_users: true,
  can_post_stories: false,
  can_edit_stories: false,
  can_delete_stories: false,
  can_pin_messages: true,
};

/**
 * getChatMember (TBA `process_get_chat_member_query`): `{user, status, …}` — `creator`, `administrator`
 * with its rights (`is_anonymous`: the admin writes as the group), `member`, or `left` for a user the emulator knows who is not in the group (the user of
 * a private chat is its `member`). Errors: "chat not found", "invalid user_id specified" (absent or ≤ 0),
 * "user not found" (an id nobody has).
 */
function getChatMember(c: Ctx): unknown {
  const chat = c.core.chatFor(c, false);
  const userId = c.args.int("user_id", 0);
  if (userId <= 0) throw badRequest("invalid user_id specified");
  const member = chat.members.get(userId);
  if (member) {
    const is_anonymous = member.anonymous === true;
    if (member.status === "administrator") return { user: member.user, status: "administrator", ...ADMIN_RIGHTS, is_anonymous };
    if (member.status === "creator") return { user: member.user, status: "creator", is_anonymous };
    return { user: member.user, status: "member" };
  }
  const known = c.core.chats.get(userId);
  if (!known || known.type !== "private") throw badRequest("user not found");
  const user = { id: userId, is_bot: false, ...known.info };
  return { user, status: chat.id === userId ? "member" : "left" };
}

/** Handlers by canonical method name. */
export const botMethods: Record<string, Handler> = {
  getMe,
  getUpdates,
  setWebhook,
  deleteWebhook,
  getWebhookInfo,
  logOut,
  close,
  setMyCommands,
  getMyCommands,
  deleteMyCommands,
  getChat,
  getChatMember,
};

/** Methods Telegram has but the emulator does not implement: answered 501 so a test notices (never silently ok). */
export const KNOWN_UNIMPLEMENTED = [
  "forwardMessage", "copyMessage", "sendAudio", "sendVideo", "sendAnimation", "sendVoice", "sendVideoNote",
  "sendLocation", "sendContact", "sendPoll", "sendDice", "setMessageReaction", "getUserProfilePhotos",
  "getChatAdministrators", "leaveChat", "deleteMessages", "editMessageMedia", "setChatMenuButton",
  "setMyDescription", "setMyShortDescription", "setMyName", "sendRichMessageDraft", "copyMessages", "forwardMessages",
];

/** ApiError for an unimplemented method (not a Telegram answer; marks a gap in the emulator). */
export function unimplemented(method: string): ApiError {
  return new ApiError(501, `Not Implemented: emulator does not implement ${method}`);
}
