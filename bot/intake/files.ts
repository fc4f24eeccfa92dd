/**
 * Intake of documents and photos (seed 000: "дежурный в приёмном покое"):
 * check, one transaction (`JobStore.intake`: the job row in `accepted` and its reply "accepted, job
 * N"), hand the reply to the sender, return. No disk and no other network in the handler. The same
 * file sent again answers with the existing job (or re-arms it, or re-sends its live result); a
 * redelivered update was answered the first time; a declared size over the mode's download limit is
 * refused at once, inserted as `failed` / `too_big` (bot/jobs/intake-rules.ts).
 */
import { Composer } from "grammy";
import type { PhotoSize } from "grammy/types";
import { downloadLimit } from "../config.ts";
import type { DocketContext } from "../i18n/index.ts";
import type { FileJob } from "../db/schema.ts";
import type { NewJob, NewPart } from "../jobs/store.ts";
import { validDeclaredSize, type IntakeDecision } from "../jobs/intake-rules.ts";
import type { Services } from "../services.ts";
import { displayName, mb } from "./format.ts";
import { isResultAlive } from "../jobs/states.ts";
import { actionSource } from "../actions/source.ts";
import { mergePress, PROMPT_MAX_AGE_MS } from "../actions/prompts.ts";
import type { Facts } from "../../processors/types.ts";
import { senderOf } from "./sender.ts";
import { RefusedAlbums } from "./refused-albums.ts";

/** How long the refusal of an album's first part covers its later parts, ms (Telegram sends an album's parts within seconds). */
const REFUSED_ALBUM_KEEP_MS = 10 * 60_000;

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
  const sender = msg ? senderOf(msg) : null;
  if (!msg || !ctx.from || !sender || !ctx.update) return null;
  const base = {
    updateId: ctx.update.update_id,
    chatId: msg.chat.id,
    // The job's owner: `sender_chat` for an anonymous admin or a channel (bot/intake/sender.ts).
    userId: sender.id,
    messageId: msg.message_id,
    languageCode: ctx.from.language_code ?? null,
  };
  if (msg.document) {
    const d = msg.document;
    return { ...base, source: "document", fileId: d.file_id, fileUniqueId: d.file_unique_id, declaredName: d.file_name ?? null, declaredMime: d.mime_type ?? null, declaredSize: validDeclaredSize(d.file_size) };
  }
  if (msg.photo) {
    const p = largestPhoto(msg.photo);
    if (!p) return null;
    return { ...base, source: "photo", fileId: p.file_id, fileUniqueId: p.file_unique_id, declaredName: null, declaredMime: "image/jpeg", declaredSize: validDeclaredSize(p.file_size) };
  }
  return null;
}

