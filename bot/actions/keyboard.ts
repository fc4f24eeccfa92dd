/**
 * The inline keyboards of a job's final message (issue 15 item 1): the actions that fit its type — for a
 * PDF rotate, extract pages, split, compress, merge with the next files (and searchable PDF where OCR is installed), for an image
 * "to PDF" — and the two sub-menus (rotate: 90°/180°/270° for every page or "some pages…"; compress:
 * two levels). Texts in the user's language.
 */
import { InlineKeyboard } from "grammy";
import { t, type Locale } from "../i18n/index.ts";
import { actionData } from "./callback-data.ts";
import type { ActionSource } from "./source.ts";
import { PDF_ACTIONS } from "../intake/settings.ts";

/** Whether this install offers the searchable-PDF action (the OCR path's /settings choice exists). */
export const SEARCHABLE = (PDF_ACTIONS as readonly string[]).includes("searchable");

/** The main keyboard for job `jobId` whose actions start from `source`; `searchable` shows the OCR button. */
export function actionKeyboard(locale: Locale, jobId: number, source: Pick<ActionSource, "kind">, searchable: boolean): InlineKeyboard {
  const kb = new InlineKeyboard();
  if (source.kind === "image") return kb.text(t(locale, "action-btn-topdf"), actionData(jobId, "pdf"));
  kb.text(t(locale, "action-btn-rotate"), actionData(jobId, "rot")).text(t(locale, "action-btn-extract"), actionData(jobId, "ext")).text(t(locale, "action-btn-split"), actionData(jobId, "spl")).row();
  kb.text(t(locale, "action-btn-compress"), actionData(jobId, "cmp")).text(t(locale, "action-btn-merge"), actionData(jobId, "mrg"));
  if (searchable) kb.text(t(locale, "action-btn-searchable"), actionData(jobId, "ocr"));
  return kb;
}

/** The rotate menu: every page by 90°, 180° or 270° clockwise, or some pages (asked in a reply). */
export function rotateKeyboard(locale: Locale, jobId: number): InlineKeyboard {
  return new InlineKeyboard()
    .text("↻ 90°", actionData(jobId, "r90"))
    .text("180°", actionData(jobId, "r180"))
    .text("↺ 270°", actionData(jobId, "r270"))
    .row()
    .text(t(locale, "action-btn-some-pages"), actionData(jobId, "rrng"))
    .text(t(locale, "action-btn-back"), actionData(jobId, "back"));
}

/** The compress menu: the two levels of processors/pdftools/action.ts `COMPRESS_LEVELS`. */
export function compressKeyboard(locale: Locale, jobId: number): InlineKeyboard {
  return new InlineKeyboard()
    .text(t(locale, "action-btn-compress-ebook"), actionData(jobId, "ce"))
    .text(t(locale, "action-btn-compress-strong"), actionData(jobId, "cs"))
    .row()
    .text(t(locale, "action-btn-back"), actionData(jobId, "back"));
}
