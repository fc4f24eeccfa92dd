/**
 * Intake of documents and photos (seed 000: "дежурный в приёмном покое"):
 * check, one INSERT in `accepted`, one reply with the job number, return.
 * No disk and no other network in the handler. A redelivered update or the same
 * file sent again answers with the existing job; a declared size over the mode's
 * download limit is refused at once and recorded as `failed` / `too_big`.
 */
import { Composer } from "grammy";
import type { PhotoSize } from "grammy/types";
import { downloadLimit } from "../config.ts";
import type { DocketContext } from "../i18n/index.ts";
import { localeFor } from "../i18n/index.ts";
import type { FileJob } from "../db/schema.ts";
import type { NewJob } from "../jobs/store.ts";
import { isResultAlive } from "../jobs/states.ts";
import { isReasonCode, type ReasonCode } from "../jobs/reasons.ts";
import type { Services } from "../services.ts";
import { displayName, mb } from "./format.ts";

/** The largest PhotoSize by pixel area (Telegram lists sizes ascending, but that is not documented). */
export function largestPhoto(sizes: readonly PhotoSize[]): PhotoSize | undefined {
  let best: PhotoSize | undefined;
  for (const s of sizes) if (!best || s.width * s.height > best.width * best.height) best = s;
  return best;
}

/** Build the job record from a message with a document or photo, or null when there is none. */
export function newJobFrom(ctx: DocketContext): NewJob | null {
  // An edited message whose file was replaced carries the new file: it is a file like any other.
  const msg = ctx.message ?? ctx.editedMessage;
  if (!msg || !ctx.from || !ctx.update) return null;
  const base = {
    updateId: ctx.update.update_id,
    chatId: msg.chat.id,
    userId: ctx.from.id,
    messageId: msg.message_id,
    languageCode: ctx.from.language_code ?? null,
  };
  if (msg.document) {
    const d = msg.document;
    return { ...base, source: "document", fileId: d.file_id, fileUniqueId: d.file_unique_id, declaredName: d.file_name ?? null, declaredMime: d.mime_type ?? null, declaredSize: d.file_size ?? null };
  }
  if (msg.photo) {
    const p = largestPhoto(msg.photo);
    if (!p) return null;
    return { ...base, source: "photo", fileId: p.file_id, fileUniqueId: p.file_unique_id, declaredName: null, declaredMime: "image/jpeg", declaredSize: p.file_size ?? null };
  }
  return null;
}

/** The Composer that turns documents and photos into jobs. */
export function fileIntake(services: Services): Composer<DocketContext> {
  const { config, store, log } = services;
  const c = new Composer<DocketContext>();

  c.on(["message:document", "message:photo", "edited_message:document", "edited_message:photo"], async (ctx) => {
    const parsed = newJobFrom(ctx);
    if (!parsed) return;
    const edited = ctx.editedMessage !== undefined;
    // The chat's /settings choose the processing variant; it is part of the idempotency key.
    const input: NewJob = { ...parsed, variant: (await store.getSettings(parsed.chatId)).pdfAction };
    const now = services.now();
    const limit = downloadLimit(config);
    const tooBig = input.declaredSize !== null && input.declaredSize > limit;

    // Fairness (per user, from config): refuse clearly instead of queueing silently. The check and
    // the INSERT are one transaction: handlers of the user's other chats run concurrently.
    const admin = config.adminUserIds.includes(input.userId);
    const outcome = await store.acceptWithinLimits(input, now, {
      maxInFlight: admin ? Number.POSITIVE_INFINITY : config.userMaxJobsInFlight,
      maxBytesPerDay: admin ? Number.POSITIVE_INFINITY : config.userMaxBytesPerDay,
    });
    if (outcome.refused) {
      const r = outcome.refused;
      const [key, vars] =
        r.limit === "in_flight"
          ? ["intake-limit-in-flight", { count: String(r.count), limit: String(config.userMaxJobsInFlight) }]
          : ["intake-limit-bytes", { used: mb(r.used), limit: mb(config.userMaxBytesPerDay) }];
      log.info({ user_id: input.userId, file_unique_id: input.fileUniqueId, limit: r.limit }, "refused by a per-user limit");
      void services.reply(input.chatId, ctx.t(key, vars as Record<string, string>), { replyTo: input.messageId });
      return;
    }
    const { job, created } = outcome;
    const name = displayName(job.declaredName, job.id, job.source);
    const jlog = log.child({ job: job.id, file_unique_id: job.fileUniqueId });

    if (created && tooBig) {
      const params = { size: mb(input.declaredSize ?? 0), limit: mb(limit) };
      if (await store.fail(job.id, "accepted", null, "too_big", params, `declared ${input.declaredSize} B over the ${config.mode} download limit ${limit} B`, now)) {
        services.metrics.jobsEnded.inc({ status: "failed", reason: "too_big" });
      }
      jlog.info({ declared_size: input.declaredSize, limit }, "refused at intake: declared size over the download limit");
      announce(services, job, ctx.t("intake-too-big", { id: String(job.id), ...params }));
      return;
    }
    if (created) {
      jlog.info({ chat_id: job.chatId, declared_size: job.declaredSize, source: job.source }, "accepted");
      announce(services, job, ctx.t("intake-accepted", { id: String(job.id), name }));
      services.wake();
      return;
    }
    // An edit that kept the file (a caption changed) is not a new request: no answer.
    if (edited) {
      jlog.debug("edited message with the same file: nothing to do");
      return;
    }
    await answerExisting(ctx, services, job, input, now, tooBig);
  });

  return c;
}

