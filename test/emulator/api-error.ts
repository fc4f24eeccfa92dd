/**
 * Bot API error values and the exact descriptions the emulator answers with
 * (botapi-facts.md §3 table; TBA `fail_query_with_error` adds "Bad Request: " for 400, "Forbidden: " for 403).
 */

/** An error answer: `{"ok":false,"error_code":code,"description":…[,"parameters":{"retry_after":N}]}`, HTTP status = code. */
export class ApiError extends Error {
  /**
   * @param code HTTP status and error_code.
   * @param description full description string, prefix included.
   * @param retryAfter seconds for `parameters.retry_after` and the `Retry-After` header (429).
   */
  constructor(
    readonly code: number,
    readonly description: string,
    readonly retryAfter?: number,
  ) {
    super(description);
    this.name = "ApiError";
  }
}

/** 400 with the "Bad Request: " prefix (TBA `fail_query_with_error`). */
export function badRequest(detail: string): ApiError {
  return new ApiError(400, `Bad Request: ${detail}`);
}

/** 429 "Too Many Requests: retry after N" with retry_after N seconds (integer ≥ 1; TBA `set_retry_after_error`). */
export function tooManyRequests(waitMs: number): ApiError {
  const n = Math.max(1, Math.ceil(waitMs / 1000));
  return new ApiError(429, `Too Many Requests: retry after ${n}`, n);
}

/** Exact descriptions used in several places (botapi-facts.md §1–§3). */
export const E = {
  notFound: "Not Found",
  methodNotFound: "Not Found: method not found",
  unauthorized: "Unauthorized",
  invalidToken: "Unauthorized: invalid token specified",
  loggedOut: "Logged out",
  entityTooLarge: "Request Entity Too Large",
  notModified:
    "message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message",
  messageToEditNotFound: "message to edit not found",
  messageToDeleteNotFound: "message to delete not found",
  replyNotFound: "message to be replied not found",
  textEmpty: "message text is empty",
  messageTooLong: "message is too long",
  textTooLong: "text is too long",
  captionTooLong: "message caption is too long",
  chatNotFound: "chat not found",
  chatIdEmpty: "chat_id is empty",
  blocked: "Forbidden: bot was blocked by the user",
  noDocument: "there is no document in the request",
  noPhoto: "there is no photo in the request",
  wrongFileIdentifier: "wrong file identifier/HTTP URL specified",
  invalidFileId: "invalid file_id",
  fileIdNotSpecified: "file_id not specified",
  fileTooBig: "file is too big",
  fileUnavailable: "wrong file_id or the file is temporarily unavailable",
  fileEmpty: "file must be non-empty",
  conflictPoll: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
  conflictWebhook: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
  conflictSetWebhook: "Conflict: terminated by setWebhook request",
  alreadyClosed: "the bot has already been closed",
  draftPeerInvalid: "TEXTDRAFT_PEER_INVALID",
  wrongAction: "wrong parameter action in request",
  queryTooOld: "query is too old and response timeout expired or query ID is invalid",
} as const;
