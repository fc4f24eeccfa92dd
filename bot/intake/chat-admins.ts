/**
 * Whether a member is an admin of a group, from getChatMember (Bot API: ChatMember `status` `creator` or
 * `administrator`), cached per chat and user (issue 11 item 6). A handler never waits on the call: the
 * answer it needs is taken from the cache, or the guarded action runs in the background once
 * getChatMember answered (a stalled or 429-held call must not hold the update batch — polling confirms
 * a batch only after its handlers return). A failed or timed-out check counts as "not an admin" for that
 * action and is not cached; the member can try again.
 */
import type { Api } from "grammy";
import type { Logger } from "../log.ts";
import type { Services } from "../services.ts";
import type { Verdict } from "./sender.ts";

/** How long an answer of getChatMember is trusted, ms (an admin removed meanwhile keeps the rights that long). */
export const ADMIN_CACHE_MS = 10 * 60_000;
/** Longest a getChatMember check (with auto-retry's waits) may take before it counts as "not an admin", ms. */
export const ADMIN_CHECK_BOUND_MS = 10_000;
/** Most cached answers; the oldest go first. */
export const ADMIN_CACHE_MAX = 10_000;

/** getChatMember answers, cached. */
export class ChatAdmins {
  private readonly cache = new Map<string, { admin: boolean; anonymous: boolean; until: number }>();

  /**
   * @param api the bot's Api (getChatMember carries a chat_id: a 429 on it holds that chat, bot/outbox/holds.ts)
   * @param now clock, epoch ms
   */
  constructor(
    private readonly api: Pick<Api, "getChatMember">,
    private readonly log: Logger,
    private readonly now: () => number,
  ) {}

  /** The cached answer for `userId` in `chatId`, or undefined when none is fresh. */
  cached(chatId: number, userId: number): boolean | undefined {
    return this.fresh(chatId, userId)?.admin;
  }

  /**
   * Whether the cached answer says `userId` is an administrator of `chatId` who remains anonymous (Bot API
   * ChatMemberAdministrator `is_anonymous`): their messages in the group come from GroupAnonymousBot with
   * `sender_chat` = the group, while their button presses carry their own `from`. False when no fresh
   * answer is cached (ask {@link check} first).
   */
  anonymous(chatId: number, userId: number): boolean {
    return this.fresh(chatId, userId)?.anonymous ?? false;
  }

  private fresh(chatId: number, userId: number): { admin: boolean; anonymous: boolean } | undefined {
    const key = `${chatId}:${userId}`;
    const hit = this.cache.get(key);
    if (!hit) return undefined;
    if (hit.until > this.now()) return hit;
    this.cache.delete(key);
    return undefined;
  }

  /**
   * Ask getChatMember whether `userId` is the creator or an administrator of `chatId` (bounded by
   * {@link ADMIN_CHECK_BOUND_MS}); the answer is cached, a failure is false and not cached.
   */
  async check(chatId: number, userId: number): Promise<boolean> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const bound = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${ADMIN_CHECK_BOUND_MS} ms`)), ADMIN_CHECK_BOUND_MS);
      });
      const member = await Promise.race([this.api.getChatMember(chatId, userId, AbortSignal.timeout(ADMIN_CHECK_BOUND_MS) as never), bound]);
      const admin = member.status === "creator" || member.status === "administrator";
      this.remember(`${chatId}:${userId}`, admin, admin && "is_anonymous" in member && member.is_anonymous === true);
      return admin;
    } catch (err) {
      this.log.warn({ chat_id: chatId, user_id: userId, err: (err as Error).message }, "getChatMember failed; the member is treated as not an admin for this command");
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Run `act(allowed)` for a rule's `verdict`: at once for yes/no and for a cached answer, else in the
   * background after {@link check} (`services.background`: shutdown waits for it, bounded).
   * @param what names the task in a failure's log line
   */
  async whenKnown(services: Pick<Services, "background">, chatId: number, userId: number, verdict: Verdict, act: (allowed: boolean) => unknown, what: string): Promise<void> {
    if (verdict !== "ask") {
      await act(verdict === "yes");
      return;
    }
    const hit = this.cached(chatId, userId);
    if (hit !== undefined) {
      await act(hit);
      return;
    }
    services.background(async () => act(await this.check(chatId, userId)), what);
  }

  private remember(key: string, admin: boolean, anonymous: boolean): void {
    this.cache.delete(key);
    this.cache.set(key, { admin, anonymous, until: this.now() + ADMIN_CACHE_MS });
    if (this.cache.size > ADMIN_CACHE_MAX) this.cache.delete(this.cache.keys().next().value!);
  }
}
