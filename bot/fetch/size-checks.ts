/**
 * Size checks of a download (seed 000: "Реальный размер берётся с диска после
 * скачивания и сравнивается с заявленным; расхождение — повод для статуса «ошибка»";
 * "Отсутствие размера в сообщении не означает «можно»").
 */
import type { TryFailure } from "../jobs/retry.ts";
import { mb } from "../intake/format.ts";

/** A failure when `size` breaks the limit or (when final) differs from the declared size; null when fine. */
export function checkSize(size: number, declared: number | null, limit: number, final: boolean): TryFailure | null {
  if (size > limit) {
    return { reason: "too_big", retryable: false, params: { size: mb(size), limit: mb(limit) }, detail: `real size ${size} B over the download limit ${limit} B` };
  }
  if (declared !== null && (size > declared || (final && size !== declared))) {
    return { reason: "size_mismatch", retryable: false, params: { size_bytes: size, declared_bytes: declared }, detail: `real size ${size} B differs from the declared ${declared} B` };
  }
  return null;
}

/**
 * {@link checkSize} against every size Telegram gave: the message's `file_size` and getFile's
 * `file_size` (either may be absent; a message without a size is still checked against getFile's).
 * @param final true once the whole body is on disk (then the sizes must match exactly)
 */
export function checkAgainst(size: number, sizes: { declared: number | null; announced: number | null }, limit: number, final: boolean): TryFailure | null {
  return checkSize(size, sizes.declared, limit, final) ?? (sizes.announced === null ? null : checkSize(size, sizes.announced, limit, final));
}
