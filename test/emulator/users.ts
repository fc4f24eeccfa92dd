/**
 * The user side of the emulator: people who send documents, photos, text and button presses to the bot.
 * Each send stores the user's message in the chat and queues a Bot API Update (botapi-facts.md §2).
 */
import { randomBytes } from "node:crypto";
import { basename } from "node:path";
import { Chat, summarize, type MemberStatus, type StoredMessage } from "./chats.ts";
import type { Core } from "./core.ts";
import { registerPhoto } from "./methods-files.ts";
import { mimeFromName } from "./mime.ts";
import type { ChatMessage, ChatUser, Group, MessagesFilter, SentUpdate, UserDocument, UserPhoto } from "./types.ts";

/** Leading "/command" or "/command@bot" → bot_command entity (UTF-16 offsets). */
function commandEntities(text: string): Array<{ type: string; offset: number; length: number }> {
  const m = /^\/[A-Za-z0-9_]{1,32}(?:@[A-Za-z0-9_]{3,32})?/.exec(text);
  return m ? [{ type: "bot_command", offset: 0, length: m[0].length }] : [];
}

/**
 * Default bound of {@link ChatUser.waitFor}, ms. A bound, not a delay: a wait that holds returns at
 * once. Generous because a loaded 2-core CI runner can take several seconds per poll/handle/send cycle.
 */
export const WAIT_FOR_DEFAULT_MS = 15_000;

/** Waits until `pred(view())` holds; rejects with the transcript after timeoutMs. */
function waitOn(chat: Chat, view: () => ChatMessage[], pred: (m: ChatMessage[]) => boolean, timeoutMs: number) {
  return new Promise<ChatMessage[]>((resolve, reject) => {
    const check = () => {
      const msgs = view();
      if (pred(msgs)) {
        stop();
        resolve(msgs);
      }
    };
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`emulator: waitFor timed out after ${timeoutMs} ms in chat ${chat.id}; transcript:\n${chat.log.join("\n")}`));
    }, timeoutMs);
    const unlisten = chat.listen(check);
    const stop = () => {
      clearTimeout(timer);
      unlisten();
    };
    check();
  });
}

/** A user talking to the bot in one chat. */
export class ChatUserImpl implements ChatUser {
  readonly user: Record<string, unknown>;

  /**
   * @param core emulator state.
   * @param user Bot API User object of the person.
   * @param chat the chat their messages go to (private chat or a group).
   * @param senderChat Bot API `sender_chat` of their messages (an anonymous admin: the group; a channel)
   * @param presser the `from` of their button presses when it is not `user`: an administrator who remains
   *   anonymous writes as the group (`user` = GroupAnonymousBot) but presses as themselves (Bot API
   *   CallbackQuery has `from` and no `sender_chat`)
   */
  constructor(
    private readonly core: Core,
    user: Record<string, unknown>,
    private readonly chat: Chat,
    private readonly senderChat?: Record<string, unknown>,
    private readonly presser: Record<string, unknown> = user,
  ) {
    this.user = user;
  }

  get id(): number {
    return this.presser.id as number;
  }
  get chatId(): number {
    return this.chat.id;
  }
  get languageCode(): string | undefined {
    return this.user.language_code as string | undefined;
  }

  private post(fields: Partial<Omit<StoredMessage, "message_id" | "edits" | "deleted" | "from" | "sender" | "sender_chat" | "date">>, line: string): SentUpdate {
    const m = this.chat.add({ from: "user", sender: this.user, ...(this.senderChat ? { sender_chat: this.senderChat } : {}), date: this.core.date(), ...fields });
    this.chat.note(`user ${this.user.first_name as string}: ${line || summarize(m)}`);
    const update_id = this.core.updates.push({ message: this.chat.apiMessage(m) });
    return { update_id, message_id: m.message_id };
  }

  async sendText(text: string): Promise<SentUpdate> {
    const entities = commandEntities(text);
    return this.post({ text, ...(entities.length ? { entities } : {}) }, text);
  }

  async sendDocument(doc: UserDocument): Promise<SentUpdate> {
    if (!doc.path === !doc.bytes) throw new Error("emulator: sendDocument needs exactly one of path/bytes");
    const fileName =
      doc.file_name === null ? undefined : (doc.file_name ?? (doc.path ? basename(doc.path) : "document.bin"));
    const mimeType = doc.mime_type === null ? undefined : (doc.mime_type ?? mimeFromName(fileName));
    const file = await this.core.files.register({
      kind: "document",
      ...(doc.bytes ? { bytes: doc.bytes } : { path: doc.path! }),
      ...(fileName !== undefined ? { fileName } : {}),
      ...(mimeType !== undefined ? { mimeType } : {}),
      knownSize: doc.file_size,
      fromBot: false,
    });
    const document = {
      ...(fileName !== undefined ? { file_name: fileName } : {}),
      ...(mimeType !== undefined ? { mime_type: mimeType } : {}),
      file_id: this.core.files.issueId(file),
      file_unique_id: file.uniqueId,
      ...(file.knownSize !== undefined ? { file_size: file.knownSize } : {}),
    };
    const sent = this.post(
      {
        document,
        ...(doc.caption !== undefined ? { caption: doc.caption } : {}),
        ...(doc.media_group_id !== undefined ? { media_group_id: doc.media_group_id } : {}),
      },
      "",
    );
    return { ...sent, file_id: document.file_id, file_unique_id: document.file_unique_id };
  }

