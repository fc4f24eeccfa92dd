/**
 * The operator's plain Bot API client: start-up (getMe, setWebhook) and the readiness checks
 * (getMe, getWebhookInfo) bound their own waits, so it has no auto-retry and no transformers
 * (a down Bot API must show up within a check's deadline, not hang in retries). It differs from
 * grammY's default client in one thing: an HTTP answer without a JSON body (a proxy's 502 page)
 * fails with {@link NotBotApiAnswer} naming the status, instead of a bare "JSON Parse error".
 */
import { Api } from "grammy";
import { NotBotApiAnswer } from "./outage.ts";

/** fetch that refuses non-JSON answers (the Bot API always answers JSON, errors included; botapi-facts.md §3). */
const jsonOnlyFetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
  const res = await fetch(input, init);
  if (!(res.headers.get("content-type") ?? "").includes("json")) {
    await res.body?.cancel().catch(() => {});
    throw new NotBotApiAnswer(res.status, res.statusText);
  }
  return res;
}) as typeof fetch;

/**
 * A plain grammY Api for the operator paths: same token and `apiRoot` as the bot, no transformers.
 * @param token the bot token (never logged: the logger redacts it, and errors carry no URL)
 * @param apiRoot `BOT_API_ROOT`, no trailing slash
 */
export function operatorApi(token: string, apiRoot: string): Api {
  return new Api(token, { apiRoot, fetch: jsonOnlyFetch });
}
