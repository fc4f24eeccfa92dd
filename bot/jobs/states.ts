/**
 * Job states and the transitions between them, as pure data and functions
 * (seed 000: "Переходы допускаются только вперёд и только условным обновлением").
 */
import { JOB_STATES, type JobState } from "../db/schema.ts";

export { JOB_STATES, type JobState };

/** States in which a worker still has something to do (claimable by lease). */
export const ACTIVE_STATES = ["accepted", "fetched", "processing"] as const satisfies readonly JobState[];
/** One of {@link ACTIVE_STATES}. */
export type ActiveState = (typeof ACTIVE_STATES)[number];

/** Allowed forward moves. `failed`/`expired` may be re-armed to `accepted` only by a re-sent file. */
const NEXT: Readonly<Record<JobState, readonly JobState[]>> = {
  accepted: ["fetched", "failed"],
  fetched: ["processing", "failed"],
  processing: ["ready", "failed"],
  ready: ["expired"],
  failed: ["accepted", "expired"],
  expired: ["accepted"],
};

/** Whether `from → to` is a legal transition. */
export function canTransition(from: JobState, to: JobState): boolean {
  return NEXT[from].includes(to);
}

/** States a job ends in (no worker has anything left to do): `ready`, `failed`, `expired`. */
export const ENDED_STATES: readonly JobState[] = JOB_STATES.filter((s) => !(ACTIVE_STATES as readonly string[]).includes(s));

/** Whether the state still needs a worker. */
export function isActive(state: JobState): state is ActiveState {
  return (ACTIVE_STATES as readonly string[]).includes(state);
}

/**
 * What a worker must do with a job found in `state` (seed 000: resume rules):
 * - `download`: delete any `.part`, new getFile, download again;
 * - `verify`: the source is on disk — check presence and SHA-256, then process;
 * - `reprocess`: discard intermediates in `work/`, redo processing from the source.
 */
export type ResumeStep = "download" | "verify" | "reprocess";

/** The resume step for an active state (seed 000: "Что именно возобновляется, зависит от статуса"). */
export function resumeStep(state: ActiveState): ResumeStep {
  switch (state) {
    case "accepted":
      return "download";
    case "fetched":
      return "verify";
    case "processing":
      return "reprocess";
  }
}

/** The pool that handles a state: downloads are I/O-bound, processing is CPU-bound (seed 000: two pools). */
export function poolFor(state: ActiveState): "download" | "process" {
  return state === "accepted" ? "download" : "process";
}

/**
 * Whether a `ready` job's result is still kept (seed 000: retention; `result_expires_at` is a
 * UTC ISO time). A `ready` row past it is expired for the user even before the janitor's sweep.
 * @param now epoch ms
 */
export function isResultAlive(job: { readonly status: JobState; readonly resultExpiresAt: string | null }, now: number): boolean {
  return job.status === "ready" && job.resultExpiresAt !== null && Date.parse(job.resultExpiresAt) > now;
}

/** The state to show the user: `expired` for a `ready` job past its TTL not yet swept, else the stored state. */
export function visibleState(job: { readonly status: JobState; readonly resultExpiresAt: string | null }, now: number): JobState {
  return job.status === "ready" && !isResultAlive(job, now) ? "expired" : job.status;
}
