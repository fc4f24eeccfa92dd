/**
 * The job every queue in the benchmark carries: one docket `NewJob` (what intake records for a
 * Telegram document, seed 000 "Что записать при приёме"). docket stores it as columns; a peer
 * queue stores the same object as its JSON job data, so both write the same bytes of payload.
 */
import type { NewJob } from "../../bot/jobs/store.ts";

/** Declared size of every benchmark document, bytes (1 MiB: far below any limit or budget). */
export const DECLARED_SIZE = 1_048_576;

/**
 * The `i`-th job of a run: distinct `file_unique_id` per job, `chats` private chats in turn
 * (chat id = user id, as in a private chat). Field lengths follow real Bot API ids
 * (file_id ≈ 70 characters, file_unique_id ≈ 16).
 * @param i 0-based job index
 * @param chats how many distinct chats the jobs are spread over (≥ 1)
 */
export function benchJob(i: number, chats: number): NewJob {
  const chatId = 100_000 + (i % chats);
  const unique = `AgAD${i.toString(36).padStart(12, "0")}`;
  return {
    updateId: 500_000 + i,
    chatId,
    userId: chatId,
    messageId: 10 + i,
    source: "document",
    fileId: `BQACAgIAAxkBAAI${i.toString(36).padStart(8, "0")}ZmVjZGY0YjE2NjEwMjM0NTY3ODlhYmNkZWYwMTIzNDU2Nzg5YWJj`,
    fileUniqueId: unique,
    declaredName: `report-${i}.pdf`,
    declaredMime: "application/pdf",
    declaredSize: DECLARED_SIZE,
    languageCode: "ru",
  };
}
