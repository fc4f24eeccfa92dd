/**
 * Actions on a result (issue 15): the buttons of a job's final message and the page ranges asked for in
 * a reply. Every action is a job like any file (`store.intake`: one transaction, statuses, leases, limits,
 * expiry) from the same source `file_id` with the action as its variant, so pressing twice is one job.
 * Callback data is validated (bot/actions/callback-data.ts) and chat-scoped: the job must belong to the
 * chat the button was pressed in, else it is "not found" there (Bot API CallbackQuery.data: a client may
 * send data no button of the message has). In groups only the job's sender, an admin of the group
 * (getChatMember through bot/intake/chat-admins.ts, cached, never awaited by the handler) or a bot admin
 * (ADMIN_USER_IDS) may press them (bot/intake/sender.ts `mayActOnJob`); a refused press is answered and
 * makes nothing. The question a press opens belongs to the presser — to the group's anonymous admins
 * when the presser is one (their answer comes `from` GroupAnonymousBot with `sender_chat` = the group).
 * A job whose result expired says so and loses its buttons. A range is checked against the page count
 * before a job is made; a wrong one, or a turn other than 90°/180°/270°, gets one clear message and no job.
 */
import { Composer } from "grammy";
import { localeFor, type DocketContext } from "../i18n/index.ts";
import type { FileJob } from "../db/schema.ts";
import type { NewJob } from "../jobs/store.ts";
import { isResultAlive } from "../jobs/states.ts";
import type { Services } from "../services.ts";
import { parseActionData, type ActionCode } from "../actions/callback-data.ts";
import { actionKeyboard, compressKeyboard, rotateKeyboard, SEARCHABLE } from "../actions/keyboard.ts";
import { actionSource, type ActionSource } from "../actions/source.ts";
import { mergePress, mergePrompt, PROMPT_MAX_AGE_MS } from "../actions/prompts.ts";
import { formatAction, isRotation, type PdfToolAction } from "../../processors/pdftools/action.ts";
import { parseRanges, type PageRange, type RangeProblem } from "../../processors/page-ranges.ts";
import type { Facts } from "../../processors/types.ts";
import { answerQuery } from "./answer-query.ts";
import type { ChatAdmins } from "./chat-admins.ts";
import { replyText } from "./files.ts";
import { mayActOnJob, senderOf } from "./sender.ts";

/** The action a button makes at once, or null for menus and questions. */
function directAction(code: ActionCode): PdfToolAction | "searchable" | null {
  switch (code) {
    case "r90":
    case "r180":
    case "r270":
      return { tool: "rotate", degrees: Number(code.slice(1)) as 90 | 180 | 270, ranges: null };
    case "ce":
      return { tool: "compress", level: "ebook" };
    case "cs":
      return { tool: "compress", level: "strong" };
    case "pdf":
      return { tool: "topdf" };
    case "ocr":
      return SEARCHABLE ? "searchable" : null;
    default:
      return null;
  }
}

/**
 * The Composer with the action buttons and the answers to their questions.
 * @param admins getChatMember answers (the same cache /settings and /delete use)
 */
