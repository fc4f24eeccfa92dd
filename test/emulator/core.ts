/**
 * The emulator's shared state (bot, chats, files, updates, limits, call log) and the per-request context
 * that method handlers receive.
 */
import { ApiError, badRequest, E, tooManyRequests } from "./api-error.ts";
import type { Args } from "./args.ts";
import { BotInstance } from "./bot-instance.ts";
import { Chat } from "./chats.ts";
import { FileStore } from "./file-store.ts";
import type { FilePart } from "./multipart.ts";
import { RateLimiter, type RateClass } from "./rate-limiter.ts";
import type { ApiCall, EmulatorOptions, FailOptions, InjectedError } from "./types.ts";
import { UpdateQueue, type WebhookReplyExecutor } from "./update-queue.ts";

/** Default bot token (EmulatorOptions.token). */
export const DEFAULT_TOKEN = "123456789:AAE-test-token-docket-emulator_xyz";

/** A successful answer that also carries a description (e.g. setWebhook's "Webhook was set"). */
export class OkWithDescription {
  constructor(
    readonly result: unknown,
    readonly description: string,
  ) {}
}

/** Per-request context passed to method handlers. */
export interface Ctx {
  core: Core;
  args: Args;
  /** Multipart file parts by part name. */
  files: Map<string, FilePart>;
  /** Request time, epoch ms. */
  now: number;
  /** Aborted when the client disconnects. */
  signal: AbortSignal;
  /** Chat the request addressed, set once resolved (call log). */
  chatId?: number;
}

/** A Bot API method handler: returns the `result` or throws ApiError. */
export type Handler = (c: Ctx) => unknown;

interface Failure {
  method: string;
  error: InjectedError;
  times: number;
  after: number;
  chatId?: number;
  match?: FailOptions["match"];
}

/** Emulator state. */
export class Core {
  readonly token: string;
  readonly mode: "cloud" | "local";
  readonly localDir?: string;
  readonly botUser: Record<string, unknown>;
  readonly chats = new Map<number, Chat>();
  readonly usernames = new Map<string, number>();
  readonly files: FileStore;
  readonly updates: UpdateQueue;
  readonly limiter: RateLimiter;
  readonly calls: ApiCall[] = [];
  readonly failures: Failure[] = [];
  /** Requests to hold unanswered (Emulator.stallNext): until the client gives up. */
  readonly stalls: Array<{ method: string; times: number; chatId?: number }> = [];
  readonly callbackQueries = new Map<string, { answered: boolean; chatId: number }>();
  commands: unknown[] = [];
  /** Launch, close and logOut state (botapi-facts.md §4). */
  readonly instance: BotInstance;
  lastSetWebhookAt = 0;
  nextUserId = 700_000_001;
  nextGroupId = -4_000_000_001;
  nextChannelId = -1_002_000_000_001;
  /** Next media_group_id of a bot album (Bot API: a string; TDLib's media_album_id is a 64-bit number). */
  nextMediaGroupId = 13_800_000_000_000_001n;

  constructor(
    readonly opts: EmulatorOptions,
    webhookReply: WebhookReplyExecutor,
  ) {
    this.token = opts.token ?? DEFAULT_TOKEN;
    this.mode = opts.mode ?? "cloud";
    if (this.mode === "local") {
      if (!opts.localDir) throw new Error("emulator: local mode needs localDir");
      this.localDir = opts.localDir;
    }
    const idFromToken = Number(this.token.split(":")[0]);
    this.botUser = {
      id: opts.bot?.id ?? (Number.isSafeInteger(idFromToken) && idFromToken > 0 ? idFromToken : 123456789),
      is_bot: true,
      first_name: opts.bot?.first_name ?? "Docket",
      username: opts.bot?.username ?? "docket_test_bot",
    };
    this.files = new FileStore({
      mode: this.mode,
      token: this.token,
      ...(this.localDir ? { localDir: this.localDir } : {}),
      ...(opts.localOwner ? { localOwner: opts.localOwner } : {}),
      fileLinkTtlMs: opts.fileLinkTtlMs ?? 3_600_000,
    });
    this.updates = new UpdateQueue(opts.firstUpdateId ?? 1000, webhookReply, opts.repeatPollRule ?? true);
    this.limiter = new RateLimiter(opts.rateLimits);
    this.instance = new BotInstance(this.now());
  }

