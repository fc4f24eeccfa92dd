/**
 * Reason codes for a job that ends `failed` (seed 000: "ошибка с понятной причиной").
 *
 * One vocabulary for the whole project: processors, the download step, the engine,
 * the chat messages (`bot/locales/<lang>/reasons.ftl`, key `reason-<code>`) and
 * `docs/operations.md` all use these exact strings. The fixture README's codes
 * (`not_pdf`, `unsupported_type`, `encrypted`, `truncated`, `corrupt`,
 * `too_many_pixels`, `empty`) are a subset.
 */
export const REASON_CODES = [
  // intake / download
  "too_big", // declared or real size over the current mode's download limit (Bot API: getFile "file is too big")
  "size_mismatch", // real size on disk differs from the declared file_size
  "file_unavailable", // getFile keeps answering "invalid file_id" / "wrong file_id or the file is temporarily unavailable"
  "file_not_readable", // local mode: file_path missing, outside the Bot API dir, or EACCES
  "download_failed", // network/HTTP failures after the attempt budget
  // content
  "empty", // 0 bytes, or a PDF with 0 pages
  "not_pdf", // named/declared as PDF but the content is nothing we process
  "unsupported_type", // a type docket does not process (SVG, HEIC, ZIP/DOCX, unknown bytes)
  "encrypted", // PDF needs a user password
  "truncated", // file cut short (PDF without trailer, JPEG without EOI)
  "corrupt", // valid signature, nothing parseable after it
  "too_many_pixels", // image header declares more pixels than the configured limit
  "too_many_pages", // PDF page count over the configured cap
  "pdf_engine_unavailable", // pdf.js could not be loaded (startup self-check failed)
  // processing / delivery
  "processing_timeout", // the processor child exceeded its wall-clock budget
  "processing_crashed", // the processor child died (crash, signal, unexpected throw)
  "too_much_memory", // the processor child passed the memory cap (PROCESS_MEMORY_MB); final, not retried
  "result_too_big", // an output is over the current mode's result-upload limit
  "delivery_failed", // Telegram refused the result upload after the attempt budget
  // user / operator
  "cancelled", // /cancel N
  "daily_quota", // an album part that came after the sender reached USER_MAX_BYTES_PER_DAY: left out of the album
  "attempts_exhausted", // generic: retries used up without a more specific reason
] as const;

/** A reason code from {@link REASON_CODES}. */
export type ReasonCode = (typeof REASON_CODES)[number];

/** Narrow an arbitrary string to a {@link ReasonCode}. */
export function isReasonCode(value: string): value is ReasonCode {
  return (REASON_CODES as readonly string[]).includes(value);
}
