/**
 * A job's final status message, shown from its record (the I/O shell of ./final-rules.ts). The engine
 * writes the final text ("Done …", "failed: …", with its keyboard) in the same UPDATE as the job's final
 * state (`JobStore.transition`'s `final`, `JobStore.fail`'s `final`), held by this process; this module
 * shows it through the status reporter (the outbox: the chat's pace, its 429 hold, stale progress edits
 * collapsed) and closes the record once the chat shows it. So the chat is never told "done" before the
 * commit, and a crash at any point after the commit loses nothing: this host's next start takes back what
 * its earlier process held (`reclaimHostFinals`), and with several hosts (PostgreSQL) any process takes a
 * record whose holder stopped renewing it — status messages follow the job's lease (issue 14 item 5).
 *
 * Exactly once in the chat: a record is held by one process at a time and closed once shown. The one
 * repeat a crash can cause is an edit Telegram applied in the instant before the record was closed; the
 * next process's identical edit is then "message is not modified", which changes nothing in the chat
 * (seed 002: success). Only a job without a status message (its accepted reply never reached the chat)
 * gets its final status as a new message, where that instant could show it twice.
 */
import type { InlineKeyboardMarkup } from "grammy/types";
import type { FileJob } from "../db/schema.ts";
import type { JobStore } from "../jobs/store.ts";
import type { Logger } from "../log.ts";
import { decideFinal } from "./final-rules.ts";
import type { StatusReporter } from "./reporter.ts";

/** Pending records taken per look. */
const PAGE = 100;

/** What the engine needs of the final-status sender (Services.finals). */
export interface FinalDelivery {
  /**
   * Show `job`'s final status in the background: `job` is the row read after its final commit, whose
   * record this process holds. Never throws; a row without a pending record is ignored.
   */
  deliver(job: FileJob): void;
  /** The hold a final commit gives its process: until when (epoch ms) from `now`. */
  holdUntil(now: number): number;
  /** This process's owner id (`<host>/<start>`), the holder of the records it commits. */
  readonly owner: string;
}

/** What the sender needs; wired in bot/app.ts. */
export interface FinalSenderDeps {
  readonly store: JobStore;
  readonly log: Logger;
  /** Clock, epoch ms. */
  readonly now: () => number;
  /** This process's owner id (CONTRACTS.md §6). */
  readonly owner: string;
  /** HOST_ID: its earlier processes' records are taken back at start. */
  readonly hostId: string;
  readonly status: Pick<StatusReporter, "final">;
  /** Run a task in the background (awaited, bounded, at shutdown). */
  readonly background: (task: () => Promise<unknown>, what: string) => void;
  /** How long a hold lasts, ms (LEASE_TTL); renewed every third of it while the chat makes it wait. */
  readonly holdMs: number;
  /** How often records left by others or due for a retry are looked for, ms (default min(5 s, holdMs)). */
  readonly scanEveryMs?: number;
}

/** Shows final status messages from their records; see the module doc. */
export class FinalSender implements FinalDelivery {
  /** Jobs whose final status this process is showing now (never twice at once). */
  private readonly showing = new Set<number>();
  private closed = false;
  private started = false;
  private scanning = false;
  private scanTimer: ReturnType<typeof setInterval> | null = null;
  private renewTimer: ReturnType<typeof setInterval> | null = null;

  /** @param deps see {@link FinalSenderDeps} */
  constructor(private readonly deps: FinalSenderDeps) {}

  get owner(): string {
    return this.deps.owner;
  }

  holdUntil(now: number): number {
    return now + this.deps.holdMs;
  }

  deliver(job: FileJob): void {
    if (this.closed || job.finalText === null || job.finalDoneAt !== null || this.showing.has(job.id)) return;
    this.showing.add(job.id);
    this.deps.background(() => this.show(job).finally(() => this.showing.delete(job.id)), "final status message");
  }

  /**
   * Take back this host's earlier processes' records, show every pending one, then keep looking every
   * `scanEveryMs` (records of dead holders on other hosts, retries that came due) and keep renewing this
   * process's holds. Idempotent; a store error is logged (the next look tries again).
   */
  async start(): Promise<void> {
    if (this.started || this.closed) return;
    this.started = true;
    const { store, log, hostId, owner } = this.deps;
    try {
      const n = await store.reclaimHostFinals(hostId, owner);
      if (n > 0) log.info({ owner, finals: n }, `took back ${n} final status message(s) this host's earlier process did not show`);
    } catch (err) {
      log.error({ err }, "could not take back this host's earlier final status messages; they are taken once their hold expires");
    }
    await this.resume();
    const every = this.deps.scanEveryMs ?? Math.min(5000, this.deps.holdMs);
    this.scanTimer = setInterval(() => void this.resume(), every);
    this.renewTimer = setInterval(() => void this.renew(), Math.max(100, Math.floor(this.deps.holdMs / 3)));
  }

  /** Take and show every pending record that is free at `now` (its holder gone, its retry due); how many. Never throws. */
  async resume(): Promise<number> {
    if (this.closed || this.scanning) return 0;
    this.scanning = true;
    const { store, log, now, owner } = this.deps;
    let n = 0;
    try {
      for (const row of await store.pendingFinals(now(), PAGE)) {
        if (this.closed) break;
        if (this.showing.has(row.id)) continue;
        const t = now();
        const held = await store.claimFinal(row.id, owner, t, this.holdUntil(t));
        if (!held) continue; // another process took it first
        this.deliver(held);
        n++;
      }
      if (n > 0) log.info({ finals: n }, "showing final status messages left by an earlier process or a failed try");
    } catch (err) {
      log.warn({ err }, "could not look for pending final status messages; looking again in a few seconds");
    } finally {
      this.scanning = false;
    }
    return n;
  }

  /** Stop looking and renewing (shutdown): what is not shown now stays for the next start. */
  close(): void {
    this.closed = true;
    if (this.scanTimer) clearInterval(this.scanTimer);
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.scanTimer = this.renewTimer = null;
  }

  /** Keep this process's holds while the chat makes them wait (a 429 hold, the pace). */
  private async renew(): Promise<void> {
    if (this.closed || this.showing.size === 0) return;
    try {
      await this.deps.store.renewFinals(this.deps.owner, this.holdUntil(this.deps.now()));
    } catch (err) {
      this.deps.log.warn({ err }, "could not renew the holds on final status messages; another process may show them too (the same edit changes nothing)");
    }
  }

  /** One try: show it, then close the record, retry it later, or give it up (./final-rules.ts). */
  private async show(job: FileJob): Promise<void> {
    const { store, log, now, status, owner } = this.deps;
    const markup = job.finalMarkup ? (JSON.parse(job.finalMarkup) as InlineKeyboardMarkup) : undefined;
    const shown = await status.final(job, job.finalText!, markup);
    const decision = decideFinal(shown, job.finalTries, now());
    switch (decision.kind) {
      case "done":
        await store.finishFinal(job.id, now());
        return;
      case "leave":
        return;
      case "give_up":
        await store.finishFinal(job.id, now());
        log.warn({ job: job.id, chat_id: job.chatId, tries: job.finalTries + 1 }, `final status message not shown; given up: ${decision.why}`);
        return;
      case "retry":
        await store.retryFinalLater(job.id, owner, decision.at);
        log.warn({ job: job.id, chat_id: job.chatId, tries: job.finalTries + 1, reason: shown.status === "failed" ? shown.reason : undefined }, "final status message not shown; will retry");
        return;
    }
  }
}
