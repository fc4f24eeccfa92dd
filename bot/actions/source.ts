/**
 * What an action works on (issue 15 item 1: "a new job from the same source file_id"). For a job that
 * processed a user's file, that file: the same `file_id` and `file_unique_id`, so the new job's key
 * differs only by its variant (pressing twice is one job). For a job whose result is a PDF docket made
 * (an album, a rotation, an extract, a compression), that PDF as Telegram stores it (the result's
 * `file_id`), keyed `result:<job id>`. Several results (a split, a ZIP of pages) offer no actions.
 */
import type { FileJob, JobResult } from "../db/schema.ts";
import type { NewJob } from "../jobs/store.ts";
import { parseAction } from "../../processors/pdftools/action.ts";
import type { Facts } from "../../processors/types.ts";

/** The file an action of a job starts from, and what fits it. */
export interface ActionSource {
  readonly file: Pick<NewJob, "source" | "fileId" | "fileUniqueId" | "declaredName" | "declaredMime" | "declaredSize">;
  /** `pdf`: rotate, extract, split, compress, searchable; `image`: to PDF. */
  readonly kind: "pdf" | "image";
  /** Pages of that PDF (page ranges are checked against it), 0 for an image. */
  readonly pages: number;
}

/** The source of `job`'s actions from its row, facts and results, or null when none fits (see the module doc). */
export function actionSource(job: FileJob, facts: Facts | null, results: readonly Pick<JobResult, "fileName" | "mime" | "size" | "telegramFileId">[]): ActionSource | null {
  if (!facts) return null;
  const isPdf = facts.type === "application/pdf";
  const made = job.source === "album" || parseAction(job.variant) !== null;
  if (!made) {
    if (isPdf && typeof facts.pages === "number" && facts.pages > 0) {
      return { file: { source: job.source as NewJob["source"], fileId: job.fileId, fileUniqueId: job.fileUniqueId, declaredName: job.declaredName, declaredMime: job.declaredMime, declaredSize: job.declaredSize }, kind: "pdf", pages: facts.pages };
    }
    if (!isPdf && typeof facts.width === "number") {
      return { file: { source: job.source as NewJob["source"], fileId: job.fileId, fileUniqueId: job.fileUniqueId, declaredName: job.declaredName, declaredMime: job.declaredMime, declaredSize: job.declaredSize }, kind: "image", pages: 0 };
    }
    return null;
  }
  const [only, ...more] = results;
  if (!only || more.length > 0 || only.mime !== "application/pdf" || !only.telegramFileId) return null;
  const pages = typeof facts.outputPages === "number" ? facts.outputPages : facts.pages;
  if (typeof pages !== "number" || pages < 1) return null;
  return { file: { source: "document", fileId: only.telegramFileId, fileUniqueId: `result:${job.id}`, declaredName: only.fileName, declaredMime: "application/pdf", declaredSize: only.size }, kind: "pdf", pages };
}