/** The Composer that turns documents and photos into jobs. */
export function fileIntake(services: Services): Composer<DocketContext> {
  const { config, store, log } = services;
  const c = new Composer<DocketContext>();
  // One refusal per album: its later parts are not refused again (bot/intake/refused-albums.ts).
  const refusedAlbums = new RefusedAlbums(REFUSED_ALBUM_KEEP_MS);

  c.on(["message:document", "message:photo", "edited_message:document", "edited_message:photo"], async (ctx) => {
    const parsed = newJobFrom(ctx);
    if (!parsed) return;
    // The chat's /settings choose the processing variant; it is part of the idempotency key.
    const input: NewJob = { ...parsed, variant: (await store.getSettings(parsed.chatId)).pdfAction };
    const groupId = (ctx.message ?? ctx.editedMessage)?.media_group_id;
    // An album's edit (a new caption) changes none of its files: nothing to do.
    if (groupId !== undefined && ctx.editedMessage) return;
    if (!ctx.editedMessage && (await mergePart(ctx, input))) return;
    let lateFor: FileJob | null = null;
    if (groupId !== undefined) {
      const accepted = (id: number) => ctx.t("intake-album-accepted", { id: String(id) });
      const taken = await albumPart(ctx, input, `album:${groupId}`, config.albumQuietMs, accepted);
      if (taken === true) return;
      lateFor = taken.late;
    }
    await takeFile(ctx, input, lateFor);
  });

  /**
   * A file sent while the user's "merge with the next files" question is open (issue 15 item 3): a part
   * of the merge job of that press, whose first part is the file the merge started from. False when no
   * merge is open (or its job started already): the file is taken as usual.
   */
  async function mergePart(ctx: DocketContext, input: NewJob): Promise<boolean> {
    const prompt = await store.getPrompt(input.chatId, input.userId, services.now(), PROMPT_MAX_AGE_MS);
    const press = prompt ? mergePress(prompt.action) : null;
    if (!prompt || press === null) return false;
    const from = await store.get(prompt.jobId);
    const source = from && isResultAlive(from, services.now()) && from.facts ? actionSource(from, JSON.parse(from.facts) as Facts, await store.results(from.id)) : null;
    if (!from || !source || source.kind !== "pdf") return false;
    const f = source.file;
    const seed: NewPart = {
      // Not a real update: the press's update_id, negated, keeps job_parts.update_id unique.
      updateId: -press,
      messageId: from.messageId,
      source: f.source === "photo" ? "photo" : "document",
      fileId: f.fileId,
      fileUniqueId: f.fileUniqueId,
      declaredName: f.declaredName,
      declaredMime: f.declaredMime,
      declaredSize: f.declaredSize,
      reserveSize: f.declaredSize ?? downloadLimit(config),
      tooBig: null,
    };
    const accepted = (id: number) => ctx.t("action-merge-accepted", { id: String(id), source: String(from.id), seconds: Math.round(config.mergeQuietMs / 1000) });
    return (await albumPart(ctx, { ...input, declaredName: f.declaredName }, `merge:${from.id}:${press}`, config.mergeQuietMs, accepted, seed)) === true;
  }

  /**
   * One part of an album (issue 13 item 5) or of a merge (`key`): recorded on its multi-part job, one
   * reply (`accepted`) for the whole job — true. A part after the sender's bytes of the day is recorded
   * too, left out (`daily_quota`) and named in the final message. `{ late }` when that job's download had
   * finished before this part came (docs/processors.md "Albums": the rule for a late part): it is then a
   * file of its own, and its reply says so.
   */
  async function albumPart(ctx: DocketContext, input: NewJob, key: string, quietMs: number, accepted: (jobId: number) => string, seed?: NewPart): Promise<true | { late: FileJob }> {
    const limit = downloadLimit(config);
    const size = input.declaredSize;
    const tooBig = size !== null && size > limit ? { params: { size: mb(size), limit: mb(limit) }, detail: `declared ${size} B over the ${config.mode} download limit ${limit} B` } : null;
    const album: NewJob = { ...input, source: "album", fileId: key, fileUniqueId: key, declaredName: seed ? input.declaredName : null, declaredMime: null, declaredSize: null };
    const part: NewPart = {
      updateId: input.updateId,
      messageId: input.messageId,
      source: input.source === "photo" ? "photo" : "document",
      fileId: input.fileId,
      fileUniqueId: input.fileUniqueId,
      declaredName: input.declaredName,
      declaredMime: input.declaredMime,
      declaredSize: input.declaredSize,
      // Seed 000: reserve by the upper bound; a part over the limit is never downloaded.
      reserveSize: tooBig ? 0 : (size ?? limit),
      tooBig,
    };
    const admin = config.adminUserIds.includes(input.userId);
    const refusedKey = `${input.chatId}:${key}`;
    if (refusedAlbums.has(refusedKey, services.now())) {
      log.info({ file_unique_id: input.fileUniqueId, key }, "album part of an album refused by a per-user limit: no second refusal");
      return true;
    }
    const outcome = await store.intakeAlbumPart(album, part, services.now(), quietMs, {
      edited: false,
      tooBig: null,
      limits: {
        maxInFlight: admin ? Number.POSITIVE_INFINITY : config.userMaxJobsInFlight,
        maxBytesPerDay: admin ? Number.POSITIVE_INFINITY : config.userMaxBytesPerDay,
      },
      render: (d, job) => (d.kind === "accept" ? accepted(job!.id) : replyText(ctx, d, job, null, config)),
      partOverQuota: (used) => ({
        params: { used: mb(used), limit: mb(config.userMaxBytesPerDay) },
        detail: `the sender used ${used} B of USER_MAX_BYTES_PER_DAY ${config.userMaxBytesPerDay} B in the last 24 h`,
      }),
    }, seed);
    const flog = log.child({ file_unique_id: input.fileUniqueId, key });
    switch (outcome.kind) {
      case "late":
        flog.info({ job: outcome.job.id, status: outcome.job.status }, "album part came after its album's download had finished: taken as a file of its own");
        return { late: outcome.job };
      case "redelivered":
        flog.info({ job: outcome.job.id }, "redelivered update: its album part is recorded");
        return true;
      case "added":
        if (outcome.refused) flog.info({ job: outcome.job.id, user_id: input.userId, limit: config.userMaxBytesPerDay }, "album part left out: the sender's bytes of the day are used up");
        else flog.info({ job: outcome.job.id, too_big: tooBig !== null, downloading: outcome.job.leaseOwner !== null }, "album part added");
        return true;
      case "first": {
        const { decision: d, job, reply } = outcome.intake;
        if (d.kind === "accept") flog.info({ job: job!.id, chat_id: input.chatId, too_big: tooBig !== null }, "accepted an album");
        else {
          flog.info({ decision: d.kind }, "album refused");
          if (d.kind === "limit") refusedAlbums.remember(refusedKey, services.now());
        }
        if (reply) services.replies.deliver(reply, job);
        return true;
      }
    }
  }

  /**
   * Intake of one file message (seed 000): the decision, the job row and its reply in one transaction.
   * `lateFor`: the album this file was a part of, whose download had finished before it came — the
   * accepted reply says it is a job of its own.
   */
  async function takeFile(ctx: DocketContext, input: NewJob, lateFor: FileJob | null = null): Promise<void> {
    const now = services.now();
    const limit = downloadLimit(config);
    const size = input.declaredSize;
    const tooBigParams = size !== null && size > limit ? { size: mb(size), limit: mb(limit) } : null;
    const admin = config.adminUserIds.includes(input.userId);
    // One transaction: the decision (size limit first, then the per-user quota), the job row and the
    // reply; the reply is sent from its record, so a crash after this update is confirmed never loses it.
    const outcome = await store.intake(input, now, {
      edited: ctx.editedMessage !== undefined,
      tooBig: tooBigParams && { params: tooBigParams, detail: `declared ${size} B over the ${config.mode} download limit ${limit} B` },
      limits: {
        maxInFlight: admin ? Number.POSITIVE_INFINITY : config.userMaxJobsInFlight,
        maxBytesPerDay: admin ? Number.POSITIVE_INFINITY : config.userMaxBytesPerDay,
      },
      render: (d, job) =>
        lateFor && (d.kind === "accept" || d.kind === "rearm")
          ? ctx.t("intake-album-late", { id: String(job!.id), album: String(lateFor.id), name: displayName(job!.declaredName, job!.id, job!.source) })
          : replyText(ctx, d, job, tooBigParams, config),
    });
    const { decision: d, job, reply } = outcome;
    const jlog = job ? log.child({ job: job.id, file_unique_id: job.fileUniqueId }) : log.child({ file_unique_id: input.fileUniqueId });
    switch (d.kind) {
      case "accept":
        jlog.info({ chat_id: input.chatId, declared_size: input.declaredSize, source: input.source }, "accepted");
        break;
      case "rearm":
        jlog.info({ from: d.from }, d.expireFirst ? "re-sent file found its result past RESULT_TTL: expired and re-armed" : "re-sent file re-armed the job");
        break;
      case "too_big":
        services.metrics.jobsEnded.inc({ status: "failed", reason: "too_big" });
        jlog.info({ declared_size: size, limit }, "refused at intake: declared size over the download limit");
        break;
      case "too_big_again":
        jlog.info({ declared_size: size, limit }, "re-sent file is still over the download limit: told why again");
        break;
      case "limit":
        jlog.info({ user_id: input.userId, limit: d.limit }, "refused by a per-user limit");
        break;
      case "resend":
        jlog.info("re-sent file: answering from the stored result");
        break;
      case "duplicate":
        jlog.info({ status: job?.status }, "duplicate file: answering with the existing job");
        break;
      case "redelivered":
        jlog.info("redelivered update: answered when it was first handled");
        break;
      case "edit_kept_file":
        jlog.debug("edited message with the same file: nothing to do");
        break;
    }
    if (reply) services.replies.deliver(reply, job);
    if (d.kind === "accept" || d.kind === "rearm") services.wake();
  }

  return c;
}

