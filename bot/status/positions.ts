/**
 * Queue positions of the jobs waiting for a download ("Job #N: queued for download, position K."),
 * edited sparingly: only when a job's position changed, at most once per interval.
 *
 * A waiting job (`accepted` without a lease) belongs to no process, so one process shows every
 * position: the one that receives updates (bot/main.ts starts it with intake — with PostgreSQL the
 * elected intake process, issue 14 item 3; with SQLite the one process). Before, every process's
 * engine refreshed every waiting job, so with N hosts each position went out N times: N − 1 edits
 * "message is not modified" spent from the chat's shared budget, and a host's late copy could land
 * after the job had moved on.
 */
import type { FileJob } from "../db/schema.ts";
import { localeFor, t } from "../i18n/index.ts";
import { isLeased } from "../jobs/lease.ts";
import type { Services } from "../services.ts";

/** What one refresh shows: the jobs whose position text changed, and the jobs no longer waiting. */
export interface PositionEdits {
  /** Jobs to edit, with their new text, in queue order. */
  readonly show: ReadonlyArray<{ readonly job: FileJob; readonly text: string }>;
  /** Ids shown before that no longer wait (forgotten). */
  readonly gone: readonly number[];
}

/**
 * The pure rule: the waiting jobs in queue order, what was shown last, and the text for a job at a
 * 1-based position in → the edits to make. A job whose text is unchanged is not edited again.
 */
export function positionEdits(waiting: readonly FileJob[], shown: ReadonlyMap<number, string>, textOf: (job: FileJob, position: number) => string): PositionEdits {
  const show: Array<{ job: FileJob; text: string }> = [];
  const seen = new Set<number>();
  for (const [i, job] of waiting.entries()) {
    seen.add(job.id);
    const text = textOf(job, i + 1);
    if (shown.get(job.id) !== text) show.push({ job, text });
  }
  return { show, gone: [...shown.keys()].filter((id) => !seen.has(id)) };
}

/** The shell: a timer that reads the waiting jobs and edits their status messages through the reporter. */
export class QueuePositions {
  private readonly shown = new Map<number, string>();
  private timer: ReturnType<typeof setInterval> | null = null;
  /** The refresh in flight, if any: a tick while it runs is skipped (a slow database never stacks them). */
  private running: Promise<void> | null = null;
  /** Bumped by {@link stop}: a refresh that read the queue before it shows nothing (leadership lost meanwhile). */
  private generation = 0;

  /**
   * @param services the store (waiting jobs), the status reporter (edits), the clock and the log
   * @param everyMs refresh interval, ms (QUEUE_POSITIONS_INTERVAL, default 15 s)
   */
  constructor(
    private readonly services: Pick<Services, "store" | "status" | "now" | "log">,
    private readonly everyMs: number,
  ) {}

  /** Refresh every `everyMs` until {@link stop}; a second call does nothing. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.refresh()
        .catch((err: unknown) => this.services.log.debug({ err }, "queue positions not refreshed: the database did not answer"))
        .finally(() => (this.running = null));
    }, this.everyMs);
  }

  /** Stop refreshing; what was shown is forgotten (the next start shows every position again). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.generation++;
    this.shown.clear();
  }

  /** Show every waiting job's position that changed since the last refresh. */
  async refresh(): Promise<void> {
    const { store, status, now } = this.services;
    const generation = this.generation;
    const waiting = (await store.listByState(["accepted"])).filter((j) => !isLeased(j, now()));
    if (generation !== this.generation) return;
    const edits = positionEdits(waiting, this.shown, (job, position) => t(localeFor(job.languageCode), "status-queued", { id: String(job.id), position }));
    for (const id of edits.gone) this.shown.delete(id);
    for (const { job, text } of edits.show) {
      this.shown.set(job.id, text);
      status.update(job, text);
    }
  }
}
