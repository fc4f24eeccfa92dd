/**
 * A job's history of tries (issue 11 item 5: re-arming a failed job keeps its history). Every try that
 * did not end well — retried later, the job failed, the process holding it died — and every re-arm by
 * a re-sent file is one `job_attempts` row (time, step, reason, detail), written by the store in the
 * same transaction as the state change it explains, and never deleted with a re-arm. `/status N` shows
 * it to the user, `docket job N` to the operator. The vocabulary and rules are here; the rows live in
 * bot/db/schema.ts.
 */
import type { JobState } from "../db/schema.ts";

/** The step a try was in (the same names as `docket_try_failures_total{step}`). */
export type AttemptStep = "intake" | "download" | "processing" | "delivery";

/**
 * How the try ended: `retry` (tried again later), `failed` (the job ended), `interrupted` (the process
 * holding it died; taken back at its host's next start), `rearmed` (a re-sent file started the job over).
 */
export type AttemptOutcome = "retry" | "failed" | "interrupted" | "rearmed";

/** The reason recorded for a try whose process died before it could classify the failure. */
export const INTERRUPTED = "interrupted";

/**
 * The step of a try that ended in `state` for `reason`: a refused or failed upload is delivery (it
 * happens while the job is `processing`), `accepted` is the download, the rest is processing.
 */
export function attemptStep(state: JobState, reason: string): AttemptStep {
  if (state === "accepted") return "download";
  return reason === "delivery_failed" || reason === "result_too_big" ? "delivery" : "processing";
}

/** One row of a job's history as the store records it. */
export interface AttemptNote {
  readonly step: AttemptStep;
  readonly outcome: AttemptOutcome;
  /** A reason code (bot/jobs/reasons.ts) or {@link INTERRUPTED}. */
  readonly reason: string;
  /** Values for the localized reason text. */
  readonly params?: Readonly<Record<string, string | number>>;
  /** Operator detail (English, redacted). */
  readonly detail: string;
}