export function actions(services: Services, admins: ChatAdmins): Composer<DocketContext> {
  const { store, config, log } = services;
  const c = new Composer<DocketContext>();
  const facts = (job: FileJob): Facts | null => (job.facts ? (JSON.parse(job.facts) as Facts) : null);
  const say = (chatId: number, text: string, replyTo?: number): void => void services.reply(chatId, text, replyTo !== undefined ? { replyTo } : {});

  /**
   * Make the action's job from `source` (store.intake, like a file) and send its reply.
   * @param userId whom the new job belongs to: the presser, or the sender of the answer to a question
   */
  async function makeJob(ctx: DocketContext, job: FileJob, source: ActionSource, action: PdfToolAction | "searchable", userId: number): Promise<void> {
    const variant = action === "searchable" ? "searchable" : formatAction(action);
    const input: NewJob = { ...source.file, updateId: ctx.update.update_id, chatId: job.chatId, userId, messageId: job.messageId, languageCode: ctx.from?.language_code ?? null, variant };
    const admin = config.adminUserIds.includes(input.userId);
    const outcome = await store.intake(input, services.now(), {
      edited: false,
      tooBig: null,
      limits: { maxInFlight: admin ? Number.POSITIVE_INFINITY : config.userMaxJobsInFlight, maxBytesPerDay: admin ? Number.POSITIVE_INFINITY : config.userMaxBytesPerDay },
      render: (d, row) =>
        d.kind === "accept" || d.kind === "rearm" ? ctx.t("action-accepted", { id: String(row!.id), source: String(job.id), action: ctx.t(`action-name-${variant.split(":")[0]}`) }) : replyText(ctx, d, row, null, config),
    });
    log.info({ job: outcome.job?.id ?? null, from_job: job.id, variant, decision: outcome.decision.kind }, "action pressed");
    if (outcome.reply) services.replies.deliver(outcome.reply, outcome.job);
    if (outcome.decision.kind === "accept" || outcome.decision.kind === "rearm") services.wake();
  }

  /** Replace the keyboard of the pressed message (a chat-bound call: through the outbox, contract 7). */
  const editKeyboard = (chatId: number, messageId: number | undefined, reply_markup: unknown): void => {
    if (messageId === undefined) return;
    services.background(() => services.post(chatId, { method: "editMessageReplyMarkup", messageId, other: { reply_markup } as never }), "action keyboard");
  };

  c.callbackQuery(/^a:/, async (ctx) => {
    const data = parseActionData(ctx.callbackQuery.data);
    const chat = ctx.chat;
    if (!data || chat === undefined || !ctx.from) return answerQuery(services, ctx);
    const job = await store.get(data.jobId);
    // Chat-scoped: a job of another chat is "not found" here, whatever the data says — the same answer as
    // for a job that does not exist, and no getChatMember: nothing about the other chat's job is told.
    if (!job || job.chatId !== chat.id) return answerQuery(services, ctx, { text: ctx.t("cmd-not-found", { id: String(data.jobId) }) });
    // A press has no sender_chat: the presser is `from`, even an anonymous admin (bot/intake/sender.ts).
    const presser = senderOf({ from: ctx.from, chat });
    const verdict = presser ? mayActOnJob(job.userId, presser, chat.type, config.adminUserIds) : "no";
    await admins.whenKnown(services, chat.id, ctx.from.id, verdict, (ok) => (ok ? onPress(ctx, job, data.code) : answerQuery(services, ctx, { text: ctx.t("action-not-yours", { id: String(job.id) }) })), "action button");
  });

  /** An allowed press of button `code` of `job`. */
  async function onPress(ctx: DocketContext & { from: NonNullable<DocketContext["from"]> }, job: FileJob, code: ActionCode): Promise<void> {
    const chatId = job.chatId;
    const pressed = ctx.callbackQuery?.message?.message_id;
    // The question's answer comes from whoever the presser writes as: an anonymous admin writes as the group.
    const asker = admins.anonymous(chatId, ctx.from.id) ? chatId : ctx.from.id;
    const source = isResultAlive(job, services.now()) ? actionSource(job, facts(job), await store.results(job.id)) : null;
    if (!source) {
      // Nothing dead stays on offer: the buttons go, the user is told why.
      answerQuery(services, ctx, { text: ctx.t("action-expired", { id: String(job.id) }) });
      editKeyboard(chatId, pressed, { inline_keyboard: [] });
      return;
    }
    const lang = localeFor(ctx.from.language_code);
    switch (code) {
      case "rot":
        answerQuery(services, ctx);
        return editKeyboard(chatId, pressed, rotateKeyboard(lang, job.id));
      case "cmp":
        answerQuery(services, ctx);
        return editKeyboard(chatId, pressed, compressKeyboard(lang, job.id));
      case "back":
        answerQuery(services, ctx);
        return editKeyboard(chatId, pressed, actionKeyboard(lang, job.id, source, SEARCHABLE));
      case "mrg": {
        if (source.kind !== "pdf") return answerQuery(services, ctx);
        // The files this user sends next (within the question's window) join this file in one merge job (bot/intake/files.ts).
        await store.setPrompt({ chatId, userId: asker, jobId: job.id, action: mergePrompt(ctx.update.update_id) }, services.now());
        answerQuery(services, ctx);
        void services.reply(chatId, ctx.t("action-ask-merge", { id: String(job.id), seconds: Math.round(config.mergeQuietMs / 1000) }), { replyTo: pressed ?? job.messageId });
        return;
      }
      case "ext":
      case "spl":
      case "rrng": {
        if (source.kind !== "pdf") return answerQuery(services, ctx);
        const action = code === "ext" ? "extract" : code === "spl" ? "split" : "rotate";
        await store.setPrompt({ chatId, userId: asker, jobId: job.id, action }, services.now());
        answerQuery(services, ctx);
        void services.reply(chatId, ctx.t(`action-ask-${action}`, { id: String(job.id), pages: source.pages }), { replyTo: pressed ?? job.messageId, replyMarkup: { force_reply: true, selective: true } });
        return;
      }
    }
    const action = directAction(code);
    if (!action || (source.kind === "image") !== (action !== "searchable" && action.tool === "topdf")) return answerQuery(services, ctx);
    answerQuery(services, ctx);
    await makeJob(ctx, job, source, action, ctx.from.id);
  }

  // The answer to "which pages?": the user's next text in the chat while the question is open.
  c.on("message:text", async (ctx, next) => {
    if (ctx.message.text.startsWith("/")) return next();
    // The question is the sender's: a person's own, or (sender_chat = the group) the anonymous admins'.
    const sender = senderOf(ctx.message);
    if (!sender) return next();
    const prompt = await store.takePrompt(ctx.chat.id, sender.id, services.now(), PROMPT_MAX_AGE_MS);
    if (!prompt) return next();
    const replyTo = ctx.message.message_id;
    // A merge is answered with files, not text: text before any file means there is nothing to merge with.
    if (mergePress(prompt.action) !== null) return say(ctx.chat.id, ctx.t("action-merge-one", { id: String(prompt.jobId) }), replyTo);
    const job = await store.get(prompt.jobId);
    const source = job && isResultAlive(job, services.now()) ? actionSource(job, facts(job), await store.results(job.id)) : null;
    if (!job || !source) return say(ctx.chat.id, ctx.t("action-expired", { id: String(prompt.jobId) }), replyTo);
    const answer = parseAnswer(prompt.action, ctx.message.text, source.pages);
    if ("problem" in answer) {
      // One clear message, no job; the question stays open for a corrected answer.
      await store.setPrompt({ chatId: prompt.chatId, userId: prompt.userId, jobId: prompt.jobId, action: prompt.action }, services.now());
      return say(ctx.chat.id, problemText(ctx, answer.problem, source.pages), replyTo);
    }
    await makeJob(ctx, job, source, answer.action, sender.id);
  });

  return c;
}

