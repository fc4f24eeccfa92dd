/**
 * Chat holds known to the whole bot: after Telegram answers 429 for a chat, no
 * request goes to that chat until `retry_after` has passed (field case BR-06).
 * The outbox holds its own machine; this registry lets calls outside it (result
 * uploads) honour the same hold. Fed by the outbox's ChatHold events and by an
 * API transformer that sees every raw 429 answer with a `chat_id`.
 */
import type { Transformer } from "grammy";

/** Per-chat hold deadlines (epoch ms). */
export class ChatHolds {
  private readonly until = new Map<string, number>();

  /**
   * @param now clock, epoch ms
   * @param onHold called once per hold period: when a 429 puts a chat on hold that was not held
   *   (the same hold reported again by auto-retry, the outbox and the upload path counts once)
   */
  constructor(
    private readonly now: () => number = Date.now,
    private readonly onHold?: (chatId: string, untilMs: number) => void,
  ) {}

  /** Record that `chatId` is on hold until `untilMs` (epoch ms); keeps the later deadline. */
  note(chatId: number | string, untilMs: number): void {
    const key = String(chatId);
    const wasHeld = this.heldUntil(key) > 0;
    if ((this.until.get(key) ?? 0) < untilMs) this.until.set(key, untilMs);
    if (!wasHeld && untilMs > this.now()) this.onHold?.(key, untilMs);
  }

  /** Epoch ms until which `chatId` is held, or 0. */
  heldUntil(chatId: number | string): number {
    const t = this.until.get(String(chatId)) ?? 0;
    if (t <= this.now()) this.until.delete(String(chatId));
    return t > this.now() ? t : 0;
  }

  /** Resolve once `chatId` is not on hold (immediately when it is not). */
  async wait(chatId: number | string, signal?: AbortSignal): Promise<void> {
    for (let t = this.heldUntil(chatId); t > 0; t = this.heldUntil(chatId)) {
      if (signal?.aborted) return;
      await Bun.sleep(Math.max(1, t - this.now()));
    }
  }

  /** An API transformer that records every 429 answered for a request with a `chat_id`. */
  transformer(): Transformer {
    return async (prev, method, payload, signal) => {
      const res = await prev(method, payload, signal);
      const chatId = (payload as { chat_id?: number | string } | undefined)?.chat_id;
      if (!res.ok && res.error_code === 429 && chatId !== undefined) {
        this.note(chatId, this.now() + (res.parameters?.retry_after ?? 1) * 1000);
      }
      return res;
    };
  }
}
