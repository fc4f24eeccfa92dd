/**
 * Public types of docket's Bot API emulator (test/emulator). The emulator is a strict fake of
 * the Telegram Bot API (cloud `api.telegram.org` or a `--local` telegram-bot-api server) served
 * over real HTTP on 127.0.0.1, so real grammY `Api`/`Bot` objects talk to it unchanged.
 * Rules and exact strings: /work/shared/docs/botapi-facts.md ("What a fake server must emulate").
 */

/** Rate limits the emulator enforces with 429 "Too Many Requests: retry after N" (Bot API FAQ limits). */
export interface RateLimits {
  /** Token-bucket capacity per chat over sends and edits (sendMessage, sendDocument, sendPhoto, editMessage*, copy/forward…). Default 3. */
  perChatBurst: number;
  /** Refill rate of the per-chat bucket, messages per second. Default 1 (FAQ: ~1 msg/s per chat). */
  perChatPerSec: number;
  /** Sliding 60 s window of sends + edits in chats with id < 0 (groups). Default 20 (FAQ: 20 msgs/min per group). */
  groupPerMin: number;
  /** Length of the group window, ms. Default 60 000; tests shrink it to run the group rule scaled down in seconds. */
  groupWindowMs?: number;
  /** Global token bucket across all chats (capacity = rate), per second. Default 30 (FAQ: ~30 msgs/s bulk). */
  globalPerSec: number;
  /**
   * Per-chat token bucket for sendChatAction (capacity = rate), per second. Default 10: far above what a
   * sane bot needs (one action per ~5 s), so only a runaway loop trips it. 0 disables this limit.
   */
  chatActionPerSec?: number;
  /**
   * Per-chat token bucket for sendMessageDraft (capacity = rate), per second. Telegram's draft limits are
   * UNCONFIRMED (botapi-facts §6), so the default is 0 = unlimited; set it to test a throttled stream.
   */
  draftPerSec?: number;
}

/** Options for {@link startEmulator}. */
export interface EmulatorOptions {
  /** Bot token; the bot id is the part before ":". Default "123456789:AAE-test-token-docket-emulator_xyz". */
  token?: string;
  /** "cloud" = api.telegram.org rules (20 MiB getFile, 50 MiB upload, serves /file/bot…); "local" = `--local` server. Default "cloud". */
  mode?: "cloud" | "local";
  /** Local mode: like telegram-bot-api `--dir`; files land at `<localDir>/<token>/documents/file_N.ext` (0640, dirs 0750). Required for local. */
  localDir?: string;
  /**
   * Local mode: uid/gid that owns every file and directory getFile writes, like the server running as its own user
   * (`telegram-bot-api`, uid/gid 101 in the aiogram image). Needs root. Default: whoever runs the emulator.
   */
  localOwner?: { uid: number; gid: number };
  /** TCP port on 127.0.0.1; 0 (default) picks a free one. */
  port?: number;
  /** Cloud: a `/file/bot<token>/<file_path>` link answers 404 this many ms after the getFile that issued it. Default 3_600_000. */
  fileLinkTtlMs?: number;
  /**
   * The emulator's clock, epoch ms (default `Date.now`). It decides time windows: rate-limit buckets and holds,
   * file-link expiry, the getUpdates repeat-poll rule, the setWebhook 1/s rule, message dates, `calls[].at`.
   * Tests of such a window pass a manual clock and step it, so a loaded machine cannot move them across
   * a boundary. Real waits (long-poll timeouts, getFileDelayMs, webhook retries) stay on real timers.
   */
  now?: () => number;
  /** Delay (ms) before getFile answers, like a local server that answers only once the file is on disk. Default 0. */
  getFileDelayMs?: number;
  /** Rate limits; `false` disables all of them. Missing fields take the defaults of {@link RateLimits}. */
  rateLimits?: Partial<RateLimits> | false;
  /** The bot's own user (getMe). Defaults: id from the token, username "docket_test_bot", first_name "Docket". */
  bot?: { id?: number; username?: string; first_name?: string };
  /**
   * TBA's anti-busy-loop rule for getUpdates: the same offset again within 3 s with timeout < 3 waits up to 3 s,
   * within 0.5 s also gets limit 1. Default true (like Telegram). Note: grammY's `bot.stop()` sends such a poll, so
   * stopping right after a poll can take up to 3 s; pass false in tests that stop bots often.
   */
  repeatPollRule?: boolean;
  /** First update_id handed out (must be ≥ 1). Default 1000. */
  firstUpdateId?: number;
  /**
   * Cloud mode only: accept `http://` webhook URLs on any port (tests on 127.0.0.1). Default false: cloud
   * setWebhook refuses non-HTTPS URLs and ports other than 443/80/88/8443 like Telegram. Local mode always accepts.
   */
  allowHttpWebhook?: boolean;
}