async function answerExisting(ctx: DocketContext, services: Services, existing: FileJob, input: NewJob, now: number, tooBig: boolean): Promise<void> {
  let job = existing;
  const { store, log } = services;
  const jlog = log.child({ job: job.id, file_unique_id: job.fileUniqueId });
  const sameUpdate = job.updateId === input.updateId;
  const resultAlive = isResultAlive(job, now);
  // A result past its TTL that the janitor has not swept yet is gone for the user: treat it as expired.
  if (!sameUpdate && job.status === "ready" && !resultAlive && (await store.expire(job.id, "ready", now))) {
    jlog.info("re-sent file found its result past RESULT_TTL: expired before re-arming");
    job = { ...job, status: "expired" };
  }
  // A re-sent file may run again when the old try ended for a reason a new try can fix.
  const rearmable =
    !sameUpdate &&
    (job.status === "expired" || (job.status === "failed" && job.reason !== null && isReasonCode(job.reason) && RETRY_ON_RESEND.has(job.reason)));
  if (rearmable) {
    if (!tooBig && (await store.rearm(job.id, job.status as "failed" | "expired", { fileId: input.fileId, updateId: input.updateId, messageId: input.messageId, languageCode: input.languageCode }, now))) {
      const fresh = (await store.get(job.id)) ?? job;
      jlog.info("re-sent file re-armed the job");
      announce(services, fresh, ctx.t("intake-accepted", { id: String(job.id), name: displayName(fresh.declaredName, fresh.id, fresh.source) }));
      services.wake();
      return;
    }
  }
  // A redelivered update (same update_id: the bot stopped before confirming it) was handled the
  // first time, results included: answer with the job, never send the results a second time.
  if (resultAlive && !sameUpdate) {
    jlog.info("re-sent file: answering from the stored result");
    const said = services.reply(input.chatId, ctx.t("intake-duplicate-ready", { id: String(job.id) }), { replyTo: input.messageId });
    services.background(async () => (await said, services.delivery.redeliver(job, localeFor(input.languageCode))), "re-delivery");
    return;
  }
  jlog.info({ status: job.status, same_update: sameUpdate }, "duplicate file: answering with the existing job");
  void services.reply(input.chatId, ctx.t("intake-duplicate", { id: String(job.id), status: ctx.t(`state-${job.status}`) }), { replyTo: input.messageId });
}

/** The job's first status message, sent in the background: the INSERT is what must be done before the handler returns. */
function announce(services: Services, job: FileJob, text: string): void {
  services.background(() => services.status.announce(job, text), "status announce");
}

/** Failure reasons a re-sent file may retry (the file or Telegram may have changed, not the content). */
const RETRY_ON_RESEND: ReadonlySet<ReasonCode> = new Set<ReasonCode>(["size_mismatch", "file_unavailable", "file_not_readable", "download_failed", "processing_timeout", "processing_crashed", "too_much_memory", "delivery_failed", "cancelled", "attempts_exhausted", "too_big", "pdf_engine_unavailable"]);
