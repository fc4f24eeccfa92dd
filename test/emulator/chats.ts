/**
 * Chats and their messages as the emulator stores them, and the Bot API Message objects built from them
 * (field order like TBA `JsonMessage::store`: message_id, from, sender_chat, chat, date, edit_date,
 * reply_to_message, media_group_id, content, reply_markup), and the members of a group with their status.
 */
import type { ChatMessage, DocumentInfo, MessagesFilter, PhotoSizeInfo } from "./types.ts";
import type { Entity } from "./entities.ts";

/** A member's status as getChatMember reports it (Bot API ChatMember). */
export type MemberStatus = "creator" | "administrator" | "member";

/** One stored message. */
export interface StoredMessage {
  message_id: number;
  from: "bot" | "user";
  /** Sender's Bot API User object. */
  sender: Record<string, unknown>;
  /** Bot API `sender_chat`: the group itself (an anonymous admin) or a channel (a channel post, a member posting as their channel). */
  sender_chat?: Record<string, unknown>;
  /** Unix seconds. */
  date: number;
  edit_date?: number;
  text?: string;
  entities?: Entity[];
  caption?: string;
  caption_entities?: Entity[];
  document?: DocumentInfo;
  photo?: PhotoSizeInfo[];
  reply_markup?: unknown;
  reply_to?: number;
  media_group_id?: string;
  edits: number;
  deleted: boolean;
}

/** A chat (private or group) with its history and test-side logs. */
export class Chat {
  readonly messages: StoredMessage[] = [];
  private readonly byId = new Map<number, StoredMessage>();
  private nextMessageId = 1;
  blocked = false;
  readonly log: string[] = [];
  readonly drafts: Array<{ draft_id: number; text: string }> = [];
  readonly actions: string[] = [];
  /** Groups: members by user id with their Bot API ChatMember status (getChatMember; others are `left`). */
  readonly members = new Map<number, { user: Record<string, unknown>; status: MemberStatus; anonymous?: boolean }>();
  private readonly listeners = new Set<() => void>();

  /**
   * @param id chat id (private: the user's id; groups: < 0).
   * @param type Bot API chat type.
   * @param info Bot API Chat fields besides id/type (first_name/username or title).
   */
  constructor(
    readonly id: number,
    readonly type: "private" | "group",
    readonly info: Record<string, unknown>,
  ) {}

  /** The Bot API Chat object (`{id, first_name, last_name?, username?, type}` or `{id, title, type}`). */
  apiChat(): Record<string, unknown> {
    return { id: this.id, ...this.info, type: this.type };
  }

  /** Stores a new message with the next message_id and notifies waiters. */
  add(m: Omit<StoredMessage, "message_id" | "edits" | "deleted">): StoredMessage {
    const msg: StoredMessage = { message_id: this.nextMessageId++, edits: 0, deleted: false, ...m };
    this.messages.push(msg);
    this.byId.set(msg.message_id, msg);
    this.changed();
    return msg;
  }

  /** A message by id, deleted ones included. */
  get(messageId: number): StoredMessage | undefined {
    return this.byId.get(messageId);
  }

  /** Appends a transcript line and wakes waitFor() callers. */
  note(line: string): void {
    this.log.push(line);
    this.changed();
  }

  /** Wakes waitFor() callers after a change. */
  changed(): void {
    for (const l of [...this.listeners]) l();
  }

  /** Registers a change listener; returns its remover. */
  listen(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Test view of the messages. */
  view(filter: MessagesFilter = {}): ChatMessage[] {
    return this.messages
      .filter((m) => (filter.includeDeleted || !m.deleted) && (filter.includeUser || m.from === "bot"))
      .map((m) => {
        const v: ChatMessage = { message_id: m.message_id, from: m.from, edits: m.edits, deleted: m.deleted, date: m.date };
        if (m.text !== undefined) v.text = m.text;
        if (m.caption !== undefined) v.caption = m.caption;
        const ents = m.text !== undefined ? m.entities : m.caption_entities;
        if (ents && ents.length > 0) v.entities = ents;
        if (m.reply_markup !== undefined) v.reply_markup = m.reply_markup;
        if (m.document) v.document = m.document;
        if (m.photo) v.photo = m.photo;
        if (m.reply_to !== undefined) v.reply_to = m.reply_to;
        if (m.media_group_id !== undefined) v.media_group_id = m.media_group_id;
        return v;
      });
  }

  /** Bot API Message object for a stored message (reply_to_message one level deep, like Telegram). */
  apiMessage(m: StoredMessage, depth = 0): Record<string, unknown> {
    const o: Record<string, unknown> = { message_id: m.message_id, from: m.sender };
    if (m.sender_chat) o.sender_chat = m.sender_chat;
    o.chat = this.apiChat();
    o.date = m.date;
    if (m.edit_date !== undefined) o.edit_date = m.edit_date;
    if (m.reply_to !== undefined && depth === 0) {
      const r = this.get(m.reply_to);
      if (r && !r.deleted) o.reply_to_message = this.apiMessage(r, 1);
    }
    if (m.media_group_id !== undefined) o.media_group_id = m.media_group_id;
    if (m.text !== undefined) {
      o.text = m.text;
      if (m.entities && m.entities.length > 0) o.entities = m.entities;
    }
    if (m.document) o.document = m.document;
    if (m.photo) o.photo = m.photo;
    if (m.caption !== undefined && m.caption !== "") {
      o.caption = m.caption;
      if (m.caption_entities && m.caption_entities.length > 0) o.caption_entities = m.caption_entities;
    }
    if (m.reply_markup !== undefined && depth === 0) o.reply_markup = m.reply_markup;
    return o;
  }
}

/** Short one-line summary of a message for transcripts. */
export function summarize(m: StoredMessage): string {
  const parts: string[] = [];
  if (m.document) parts.push(`[document ${m.document.file_name ?? "(no name)"} ${m.document.file_size ?? "?"} B]`);
  if (m.photo) {
    const big = m.photo.at(-1)!;
    parts.push(`[photo ${big.width}x${big.height}]`);
  }
  const body = m.text ?? m.caption;
  if (body) parts.push(body.length > 200 ? `${body.slice(0, 200)}…` : body);
  const kb = m.reply_markup as { inline_keyboard?: Array<Array<{ text: string }>> } | undefined;
  if (kb?.inline_keyboard) parts.push(`{${kb.inline_keyboard.flat().map((b) => b.text).join(" | ")}}`);
  return parts.join(" ");
}