/** `ApiCall.method` of a file download (`/file/bot<token>/<file_path>`); no Bot API method starts with "/". */
export const FILE_DOWNLOAD = "/file";

/**
 * One recorded HTTP request to a Bot API method or to the file route (never contains the token).
 * File downloads are recorded as method {@link FILE_DOWNLOAD} with `params.file_path` (the part after the
 * token, decoded; the token itself is dropped) and `params.fault` when an injected fault shaped the body.
 */
export interface ApiCall {
  /** Canonical method name as Telegram spells it (e.g. "sendMessage"), whatever case the client used; unknown methods as sent; "/file" for downloads. */
  method: string;
  /** Request parameters as received (strings for form/query bodies, typed for JSON); file parts replaced by `{ file_name, size }`. */
  params: Record<string, unknown>;
  /** Numeric chat id the call addressed, when it had a resolvable chat_id. */
  chatId?: number;
  /** Arrival time, epoch ms. */
  at: number;
  /** HTTP status of the answer (= error_code for errors). */
  status: number;
  /** Envelope `ok`. */
  ok: boolean;
  /** Envelope description (errors, and some `ok` answers such as "Webhook was set"). */
  description?: string;
  /** `parameters.retry_after` of a 429, seconds. */
  retryAfter?: number;
}

/**
 * A fault of one cloud file download, for tests of timeouts and size checks ({@link Emulator.faultFileDownload}).
 * - `stall`: sends `afterBytes` (default 0) bytes, then nothing; the connection stays open until the client gives up.
 * - `reset`: sends `afterBytes` (default 0) bytes, then drops the connection (the client sees a network error).
 * - `end`: sends `afterBytes` bytes, then ends the body cleanly (shorter than the file).
 * - `trickle`: sends the whole file, `chunkBytes` every `everyMs` ms.
 */
export type FileDownloadFault =
  | { kind: "stall"; afterBytes?: number }
  | { kind: "reset"; afterBytes?: number }
  | { kind: "end"; afterBytes: number }
  | { kind: "trickle"; chunkBytes: number; everyMs: number };

/**
 * What a local-mode getFile puts at its `file_path` instead of the file ({@link Emulator.faultLocalFile}); getFile
 * still announces the document's `file_size`:
 * - `fifo`, `device` (a character device 1:3, like /dev/null; needs root), `socket` (a listening Unix socket),
 *   `directory`: a path that is not a regular file;
 * - `symlink`: a symlink to `target` (e.g. a file outside the server's dir);
 * - `deleted`: the file is written and removed before getFile answers (the server's cleanup got there first);
 * - `resized`: the file is `by` bytes longer (> 0) or shorter (< 0) than announced.
 */
export type LocalFileFault =
  | { kind: "fifo" }
  | { kind: "device" }
  | { kind: "socket" }
  | { kind: "directory" }
  | { kind: "symlink"; target: string }
  | { kind: "deleted" }
  | { kind: "resized"; by: number };

/** An injected API error (see {@link Emulator.failNext}). */
export interface InjectedError {
  /** HTTP status and `error_code`. */
  error_code: number;
  /** Full description, e.g. "Bad Request: wrong file_id or the file is temporarily unavailable". */
  description: string;
  /** Seconds; adds `parameters.retry_after` and a `Retry-After` header. A 429 with it also holds the chat for that long. */
  retry_after?: number;
}

/** Filters for {@link Emulator.failNext}. */
export interface FailOptions {
  /** How many matching requests fail (default 1; Infinity = every one). */
  times?: number;
  /** Let this many matching requests through first (e.g. after: 2 fails the 3rd edit; BR-06). Default 0. */
  after?: number;
  /** Only requests addressing this chat. */
  chatId?: number;
  /** Only requests whose parameters satisfy this predicate. */
  match?: (params: Record<string, unknown>) => boolean;
}

/** What a user-side send produced. */
export interface SentUpdate {
  /** update_id of the queued update. */
  update_id: number;
  /** message_id of the user's message (for callback queries: the pressed bot message). */
  message_id: number;
  /** file_id of the document, or of the largest photo size. */
  file_id?: string;
  /** file_unique_id matching {@link file_id}. */
  file_unique_id?: string;
  /** callback_query id (pressButton and pressForged). */
  callback_query_id?: string;
}

