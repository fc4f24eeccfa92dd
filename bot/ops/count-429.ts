/**
 * An API transformer that counts every 429 Too Many Requests answer by method
 * (`docket_telegram_429_total{method}`, issue 10 item 2). Installed innermost on each client, it
 * sees the raw answers, also those auto-retry then waits out and retries.
 */
import type { Transformer } from "grammy";
import type { Counter } from "prom-client";

/** Build the transformer; `counter` gets `inc({ method })` for each 429. */
export function count429s(counter: Counter<"method">): Transformer {
  return async (prev, method, payload, signal) => {
    const res = await prev(method, payload, signal);
    if (!res.ok && res.error_code === 429) counter.inc({ method });
    return res;
  };
}
