/**
 * Classifying download failures into reason codes (seed 000: "ошибка с понятной
 * причиной"; field cases BR-01, BR-02, BR-03).
 */
import { GrammyError, HttpError } from "grammy";
import type { TryFailure } from "../jobs/retry.ts";
import { mb } from "../intake/format.ts";
import { redactSecrets } from "../log.ts";

/** The cloud Bot API's getFile limit, bytes (MAX_DOWNLOAD_FILE_SIZE = 20 << 20; botapi-facts.md §1). */
export const CLOUD_GETFILE_LIMIT = 20 << 20;

/** A failure of the fetch step with its classification. */
export class FetchError extends Error {
  /** @param failure reason, retryability, chat params and operator detail */
  constructor(readonly failure: TryFailure) {
    super(failure.detail);
    this.name = "FetchError";
  }
}

/**
 * Map a getFile error to a failure (Bot API error strings, botapi-facts.md §1):
 * "file is too big" → `too_big` (final; params `size: "none"` and the configured
 * `limitBytes` in MB: every figure in chat text comes from the configuration, issue 11
 * item 5 — start-up warns when DOWNLOAD_LIMIT_CLOUD is above the cloud's own limit); "invalid file_id" / "wrong file_id or the
 * file is temporarily unavailable" → `file_unavailable` (retried up to the attempt
 * budget); anything else → `download_failed` (retried).
 */
export function classifyGetFileError(err: unknown, limitBytes: number): TryFailure {
  if (err instanceof GrammyError) {
    const d = err.description;
    if (/file is too big/i.test(d)) {
      // Only the cloud Bot API refuses this way, by its own limit, and the size may be unknown:
      // `size: "none"` selects the message without a size (audit M5).
      return { reason: "too_big", retryable: false, params: { size: "none", limit: mb(limitBytes) }, detail: `getFile: ${d}` };
    }
    if (/invalid file_id|wrong file_id|temporarily unavailable|file_id not specified/i.test(d)) {
      return { reason: "file_unavailable", retryable: true, detail: `getFile: ${d}` };
    }
    return { reason: "download_failed", retryable: true, detail: `getFile: ${err.error_code} ${d}` };
  }
  if (err instanceof HttpError) {
    return { reason: "download_failed", retryable: true, detail: `getFile: network error: ${redactSecrets(String(err.error))}` };
  }
  return { reason: "download_failed", retryable: true, detail: `getFile: ${redactSecrets(String(err))}` };
}
