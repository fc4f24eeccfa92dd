/**
 * Judging a job's end state against a manifest row (MANIFEST.tsv format of
 * ../shared/fixtures): `ok` rows must be `ready` with matching facts (pages,
 * width, height, frames); `reject` rows must be `failed` with the reason or a
 * documented alias. Without a manifest row, any truthful end state is right.
 */
import { ENDED_STATES } from "../../bot/jobs/states.ts";
import type { ManifestRow } from "../samples/manifest.ts";

/** Whether a job in `status` has ended (ready, failed or expired: a known state no worker still owns; bot/jobs/states.ts). */
export function hasEnded(status: string | undefined): boolean {
  return (ENDED_STATES as readonly string[]).includes(status ?? "");
}

/** The job as the demo reads it from SQLite. */
export interface JobOutcome {
  readonly status: string;
  readonly reason: string | null;
  readonly facts: Record<string, unknown> | null;
}

/** Verdict of one file. */
export interface Verdict {
  readonly right: boolean;
  readonly why: string;
  /** Short facts text for the table, e.g. `pages=3` or `640x480`. */
  readonly factsText: string;
}

/** Compare a job's end state with the manifest row (or only require an end state when there is none). */
export function judge(row: ManifestRow | null, job: JobOutcome | null): Verdict {
  const f = job?.facts ?? {};
  const factsText = [
    typeof f.label === "string" ? f.label : null,
    typeof f.pages === "number" ? `pages=${f.pages}` : null,
    typeof f.width === "number" ? `${f.width}x${f.height}` : null,
    typeof f.frames === "number" && f.frames > 1 ? `frames=${f.frames}` : null,
  ]
    .filter(Boolean)
    .join(" ");
  if (!job) return { right: false, why: "no job was created", factsText };
  const ended = hasEnded(job.status);
  if (!row) return { right: ended, why: ended ? "" : `still ${job.status}`, factsText };
  if (row.expected === "ok") {
    if (job.status !== "ready") return { right: false, why: `expected ready, got ${job.status}${job.reason ? ` (${job.reason})` : ""}`, factsText };
    const want = row.facts;
    const checks: Array<[string, unknown, unknown]> = [
      ["pages", want.pages, f.pages],
      ["width", want.width, f.width],
      ["height", want.height, f.height],
      ["frames", want.frames, f.frames],
    ];
    for (const [k, w, got] of checks) if (w !== undefined && w !== got) return { right: false, why: `${k}: expected ${w}, got ${String(got)}`, factsText };
    return { right: true, why: "", factsText };
  }
  if (job.status !== "failed") return { right: false, why: `expected failed (${row.reason}), got ${job.status}`, factsText };
  const allowed: readonly string[] = [row.reason ?? "", ...row.aliases];
  if (!allowed.includes(job.reason ?? "")) return { right: false, why: `expected reason ${allowed.join("|")}, got ${job.reason}`, factsText };
  return { right: true, why: "", factsText };
}
