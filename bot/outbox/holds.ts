/**
 * A grammY API transformer that reports every 429 answered to a call with a `chat_id` to the
 * outbox, so a flood wait met outside it (a plain Api call, e.g. getChatMember) holds the chat's
 * sends, edits and uploads too: one hold per chat (issue 11 item 1; field case BR-06).
 */
import type { Api, Transformer } from "grammy";
import type { Outbox } from "./runtime.ts";

/**
 * Install on a plain Api (`api.config.use(chatHoldsTransformer(outbox, api))`) *before* an
 * auto-retry transformer, so it sees each raw 429 — also those auto-retry then waits out.
 * retry_after defaults to 1 s when Telegram gives none.
 */
export function chatHoldsTransformer(outbox: Outbox, api: Api): Transformer {
  return async (prev, method, payload, signal) => {
    const res = await prev(method, payload, signal);
    const chatId = (payload as { chat_id?: unknown } | undefined)?.chat_id;
    if (!res.ok && res.error_code === 429 && typeof chatId === "number") outbox.hold(api, chatId, (res.parameters?.retry_after ?? 1) * 1000);
    return res;
  };
}
