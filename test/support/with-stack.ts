/**
 * One whole bot per end-to-end case: start a {@link Stack}, run the case, check what every case must
 * keep (the token never in the logs nor in a Bot API call's parameters, no "handler error"), always stop.
 */
import { expect } from "vitest";
import { startStack, type Stack, type StackOptions } from "./stack.ts";

/**
 * The token (whole, and its secret part after ':') never in the bot's logs nor in any parameter the bot sent
 * to the Bot API; no unhandled exception in an update handler (bot.catch logs "handler error").
 */
export function checkLogs(s: Stack): void {
  const secret = s.em.token.split(":")[1]!;
  const all = s.logs.join("\n");
  expect(all).not.toContain(s.em.token);
  expect(all).not.toContain(secret);
  expect(s.em.calls.filter((c) => JSON.stringify(c.params).includes(secret)).map((c) => c.method)).toEqual([]);
  expect(s.logs.filter((l) => l.includes("handler error"))).toEqual([]);
}

/** Start a stack with `opts`, run `fn`, then {@link checkLogs}; the stack is stopped whatever happens. */
export async function withStack(opts: StackOptions, fn: (s: Stack) => Promise<void>): Promise<void> {
  const s = await startStack(opts);
  try {
    await fn(s);
    checkLogs(s);
  } finally {
    await s.stop();
  }
}
