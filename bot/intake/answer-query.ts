/**
 * answerCallbackQuery off the handler's path (issue 11 item 6): the answer only stops the button's
 * spinner, so it runs in the background, bounded — a 429 or a stalled request on one stranger's
 * button press must not hold the update batch (polling confirms a batch only after its handlers
 * return), and an answer later than the bound is useless to the client anyway.
 */
import type { DocketContext } from "../i18n/index.ts";
import type { Services } from "../services.ts";

/** How long an answer (with auto-retry's waits) may take before it is given up, ms. */
export const ANSWER_QUERY_BOUND_MS = 10_000;

/** Answer the update's callback query in the background (Bot API answerCallbackQuery); never throws, never awaited. */
export function answerQuery(services: Pick<Services, "background">, ctx: DocketContext, other?: { text?: string }): void {
  services.background(() => ctx.answerCallbackQuery(other, AbortSignal.timeout(ANSWER_QUERY_BOUND_MS) as never), "answer button");
}
