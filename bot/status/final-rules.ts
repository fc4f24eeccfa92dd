/**
 * What to do with a job's final status message after one try to show it (pure: outcome and time in,
 * one decision out; tested with a fake clock). The shell is ./finals.ts. The final status ("Done …",
 * "failed: …") is recorded with the job's final state and shown from that record (seed 000: the last
 * message is the truth about the job — «Именно так стоит понимать слово «готово»»), so a try that did not
 * reach the chat is tried again, by this process or the next; one the chat can never take is given up.
 */
import { isFinalReplyFailure, replyBackoffMs } from "../intake/replies.ts";

/** Tries of one final status before it is given up (a restart's send counts only if it fails). */
export const FINAL_MAX_TRIES = 5;

/** How the chat took one try of a final status (StatusReporter.final). */
export type FinalShown =
  /** The chat shows it ("message is not modified" included: seed 002, it is already there). */
  | { readonly status: "ok" }
  /** The message died (e.g. "message to edit not found": the user deleted it); the chat is fine. */
  | { readonly status: "partial" }
  /** The stream died: the chat is gone (403, chat not found) or transient errors ran out of tries. */
  | { readonly status: "failed"; readonly reason?: string | undefined; readonly error?: unknown }
  /** Not tried: the outbox is shutting down (the record stays for the next start). */
  | { readonly status: "closed" };

/** The decision of {@link decideFinal}. */
export type FinalDecision =
  /** Shown: close the record. */
  | { readonly kind: "done" }
  /** Try again at `at` (epoch ms), one more failed try counted. */
  | { readonly kind: "retry"; readonly at: number }
  /** Never showable: close the record with one journal line saying `why`. */
  | { readonly kind: "give_up"; readonly why: string }
  /** Leave the record as it is (shutdown: the next start takes it). */
  | { readonly kind: "leave" };

/**
 * Decide after one try: shown → done; shutdown → leave; the message gone or the chat refusing (403, a
 * 400 for the request: bot/intake/replies.ts `isFinalReplyFailure`) → give up; tries run out → give up;
 * else retry after `replyBackoffMs` (30 s doubling, capped at 10 min), the same backoff as intake's replies.
 * @param tries failed tries so far (the record's `final_tries`)
 * @param now epoch ms
 */
export function decideFinal(shown: FinalShown, tries: number, now: number): FinalDecision {
  switch (shown.status) {
    case "ok":
      return { kind: "done" };
    case "closed":
      return { kind: "leave" };
    case "partial":
      return { kind: "give_up", why: "the status message is gone from the chat (message to edit not found, or Telegram refused the text)" };
    case "failed": {
      if (isFinalReplyFailure(shown.error)) return { kind: "give_up", why: `the chat cannot take it: ${shown.reason ?? "refused"}` };
      const n = tries + 1;
      if (n >= FINAL_MAX_TRIES) return { kind: "give_up", why: `${n} tries failed, the last: ${shown.reason ?? "unknown"}` };
      return { kind: "retry", at: now + replyBackoffMs(n) };
    }
  }
}
