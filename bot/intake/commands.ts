/**
 * Chat commands: /start, /help, /jobs, /status N, /resend N, /cancel N, /delete N
 * (seed 000: re-delivery from the stored `file_id`; issue: what users of file bots
 * ask for most). Every job command is scoped to the chat it is sent in.
 */
import { Composer } from "grammy";
import type { DocketContext } from "../i18n/index.ts";
import { localeFor } from "../i18n/index.ts";
import type { FileJob, JobAttempt } from "../db/schema.ts";
import { INTERRUPTED } from "../jobs/attempts.ts";
import { reasonText } from "../status/texts.ts";
import type { Services } from "../services.ts";
import { answerQuery } from "./answer-query.ts";
import type { ChatAdmins } from "./chat-admins.ts";
import { mayActOnJob, senderOf } from "./sender.ts";
import { displayName, utcMinute } from "./format.ts";
import { isActive, isResultAlive, visibleState } from "../jobs/states.ts";

/** Parse the job number argument of a command (`/status 12`, `/status #12`). */
export function jobNumber(arg: string | undefined): number | null {
  const m = /^#?(\d{1,12})$/.exec((arg ?? "").trim());
  return m ? Number(m[1]) : null;
}

/** Retryable reasons (bot/jobs/retry.ts callers) with a short `attempt-retry-<reason>` phrase for a retried try. */
const RETRY_PHRASES: ReadonlySet<string> = new Set(["download_failed", "file_unavailable", "processing_crashed", "processing_timeout", "delivery_failed"]);

/** Most history lines `/status N` shows (the latest). */
const HISTORY_LINES = 5;

/**
 * One history line of `/status N` in the user's language: `2026-11-30 10:00 UTC · download · tried
 * again: <the reason's chat text>` (bot/jobs/attempts.ts; reasons from bot/locales/<lang>/reasons.ftl).
 */
export function attemptLine(ctx: DocketContext, a: JobAttempt): string {
  const locale = localeFor(ctx.from?.language_code);
  const params = a.params ? (JSON.parse(a.params) as Record<string, string | number>) : {};
  // A retried try gets a short phrase (its reason's chat text asks for a re-send the user does not need); an ended one the full text.
  const reason =
    a.reason === INTERRUPTED || a.reason === "expired"
      ? ctx.t(`attempt-reason-${a.reason}`)
      : a.outcome === "retry" && RETRY_PHRASES.has(a.reason)
        ? ctx.t(`attempt-retry-${a.reason}`)
        : reasonText(locale, a.reason, params);
  return ctx.t("cmd-status-try", { time: utcMinute(a.at), step: ctx.t(`attempt-step-${a.step}`), outcome: ctx.t(`attempt-outcome-${a.outcome}`), reason });
}

/** The Composer with the chat commands. */
export function commands(services: Services, erase: (job: FileJob) => Promise<boolean>, admins: ChatAdmins): Composer<DocketContext> {
  const { store } = services;
  const c = new Composer<DocketContext>();
  /** Answer in the chat through the outbox, not waiting for delivery. */
  const say = (ctx: DocketContext, text: string): void => void services.reply(ctx.chat!.id, text);
  /** `#N · name · state` (cmd-status-line) in the user's language, with the state the user sees (expired past the TTL). */
  const statusLine = (ctx: DocketContext, j: FileJob): string =>
    ctx.t("cmd-status-line", { id: String(j.id), name: displayName(j.declaredName, j.id, j.source), status: ctx.t(`state-${visibleState(j, services.now())}`) });

  c.command(["start", "help"], (ctx) => say(ctx, ctx.t("help")));

  c.command("jobs", async (ctx) => {
    const jobs = await store.listByChat(ctx.chat.id, 10);
    if (jobs.length === 0) return say(ctx, ctx.t("cmd-jobs-empty"));
    say(ctx, [ctx.t("cmd-jobs-title"), ...jobs.map((j) => statusLine(ctx, j))].join("\n"));
  });

  /** Resolve `/cmd N` to a job of this chat, answering usage or not-found itself. */
  const target = async (ctx: DocketContext & { match: string }, cmd: string): Promise<FileJob | null> => {
    const id = jobNumber(ctx.match);
    if (id === null) {
      say(ctx, ctx.t("cmd-usage", { cmd }));
      return null;
    }
    const job = await store.get(id);
    if (!job || job.chatId !== ctx.chat?.id) {
      say(ctx, ctx.t("cmd-not-found", { id: String(id) }));
      return null;
    }
    return job;
  };

  /**
   * `/cmd N` on a job the sender may act on (/cancel, /delete; bot/intake/sender.ts `mayActOnJob`): its
   * owner, a bot admin, a group's admin (getChatMember, cached — asked in the background, never awaited
   * by the handler); anyone else is told whose job it is.
   */
  const owned = async (ctx: DocketContext & { match: string }, cmd: string, act: (job: FileJob) => Promise<void>): Promise<void> => {
    const job = await target(ctx, cmd);
    const sender = ctx.msg ? senderOf(ctx.msg) : null;
    if (!job || !sender) return;
    const verdict = mayActOnJob(job.userId, sender, ctx.chat!.type, services.config.adminUserIds);
    await admins.whenKnown(services, job.chatId, sender.userId, verdict, (ok) => (ok ? act(job) : say(ctx, ctx.t("cmd-not-yours", { id: String(job.id) }))), `/${cmd}`);
  };

  c.command("status", async (ctx) => {
    const job = await target(ctx, "status");
    if (!job) return;
    // The job's history (issue 11 item 5): its last tries that did not end well, re-arms included.
    const history = (await store.attempts(job.id)).slice(-HISTORY_LINES);
    const lines = history.map((a) => attemptLine(ctx, a));
    say(ctx, [statusLine(ctx, job), ...(lines.length > 0 ? [ctx.t("cmd-status-history"), ...lines] : [])].join("\n"));
  });

  c.command("resend", async (ctx) => {
    const job = await target(ctx, "resend");
    if (!job) return;
    if (!isResultAlive(job, services.now())) return say(ctx, ctx.t("cmd-resend-not-ready", { id: String(job.id), status: ctx.t(`state-${visibleState(job, services.now())}`) }));
    services.background(() => services.delivery.redeliver(job, localeFor(ctx.from?.language_code)), "resend");
  });

  c.command("cancel", (ctx) =>
    owned(ctx, "cancel", async (job) => {
      const r = await services.cancel(job.id);
      if (r === "cancelled") say(ctx, ctx.t("cmd-cancelled", { id: String(job.id) }));
      else say(ctx, ctx.t("cmd-cancel-final", { id: String(job.id), status: ctx.t(`state-${(await store.get(job.id))?.status ?? job.status}`) }));
    }),
  );

  c.command("delete", (ctx) =>
    owned(ctx, "delete", async (job) => {
      if (isActive(job.status)) await services.cancel(job.id);
      await erase((await store.get(job.id)) ?? job);
      say(ctx, ctx.t("cmd-deleted", { id: String(job.id) }));
    }),
  );

  // Anything else: a hint in private chats only — in groups the bot stays silent (other people's
  // talk is not for it, and a reply to each would spend the group's 20 messages a minute).
  c.on("message:text", (ctx) => {
    if (ctx.chat.type !== "private") return;
    say(ctx, ctx.t(ctx.message.text.startsWith("/") ? "cmd-unknown" : "intake-unsupported-message"));
  });
  // A button this bot no longer knows (stale or forged data): answer it, so the client stops waiting.
  c.on("callback_query:data", (ctx) => answerQuery(services, ctx));
  return c;
}
