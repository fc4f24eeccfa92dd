/**
 * The services handlers and workers share, wired once in `bot/app.ts`.
 */
import type { Api } from "grammy";
import type { Config } from "./config.ts";
import type { Delivery } from "./deliver/delivery.ts";
import type { StatusReporter } from "./status/reporter.ts";
import type { FinalDelivery } from "./status/finals.ts";
import type { JobStore } from "./jobs/store.ts";
import type { Logger } from "./log.ts";
import type { Metrics } from "./ops/metrics.ts";
import type { PostOptions, PostRequest, PostResult } from "./outbox/index.ts";
import type { ReplySender } from "./intake/replies.ts";

/** Everything a handler or worker needs; no globals. */
export interface Services {
  readonly config: Config;
  readonly store: JobStore;
  readonly log: Logger;
  /** The Bot API client (grammY `Api` with the configured `apiRoot`). */
  readonly api: Api;
  /** Job status messages in the chat. */
  readonly status: StatusReporter;
  /** Final status messages, shown from the record each final commit writes (bot/status/finals.ts). */
  readonly finals: FinalDelivery;
  /** Sending results (first delivery and re-delivery by `file_id`). */
  readonly delivery: Delivery;
  /** Prometheus metrics. */
  readonly metrics: Metrics;
  /** Intake's recorded replies (a transactional outbox): `deliver` sends one just committed. */
  readonly replies: Pick<ReplySender, "deliver">;
  /**
   * Send a chat message through the outbox without waiting for delivery (handlers must
   * stay short: polling confirms a batch only after its handlers return). Resolves once delivered.
   */
  reply(chatId: number, text: string, opts?: { readonly replyTo?: number; readonly replyMarkup?: unknown }): Promise<void>;
  /**
   * One chat-bound call that is not a text message (a keyboard edit, an upload) through the outbox:
   * the chat's pace, its 429 hold and the bot-wide cap (contract 7). Resolves with the Bot API result.
   */
  post<R extends PostRequest>(chatId: number, request: R, opts?: PostOptions): Promise<PostResult<R>>;
  /** Run `task` in the background, logging its failure; shutdown waits for it (bounded). */
  background(task: () => Promise<unknown>, what: string): void;
  /** Wake the worker pools (a job was accepted or released). */
  wake(): void;
  /** Cancel a job in any state (`/cancel N`); resolves with what happened. */
  cancel(jobId: number): Promise<"cancelled" | "final" | "missing">;
  /** Clock, epoch ms (tests inject a fake). */
  now(): number;
}
