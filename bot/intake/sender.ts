/**
 * Who sent an update, and what they may do with a job or a chat's /settings (issue 11 item 6) — pure
 * rules, no I/O. In groups Telegram sends an anonymous admin's messages `from` GroupAnonymousBot
 * (1087968824) with `sender_chat` = the group, and a channel's (a linked channel's post, a member writing
 * as their channel) `from` Channel_Bot (136817688) with `sender_chat` = the channel (Bot API:
 * Message.sender_chat). That `from` is shared by everyone who writes that way in every group, so the
 * sender a job belongs to, and the one per-user limits and the allow-list count, is `sender_chat` when
 * present, else `from`. Admin rights of a member come from getChatMember (bot/intake/chat-admins.ts).
 */

/** `from.id` of an anonymous group admin's messages (Telegram's GroupAnonymousBot). */
export const GROUP_ANONYMOUS_BOT_ID = 1087968824;
/** `from.id` of a channel's messages in a group (Telegram's Channel_Bot). */
export const CHANNEL_BOT_ID = 136817688;

/** The sender of a message or a button press. */
export interface Sender {
  /** Whom a job belongs to and per-user rules count: `sender_chat.id` when present, else `from.id`. */
  readonly id: number;
  /** `from.id`: the person for getChatMember (a stand-in bot's id for anonymous admins and channels). */
  readonly userId: number;
  /** Sent on behalf of the group itself: only its admins can do that. */
  readonly anonymousAdmin: boolean;
  /** Sent as a channel: not a member of the group, so getChatMember cannot vouch for it. */
  readonly channel: boolean;
}

/** The parts of a Message (or of a callback query's `from` and chat) the rules read. */
export interface SenderFields {
  readonly from?: { readonly id: number } | undefined;
  readonly sender_chat?: { readonly id: number } | undefined;
  readonly chat: { readonly id: number };
}

/** The sender of `m`, or null when it has no `from` (a channel's own post in the channel). */
export function senderOf(m: SenderFields): Sender | null {
  if (!m.from) return null;
  const via = m.sender_chat;
  return { id: via?.id ?? m.from.id, userId: m.from.id, anonymousAdmin: via !== undefined && via.id === m.chat.id, channel: via !== undefined && via.id !== m.chat.id };
}

/** A rule's answer: allowed, refused, or ask getChatMember whether `Sender.userId` is an admin of the chat. */
export type Verdict = "yes" | "no" | "ask";

/**
 * May `s` act on a job (`/cancel N`, `/delete N`) that belongs to `owner` in a chat of `chatType`? Its
 * owner, a bot admin (ADMIN_USER_IDS), and in groups an anonymous admin of the group may; another member
 * may when getChatMember says they are the group's creator or an administrator; a channel may not.
 */
export function mayActOnJob(owner: number, s: Sender, chatType: string, botAdmins: readonly number[]): Verdict {
  if (owner === s.id || botAdmins.includes(s.userId)) return "yes";
  return groupAdminVerdict(s, chatType);
}

/** May `s` change the chat's /settings? Anyone in a private chat; in groups only its admins (as {@link mayActOnJob}). */
export function mayChangeSettings(s: Sender, chatType: string, botAdmins: readonly number[]): Verdict {
  if (chatType === "private" || botAdmins.includes(s.userId)) return "yes";
  return groupAdminVerdict(s, chatType);
}

function groupAdminVerdict(s: Sender, chatType: string): Verdict {
  if (chatType !== "group" && chatType !== "supergroup") return "no";
  if (s.anonymousAdmin) return "yes";
  if (s.channel || s.userId === GROUP_ANONYMOUS_BOT_ID || s.userId === CHANNEL_BOT_ID) return "no";
  return "ask";
}