/** Document as shown in a message (Bot API Document without thumbnails). */
export interface DocumentInfo {
  file_id: string;
  file_unique_id: string;
  file_name?: string;
  mime_type?: string;
  /** Bytes; omitted only when a user message declared it as unknown. */
  file_size?: number;
}

/** Bot API PhotoSize. */
export interface PhotoSizeInfo {
  file_id: string;
  file_unique_id: string;
  width: number;
  height: number;
  file_size?: number;
}

/** A message as the chat shows it now (test view, not the Bot API object). */
export interface ChatMessage {
  message_id: number;
  from: "bot" | "user";
  text?: string;
  caption?: string;
  /** `entities` (text) or `caption_entities` (media). */
  entities?: unknown[];
  reply_markup?: unknown;
  document?: DocumentInfo;
  photo?: PhotoSizeInfo[];
  /** message_id this one replies to. */
  reply_to?: number;
  /** The album it belongs to (sendMediaGroup of 2 or more). */
  media_group_id?: string;
  /** Number of successful edits. */
  edits: number;
  deleted: boolean;
  /** Unix seconds. */
  date: number;
}

/** Options for {@link ChatUser.messages}. */
export interface MessagesFilter {
  /** Include deleted messages (default false). */
  includeDeleted?: boolean;
  /** Include the user's own messages (default false: bot messages only). */
  includeUser?: boolean;
}

/** Input of {@link ChatUser.sendDocument}. Exactly one of `path`/`bytes`. */
export interface UserDocument {
  /** File on disk; read lazily (a large sparse file is never loaded into memory). */
  path?: string;
  bytes?: Uint8Array;
  /** Default: basename of `path`, else "document.bin"; `null` omits the field (BR-08). */
  file_name?: string | null;
  /** Default: guessed from file_name's extension (application/octet-stream otherwise); `null` omits it. */
  mime_type?: string | null;
  /** Declared size; default = real size; `null` omits the field; larger than the bytes = a lying size (BR-01). */
  file_size?: number | null;
  caption?: string;
  /** Shared media_group_id (albums arrive as separate updates). */
  media_group_id?: string;
}

/** Input of {@link ChatUser.sendPhoto}. Exactly one of `path`/`bytes` (an image sharp can read). */
export interface UserPhoto {
  path?: string;
  bytes?: Uint8Array;
  /** Target [width, height] sizes, ascending; default: Telegram-like 90/320/800/1280 boxes below the real size, plus the real size (≤ 2560). */
  sizes?: Array<[number, number]>;
  caption?: string;
  /** Shared media_group_id (an album of photos: each photo arrives as its own update). */
  media_group_id?: string;
}

/** A user in a chat with the bot (private chat, or a group member). */
export interface ChatUser {
  /** Telegram user id. */
  readonly id: number;
  /** Chat the user's messages go to (= id in private chats, < 0 in groups). */
  readonly chatId: number;
  readonly languageCode?: string;
  /** The Bot API User object of this user. */
  readonly user: Record<string, unknown>;
  /** Sends a document message (queued as an update). */
  sendDocument(doc: UserDocument): Promise<SentUpdate>;
  /** Sends a photo message: real JPEG re-encodes made with sharp, smallest first, largest last. */
  sendPhoto(src: UserPhoto): Promise<SentUpdate>;
  /** Sends a text message; leading /commands get a bot_command entity. */
  sendText(text: string): Promise<SentUpdate>;
  /** Presses an inline button (must exist on that bot message with this callback_data); queues a callback_query update. */
  pressButton(messageId: number, data: string): Promise<SentUpdate>;
  /**
   * A press on bot message `messageId` of this chat carrying `data` that no button of it has — what a
   * modified client can send (Bot API CallbackQuery.data: "the message originated the query can contain
   * no callback buttons with this data"); queues a callback_query update.
   */
  pressForged(messageId: number, data: string): Promise<SentUpdate>;
  /** Messages the chat shows now, in order (bot messages only unless asked). */
  messages(filter?: MessagesFilter): ChatMessage[];
  /** Human-readable chat log: user sends, bot sends, edits, deletes, drafts, chat actions. */
  transcript(): string[];
  /** Resolves with messages() once `pred(messages())` holds; rejects after timeoutMs (default 15 000) with the transcript. */
  waitFor(pred: (msgs: ChatMessage[]) => boolean, timeoutMs?: number): Promise<ChatMessage[]>;
  /** Marks the user as having blocked the bot (sends answer 403 "Forbidden: bot was blocked by the user"). Private chats only. */
  block(): void;
  /** Undoes {@link block}. */
  unblock(): void;
  /** sendMessageDraft texts received for this chat, in order. */
  drafts(): Array<{ draft_id: number; text: string }>;
  /** sendChatAction actions received for this chat, in order. */
  chatActions(): string[];
}

