/** Shared inputs of the SQLite JobStore suites: a fixed clock and intake's record of a test document. */
import type { NewJob } from "../../bot/jobs/store.ts";

/** The suites' "now": 2026-11-30T10:00:00.000Z, epoch ms. */
export const T0 = Date.parse("2026-11-30T10:00:00.000Z");
/** One MiB, bytes. */
export const MB = 1 << 20;

/**
 * The `n`-th document of a suite as intake records it (seed 000: "Что записать при приёме"):
 * chat and user 42, `file_unique_id` `U<n>`, declared 1 MiB PDF; `over` replaces fields.
 */
export const newJob = (n: number, over: Partial<NewJob> = {}): NewJob => ({
  updateId: 100 + n,
  chatId: 42,
  userId: 42,
  messageId: n,
  source: "document",
  fileId: `F${n}`,
  fileUniqueId: `U${n}`,
  declaredName: `f${n}.pdf`,
  declaredMime: "application/pdf",
  declaredSize: MB,
  languageCode: "en",
  ...over,
});
