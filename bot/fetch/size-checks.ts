/**
 * Size checks of a download (seed 000: "Реальный размер берётся с диска после
 * скачивания и сравнивается с заявленным; расхождение — повод для статуса «ошибка»").
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
