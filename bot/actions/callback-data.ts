/**
 * Callback data of the action buttons (issue 15 item 1): `a:<job id>:<code>`, at most 64 bytes (Bot API:
 * callback_data 1–64 bytes). Pressed data is validated here (zod) before anything is looked up; the job
 * it names is then checked against the chat it was pressed in (bot/intake/actions.ts).
 */
import * as z from "zod";

/**
 * Button codes: menus (`rot` rotate, `cmp` compress, `back`), direct actions (`r90`/`r180`/`r270` every
 * page, `ce`/`cs` compress ebook/strong, `ocr` searchable PDF, `pdf` image to PDF) and questions answered
 * in a reply (`rrng` rotate some pages, `ext` extract, `spl` split), and `mrg` (merge with the next files).
 */
export const ACTION_CODES = ["rot", "r90", "r180", "r270", "rrng", "ext", "spl", "cmp", "ce", "cs", "ocr", "pdf", "mrg", "back"] as const;
/** One of {@link ACTION_CODES}. */
export type ActionCode = (typeof ACTION_CODES)[number];

const codeSchema = z.enum(ACTION_CODES);
const jobSchema = z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER);

/** The callback data of button `code` for job `jobId`. */
export function actionData(jobId: number, code: ActionCode): string {
  return `a:${jobId}:${code}`;
}

/** The job and button a pressed callback data names, or null when it is not one of ours (stale, forged). */
export function parseActionData(data: string | undefined): { readonly jobId: number; readonly code: ActionCode } | null {
  const m = typeof data === "string" && data.length <= 64 ? /^a:(\d{1,12}):([a-z0-9]{1,6})$/.exec(data) : null;
  if (!m) return null;
  const jobId = jobSchema.safeParse(m[1]);
  const code = codeSchema.safeParse(m[2]);
  return jobId.success && code.success ? { jobId: jobId.data, code: code.data } : null;
}