/**
 * The reply text of an intake decision in the user's language (null: no reply); exported for the
 * action jobs of issue 15 (bot/intake/actions.ts), which go through the same intake. Every size figure
 * comes from the declared size and the configured limit (issue 11 item 5: no fixed "20 MB").
 */
export function replyText(
  ctx: DocketContext,
  d: IntakeDecision,
  job: FileJob | null,
  tooBig: { size: number; limit: number } | null,
  config: Pick<Services["config"], "userMaxJobsInFlight" | "userMaxBytesPerDay">,
): string | null {
  switch (d.kind) {
    case "accept":
    case "rearm":
      return ctx.t("intake-accepted", { id: String(job!.id), name: displayName(job!.declaredName, job!.id, job!.source) });
    case "too_big":
    case "too_big_again":
      return ctx.t("intake-too-big", { id: String(job!.id), size: tooBig!.size, limit: tooBig!.limit });
    case "limit":
      return d.limit === "in_flight"
        ? ctx.t("intake-limit-in-flight", { count: String(d.count), limit: String(config.userMaxJobsInFlight) })
        : ctx.t("intake-limit-bytes", { used: mb(d.used), limit: mb(config.userMaxBytesPerDay) });
    case "resend":
      return ctx.t("intake-duplicate-ready", { id: String(job!.id) });
    case "duplicate":
      return ctx.t("intake-duplicate", { id: String(job!.id), status: ctx.t(`state-${job!.status}`) });
    case "redelivered":
    case "edit_kept_file":
      return null;
  }
}