  async sendPhoto(src: UserPhoto): Promise<SentUpdate> {
    if (!src.path === !src.bytes) throw new Error("emulator: sendPhoto needs exactly one of path/bytes");
    const photo = await registerPhoto(this.core, src.bytes ?? src.path!, false, src.sizes);
    const sent = this.post(
      { photo, ...(src.caption !== undefined ? { caption: src.caption } : {}), ...(src.media_group_id !== undefined ? { media_group_id: src.media_group_id } : {}) },
      "",
    );
    const big = photo.at(-1)!;
    return { ...sent, file_id: big.file_id, file_unique_id: big.file_unique_id };
  }

  async pressButton(messageId: number, data: string): Promise<SentUpdate> {
    const m = this.chat.get(messageId);
    const kb = (m?.reply_markup as { inline_keyboard?: Array<Array<{ callback_data?: string }>> } | undefined)
      ?.inline_keyboard;
    if (!m || m.deleted || !kb?.flat().some((b) => b.callback_data === data)) {
      throw new Error(`emulator: message ${messageId} in chat ${this.chat.id} has no button with callback_data ${JSON.stringify(data)}`);
    }
    return this.press(m, data, "pressed");
  }

  async pressForged(messageId: number, data: string): Promise<SentUpdate> {
    const m = this.chat.get(messageId);
    if (!m || m.deleted || m.from !== "bot") throw new Error(`emulator: chat ${this.chat.id} has no bot message ${messageId} to press on`);
    return this.press(m, data, "forged a press on");
  }

  /** Queue the callback_query update of a press on bot message `m` carrying `data`. */
  private press(m: StoredMessage, data: string, verb: string): SentUpdate {
    const messageId = m.message_id;
    const id = BigInt.asUintN(63, randomBytes(8).readBigUInt64BE()).toString();
    this.core.callbackQueries.set(id, { answered: false, chatId: this.chat.id });
    this.chat.note(`user ${this.presser.first_name as string} ${verb} #${messageId} [${data}]`);
    const update_id = this.core.updates.push({
      callback_query: {
        id,
        from: this.presser,
        message: this.chat.apiMessage(m),
        chat_instance: String(this.chat.id * 7 + 3),
        data,
      },
    });
    return { update_id, message_id: messageId, callback_query_id: id };
  }

  messages(filter?: MessagesFilter): ChatMessage[] {
    return this.chat.view(filter);
  }

  transcript(): string[] {
    return [...this.chat.log];
  }

  waitFor(pred: (msgs: ChatMessage[]) => boolean, timeoutMs = WAIT_FOR_DEFAULT_MS): Promise<ChatMessage[]> {
    return waitOn(this.chat, () => this.chat.view(), pred, timeoutMs);
  }

  block(): void {
    if (this.chat.type !== "private") throw new Error("emulator: only a private chat can block the bot");
    this.chat.blocked = true;
  }

  unblock(): void {
    this.chat.blocked = false;
  }

  drafts(): Array<{ draft_id: number; text: string }> {
    return [...this.chat.drafts];
  }

  chatActions(): string[] {
    return [...this.chat.actions];
  }
}

/** Creates a user with a private chat (Emulator.user). */
export function createUser(
  core: Core,
  init: { id?: number; first_name?: string; username?: string; language_code?: string } = {},
): ChatUserImpl {
  const id = init.id ?? core.nextUserId++;
  const user: Record<string, unknown> = { id, is_bot: false, first_name: init.first_name ?? `User${id}` };
  if (init.username) user.username = init.username;
  if (init.language_code) user.language_code = init.language_code;
  const info: Record<string, unknown> = { first_name: user.first_name };
  if (init.username) info.username = init.username;
  const chat = core.addChat(new Chat(id, "private", info), init.username);
  return new ChatUserImpl(core, user, chat);
}

/** Telegram's stand-in sender of an anonymous group admin's messages (their `sender_chat` is the group). */
export const GROUP_ANONYMOUS_BOT = { id: 1087968824, is_bot: true, first_name: "Group", username: "GroupAnonymousBot" } as const;
/** Telegram's stand-in sender of a channel's messages in a group (their `sender_chat` is the channel). */
export const CHANNEL_BOT = { id: 136817688, is_bot: true, first_name: "Channel", username: "Channel_Bot" } as const;

/** Creates a group chat (Emulator.group). */
export function createGroup(core: Core, init: { id?: number; title?: string } = {}): Group {
  const id = init.id ?? core.nextGroupId--;
  if (id >= 0) throw new Error("emulator: group ids are negative");
  const title = init.title ?? `Group ${-id}`;
  const chat = core.addChat(new Chat(id, "group", { title }));
  return {
    id,
    title,
    member: (u: ChatUser, status: MemberStatus = "member", opts: { anonymous?: boolean } = {}) => {
      const anonymous = opts.anonymous === true;
      if (anonymous && status === "member") throw new Error("emulator: only the creator or an administrator can remain anonymous");
      chat.members.set(u.id, { user: u.user, status, anonymous });
      // An anonymous admin's messages come from GroupAnonymousBot as the group; their presses as themselves.
      return anonymous ? new ChatUserImpl(core, { ...GROUP_ANONYMOUS_BOT }, chat, chat.apiChat(), u.user) : new ChatUserImpl(core, u.user, chat);
    },
    anonymousAdmin: () => new ChatUserImpl(core, { ...GROUP_ANONYMOUS_BOT }, chat, chat.apiChat()),
    channel: (init: { id?: number; title?: string } = {}) => {
      const channelId = init.id ?? core.nextChannelId--;
      return new ChatUserImpl(core, { ...CHANNEL_BOT }, chat, { id: channelId, title: init.title ?? `Channel ${-channelId}`, type: "channel" });
    },
    messages: (filter?: MessagesFilter) => chat.view(filter),
    transcript: () => [...chat.log],
  };
}
