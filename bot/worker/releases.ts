/**
 * Budget releases after `ready` that ride on this process's next claim (issue 14 item 8).
 *
 * Seed 000 frees a job's share of the byte budget once its temp files are gone ("Закончилась и
 * удалила временный файл — бюджет освобождается"). Written alone, that release is one more round trip
 * and one more transaction per job. Here it waits for the next write this process makes anyway — the
 * download loop's claim (`JobStore.claimDownload`) or a hand-over (`JobStore.handOver`), which carry it
 * in their own transaction — and is written alone only when no such write comes within one tick
 * ({@link PendingReleases.aloneAfterMs}, default 0: the next turn of the event loop). A claim that
 * carries it sees the budget already freed. A process that dies with releases pending leaves them to
 * the janitor, as a crash between the file removal and the release always did.
 */
import type { Logger } from "../log.ts";
import type { JobStore } from "../jobs/store.ts";

/** How long a release written alone that failed (the database did not answer) waits before the next try, ms. */
const RETRY_ALONE_MS = 1000;

/** Releases this process owes, carried by its next claim or written alone a tick later. */
export class PendingReleases {
  private readonly ids = new Set<number>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private writing: Promise<void> | null = null;

  /**
   * @param store where a release goes alone (`releaseReservation`)
   * @param log one warning when a release written alone fails (it stays pending and is tried again)
   * @param aloneAfterMs how long a release waits for a claim to carry it, ms
   */
  constructor(
    private readonly store: Pick<JobStore, "releaseReservation">,
    private readonly log: Logger,
    readonly aloneAfterMs = 0,
  ) {}

  /** Job `id`'s temp files are gone: its reservation is to be released (by the next claim, or alone). */
  add(id: number): void {
    this.ids.add(id);
    this.arm(this.aloneAfterMs);
  }

  /** Releases pending now (job ids, in the order they were added). */
  get pending(): readonly number[] {
    return [...this.ids];
  }

  /**
   * Run `write` (a claim or hand-over) carrying every pending release. When it throws, nothing was
   * released (the store's transaction rolled back): the releases are pending again and the error is
   * rethrown.
   */
  async carry<T>(write: (release: readonly number[]) => Promise<T>): Promise<T> {
    const taken = [...this.ids];
    this.ids.clear();
    try {
      return await write(taken);
    } catch (err) {
      for (const id of taken) this.ids.add(id);
      if (this.ids.size > 0) this.arm(this.aloneAfterMs);
      throw err;
    }
  }

  /**
   * Write every pending release alone, now. A store error is logged once per failed round; those
   * releases stay pending and are tried again after {@link RETRY_ALONE_MS} (or carried by a claim first).
   */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.writing) await this.writing;
    if (this.ids.size === 0) return;
    const taken = [...this.ids];
    this.ids.clear();
    this.writing = (async () => {
      const failed: number[] = [];
      let first: unknown = null;
      for (const id of taken) {
        try {
          await this.store.releaseReservation(id);
        } catch (err) {
          failed.push(id);
          first ??= err;
        }
      }
      if (failed.length > 0) {
        for (const id of failed) this.ids.add(id);
        this.log.warn({ err: first, jobs: failed }, "could not release the budget of finished jobs: the database did not answer; trying again (the janitor releases them otherwise)");
        this.arm(RETRY_ALONE_MS);
      }
    })();
    try {
      await this.writing;
    } finally {
      this.writing = null;
    }
  }

  /** Stop the timer and write what is pending (shutdown). */
  async close(): Promise<void> {
    await this.flush();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private arm(ms: number): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, ms);
  }
}