/** A typed answer to a question, or why it is refused. */
type Answer = { readonly action: PdfToolAction } | { readonly problem: RangeProblem | { readonly kind: "angle"; readonly angle: string } | { readonly kind: "single" } };

/**
 * Parse the answer to question `question` (`extract`, `split`, `rotate`) against `pages`. Split with one
 * range makes one file per page of it; with several, one file per range (at least two parts). Rotate is
 * `<ranges> <angle>` (`1-3 90`).
 */
export function parseAnswer(question: string, text: string, pages: number): Answer {
  let rangesText = text;
  let angle: number | null = null;
  if (question === "rotate") {
    const m = /^(.*?)[\s,]+(-?\d+(?:[.,]\d+)?)\s*°?\s*$/.exec(text.trim());
    if (!m) return { problem: { kind: "syntax", item: text.trim().slice(0, 20) } };
    if (!isRotation(Number(m[2]))) return { problem: { kind: "angle", angle: m[2]! } };
    rangesText = m[1]!;
    angle = Number(m[2]);
  }
  const r = parseRanges(rangesText, pages);
  if (!r.ok) return { problem: r.problem };
  if (question === "rotate") return { action: { tool: "rotate", degrees: angle as 90 | 180 | 270, ranges: r.ranges } };
  if (question === "extract") return { action: { tool: "extract", ranges: r.ranges } };
  const parts: PageRange[] = r.ranges.length === 1 ? perPage(r.ranges[0]!) : r.ranges;
  if (parts.length < 2) return { problem: { kind: "single" } };
  return { action: { tool: "split", ranges: parts } };
}

/** One range per page of `r`. */
function perPage(r: PageRange): PageRange[] {
  return Array.from({ length: r.to - r.from + 1 }, (_, i) => ({ from: r.from + i, to: r.from + i }));
}

/** The chat text for a refused answer. */
function problemText(ctx: DocketContext, p: Exclude<Answer, { action: unknown }>["problem"], pages: number): string {
  switch (p.kind) {
    case "past_end":
      return ctx.t("action-range-past-end", { item: p.item, pages });
    case "backwards":
      return ctx.t("action-range-backwards", { item: p.item });
    case "too_many":
      return ctx.t("action-range-too-many", { limit: p.limit });
    case "angle":
      return ctx.t("action-angle", { angle: p.angle });
    case "single":
      return ctx.t("action-split-single");
    case "syntax":
      return ctx.t("action-range-syntax", { item: p.item, pages });
  }
}