  /** Adds a chat (user or group). @throws Error when the id is taken. */
  addChat(chat: Chat, username?: string): Chat {
    if (this.chats.has(chat.id)) throw new Error(`emulator: chat ${chat.id} exists`);
    this.chats.set(chat.id, chat);
    if (username) this.usernames.set(username.toLowerCase(), chat.id);
    return chat;
  }

  /** Numeric chat id a chat_id argument names, if it can be resolved (numbers or "@username"). */
  chatIdOf(v: string | undefined): number | undefined {
    if (v === undefined || v === "") return undefined;
    if (/^-?\d+$/.test(v.trim())) return Number(v.trim());
    if (v.startsWith("@")) return this.usernames.get(v.slice(1).toLowerCase());
    return undefined;
  }

  /**
   * Resolves `chat_id` of a request to a known chat (Bot API errors: "chat_id is empty", "chat not found";
   * 403 "bot was blocked by the user" when `write` and the user blocked the bot).
   */
  chatFor(c: Ctx, write: boolean): Chat {
    const raw = c.args.str("chat_id");
    if (raw === undefined || raw === "") throw badRequest(E.chatIdEmpty);
    const id = this.chatIdOf(raw);
    const chat = id === undefined ? undefined : this.chats.get(id);
    if (!chat) throw badRequest(E.chatNotFound);
    c.chatId = chat.id;
    if (write && chat.blocked) throw new ApiError(403, E.blocked);
    return chat;
  }

  /**
   * Draws `weight` units (an album: one per message) of the given rate budget for a chat.
   * @throws ApiError 429 "Too Many Requests: retry after N".
   */
  rate(c: Ctx, cls: RateClass, chat: Chat, weight = 1): void {
    const wait = this.limiter.acquire(cls, chat.id, c.now, weight);
    if (wait > 0) throw tooManyRequests(wait);
  }

  /** Registers an injected failure (Emulator.failNext). */
  addFailure(method: string, error: InjectedError, opts: FailOptions = {}): void {
    this.failures.push({
      method: method.toLowerCase(),
      error,
      times: opts.times ?? 1,
      after: opts.after ?? 0,
      ...(opts.chatId !== undefined ? { chatId: opts.chatId } : {}),
      ...(opts.match ? { match: opts.match } : {}),
    });
  }

  /** True when this request is to stall (Emulator.stallNext), consuming one use. */
  takeStall(method: string, chatId: number | undefined): boolean {
    const lower = method.toLowerCase();
    const i = this.stalls.findIndex((s) => (s.method === lower || s.method === "*") && (s.chatId === undefined || s.chatId === chatId));
    if (i < 0) return false;
    if (--this.stalls[i]!.times <= 0) this.stalls.splice(i, 1);
    return true;
  }

  /** The injected failure matching this request, consuming one use; undefined if none. */
  takeFailure(method: string, params: Record<string, unknown>, chatId: number | undefined): InjectedError | undefined {
    const lower = method.toLowerCase();
    const i = this.failures.findIndex(
      (f) =>
        (f.method === lower || f.method === "*") &&
        (f.chatId === undefined || f.chatId === chatId) &&
        (!f.match || f.match(params)),
    );
    if (i < 0) return undefined;
    const f = this.failures[i]!;
    if (f.after > 0) {
      f.after--;
      return undefined;
    }
    if (--f.times <= 0) this.failures.splice(i, 1);
    return f.error;
  }

  /** The emulator's clock (EmulatorOptions.now, default Date.now), epoch ms. */
  now(): number {
    return this.opts.now ? this.opts.now() : Date.now();
  }

  /** Message date for "now", Unix seconds. */
  date(now = this.now()): number {
    return Math.floor(now / 1000);
  }
}