/** A group chat (id < 0). */
export interface Group {
  readonly id: number;
  readonly title: string;
  /**
   * A member whose messages go to this group chat, with their status for getChatMember (default
   * `member`; users who were never made members are `left`). `anonymous`: a creator or administrator who
   * remains anonymous — their messages come from GroupAnonymousBot with `sender_chat` = this group, their
   * button presses from themselves (`id` is theirs), getChatMember says `is_anonymous: true`.
   */
  member(user: ChatUser, status?: "creator" | "administrator" | "member", opts?: { anonymous?: boolean }): ChatUser;
  /** An anonymous admin: messages `from` GroupAnonymousBot (1087968824) with `sender_chat` = this group. */
  anonymousAdmin(): ChatUser;
  /** A channel posting here (a linked channel's post, a member posting as their channel): `from` Channel_Bot (136817688), `sender_chat` = the channel. */
  channel(init?: { id?: number; title?: string }): ChatUser;
  /** Bot messages in the group (see {@link ChatUser.messages}). */
  messages(filter?: MessagesFilter): ChatMessage[];
  transcript(): string[];
}

/** A running emulator. */
export interface Emulator {
  /** "http://127.0.0.1:<port>" (no trailing slash; grammY `apiRoot`). */
  readonly apiRoot: string;
  readonly token: string;
  readonly mode: "cloud" | "local";
  readonly localDir?: string;
  /** The bot's User object (getMe result). */
  readonly botInfo: Record<string, unknown>;
  /** Creates a user with a private chat (chat.id === user.id); unique ids if omitted. */
  user(init?: { id?: number; first_name?: string; username?: string; language_code?: string }): ChatUser;
  /** Creates a group (id < 0, unique if omitted). */
  group(init?: { id?: number; title?: string }): Group;
  /** Injects API errors for the next matching calls of `method` (case-insensitive; "*" = any method). */
  failNext(method: string, error: InjectedError, opts?: FailOptions): void;
  /**
   * The next `times` (default 1) calls of `method` (optionally only to `chatId`) get no answer at all: the
   * connection stays open until the client gives up (a stalled request). Recorded with status 499.
   */
  stallNext(method: string, opts?: { times?: number; chatId?: number }): void;
  /** Next `times` (default 1) cloud file downloads answer 404 {"ok":false,"error_code":404,"description":"Not Found"}. */
  failFileDownload(times?: number, status?: 404): void;
  /**
   * The next `times` (default 1) cloud downloads that would be served whole get `fault` instead (stall, dropped
   * connection, short body, trickle). A test option only: without it every download is served whole.
   */
  faultFileDownload(fault: FileDownloadFault, times?: number): void;
  /**
   * Local mode: the next `times` (default 1) getFile answers name a fresh path holding `fault` instead of the file
   * (a FIFO, device, socket, directory, symlink, a removed file, a file of another size). Later getFiles are normal.
   */
  faultLocalFile(fault: LocalFileFault, times?: number): void;
  /**
   * The next getFile of a known file waits until `release()` (a server still downloading the file; both modes).
   * `arrived` resolves once that call is in. Holds queue up: each one takes the next getFile.
   */
  holdGetFile(): { arrived: Promise<void>; release: () => void };
  /** Every file link issued so far answers 404 from now on (BR-02 b); a later getFile issues a new path. */
  expireFileLinks(): void;
  /** Re-queues an already confirmed update; it is served once even though its id is below the confirmed offset. */
  redeliver(updateId: number): void;
  /** Every request in arrival order. */
  readonly calls: readonly ApiCall[];
  /** Number of calls of `method` (case-insensitive), optionally to one chat. */
  count(method: string, chatId?: number): number;
  /** Bytes of a file the bot uploaded (by any file_id of it); undefined for unknown ids or user files. */
  uploaded(fileId: string): Uint8Array | undefined;
  /** Replaces the rate limits (defaults fill missing fields); `false` disables them. Resets the buckets. */
  setRateLimits(r: Partial<RateLimits> | false): void;
  /** Updates queued and not yet confirmed. */
  pendingUpdates(): number;
  /** Updates POSTed to the webhook so far (2xx answers), in order. */
  readonly webhookDeliveries: readonly unknown[];
  /** Stops the server, ends pending long polls and webhook retries. */
  close(): Promise<void>;
}
