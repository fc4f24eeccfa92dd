/**
 * classify(): translate a grammY error into the machine's language. The only place besides
 * the executor that knows grammY.
 *
 * Source: seed 002 "TelegramExecutor и classify — граница": retry_after → transient with a chat
 * hold; forbidden / chat gone / topic closed / not enough rights → STREAM_DEAD, checked *before*
 * the generic bad request (not enough rights arrives as a 400); message-level 400s → MESSAGE_DEAD;
 * "message is not modified" → success; everything else (HttpError, 5xx, unknown 400) → transient.
 * Posts (uploads, albums, keyboard edits; docket addition): any other 4xx is final too — the same
 * upload refused once (413, a bad file_id, a caption too long) is refused again — so its caller
 * gets the error at once; 5xx and network errors stay transient.
 * Error strings: botapi-facts.md §3.
 */
import type { Action, Result } from "./action.ts";

/** Description fragments (lower case) that doom the whole stream. */
const STREAM_DEAD = [
  "bot was blocked",
  "bot was kicked",
  "user is deactivated",
  "chat not found",
  "topic_closed",
  "topic closed",
  "topic_deleted",
  "message thread not found",
  "not enough rights",
  "have no rights to send",
  "chat_write_forbidden",
  "group chat was upgraded",
  "bot is not a member",
  "peer_id_invalid",
];

/** Description fragments (lower case) that doom one message only. */
const MESSAGE_DEAD = [
  "message to edit not found",
  "message is too long",
  "text is too long",
  "message text is empty",
  "can't parse entities",
  "can't parse messageentity",
  "button_data_invalid",
  "button_url_invalid",
  "reply markup is too long",
  "message can't be edited",
  "message can't be deleted",
  "message_id_invalid",
];

/** The fields of a Bot API error answer that classify reads (grammY's GrammyError has them). */
export interface BotApiErrorLike {
  readonly error_code: number;
  readonly description: string;
  readonly parameters?: { readonly retry_after?: number };
}

/**
 * True for an error carrying a Bot API error answer: numeric `error_code` and string
 * `description`. Checked by shape, not `instanceof GrammyError`, so an error from a second copy of
 * grammY in the dependency tree (or a wrapper) is still classified (audit-002 LOW 13).
 */
export function isBotApiError(err: unknown): err is BotApiErrorLike {
  if (typeof err !== "object" || err === null) return false;
  const e = err as { error_code?: unknown; description?: unknown };
  return typeof e.error_code === "number" && typeof e.description === "string";
}

/** "Bad Request: message is not modified: …": what we wanted is already there (seed: is_not_modified). */
export function isNotModified(err: unknown): boolean {
  return isBotApiError(err) && err.error_code === 400 && err.description.toLowerCase().includes("message is not modified");
}

/** "message to delete not found": the message is already gone, which is what a delete wanted (docket addition). */
function isAlreadyDeleted(err: unknown, action: Action): boolean {
  return (action.type === "delete" || action.type === "drop") && isBotApiError(err) && err.description.toLowerCase().includes("message to delete not found");
}

/**
 * Map an error thrown by a grammY Api call to a {@link Result}.
 * 429 → transient with retryAfterMs = parameters.retry_after·1000 (default 1 s when absent).
 */
export function classify(err: unknown, action: Action): Result {
  if (isNotModified(err) || isAlreadyDeleted(err, action)) return { ok: true };
  if (!isBotApiError(err)) {
    const reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    return { ok: false, kind: "transient", reason, error: err };
  }
  const reason = err.description;
  if (err.error_code === 429) {
    const retryAfterMs = (err.parameters?.retry_after ?? 1) * 1000;
    return { ok: false, kind: "transient", reason, error: err, retryAfterMs };
  }
  const d = reason.toLowerCase();
  if (err.error_code === 403 || STREAM_DEAD.some((m) => d.includes(m))) return { ok: false, kind: "stream_dead", reason, error: err };
  if (err.error_code === 400 && MESSAGE_DEAD.some((m) => d.includes(m))) return { ok: false, kind: "message_dead", reason, error: err };
  if (action.type === "post" && err.error_code >= 400 && err.error_code < 500) return { ok: false, kind: "message_dead", reason, error: err };
  return { ok: false, kind: "transient", reason, error: err };
}
