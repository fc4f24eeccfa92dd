/**
 * Chat texts for job outcomes: the facts summary and the localized reason of a
 * failure (`reason-<code>` in bot/locales/<lang>/reasons.ftl).
 */
import type { Facts } from "../../processors/types.ts";
import { SEARCHABLE_NOT_NEEDED, type OcrFacts } from "../../processors/ocr/types.ts";
import { hasMessage, i18n, t, type Locale } from "../i18n/index.ts";
import { sizeParts } from "../intake/format.ts";

/**
 * One-line summary of processor facts, e.g. "PDF, 3 pages, 1200 characters of text", plus what
 * was left out of the result (audit of issue 5, gap 8; facts from processors/): `framesOutput`
 * 1 of N → "only page 1 of N converted" (multi-page TIFF) or, with `framesLimit`, "only frame 1
 * of N converted (the frame limit is M)" (MAX_FRAMES); `undecodedPages` → "page images could not be
 * decoded (pages …)" (issue 13 §2); otherwise `previewSkipped` → "no preview: …".
 * Parts are joined with "; ".
 */
export function factsSummary(locale: Locale, facts: Facts): string {
  const parts: string[] = [];
  const size = (bytes: unknown) => {
    const p = sizeParts(typeof bytes === "number" ? bytes : 0);
    return t(locale, p.key, { n: p.n });
  };
  if (typeof facts.degrees === "number" && typeof facts.pages === "number") {
    parts.push(t(locale, "summary-rotated", { count: Number(facts.rotated ?? 0), pages: facts.pages, degrees: facts.degrees }));
  } else if (typeof facts.extracted === "number" && typeof facts.pages === "number") {
    parts.push(t(locale, "summary-extracted", { count: facts.extracted, pages: facts.pages }));
  } else if (typeof facts.splitParts === "number" && typeof facts.pages === "number") {
    parts.push(t(locale, "summary-split", { count: facts.splitParts, pages: facts.pages }));
  } else if (typeof facts.sizeBefore === "number" && typeof facts.sizeAfter === "number") {
    // Issue 15 item 4: the size before and after, or why the original comes back.
    if (facts.notSmaller === true) parts.push(t(locale, "summary-not-smaller", { before: size(facts.sizeBefore) }));
    else parts.push(t(locale, "summary-compressed", { before: size(facts.sizeBefore), after: size(facts.sizeAfter), percent: Math.round((1 - facts.sizeAfter / facts.sizeBefore) * 100) }));
  } else if (typeof facts.parts === "number" && typeof facts.pages === "number") {
    // A multi-part job (issue 13 item 5): one PDF from the album, and every part that was left out, by name.
    parts.push(t(locale, "summary-album", { pages: facts.pages, parts: facts.parts }));
    for (const f of Array.isArray(facts.failedParts) ? (facts.failedParts as FailedPartFact[]) : []) {
      parts.push(t(locale, "summary-part-failed", { part: f.part, name: f.name ?? "none", reason: reasonText(locale, f.reason, { ...f.params }) }));
    }
    parts.push(...ocrSummary(locale, facts));
  } else if (typeof facts.pages === "number") {
    parts.push(t(locale, "summary-pdf", { pages: facts.pages, chars: typeof facts.textChars === "number" ? facts.textChars : 0 }));
    parts.push(...ocrSummary(locale, facts));
    const undecoded = Array.isArray(facts.undecodedPages) ? (facts.undecodedPages as number[]) : [];
    if (undecoded.length > 0) parts.push(t(locale, "summary-images-not-decoded", { pages: pageList(undecoded), count: undecoded.length }));
    else if (facts.previewSkipped) parts.push(t(locale, "summary-no-preview"));
  } else if (typeof facts.width === "number" && typeof facts.height === "number") {
    const frames = typeof facts.frames === "number" ? facts.frames : 1;
    // Pixel sizes are strings: Fluent would group digits ("1,280").
    parts.push(t(locale, "summary-image", { label: localizedLabel(locale, facts.label), width: String(facts.width), height: String(facts.height), frames }));
    if (facts.framesOutput === 1 && frames > 1) {
      parts.push(
        typeof facts.framesLimit === "number"
          ? t(locale, "summary-first-frame-only", { frames, limit: facts.framesLimit })
          : t(locale, "summary-first-page-only", { frames }),
      );
    }
  } else {
    parts.push(t(locale, "summary-other", { label: localizedLabel(locale, facts.label) }));
  }
  return parts.join("; ");
}

/**
 * What recognition did (issue 13 §3–4, facts `ocr` of processors/ocr/types.ts): "N pages recognized
 * (C characters)", where it stopped and why, pages skipped over their budget or failed, and why no
 * searchable PDF came back; `ocrUnavailable` → "text recognition is not available …".
 */
export function ocrSummary(locale: Locale, facts: Facts): string[] {
  const out: string[] = [];
  if (facts.ocrUnavailable) out.push(t(locale, "summary-ocr-unavailable"));
  const ocr = facts.ocr as OcrFacts | undefined;
  if (ocr) {
    out.push(ocr.recognized > 0 ? t(locale, "summary-ocr-recognized", { count: ocr.recognized, chars: typeof facts.recognizedChars === "number" ? facts.recognizedChars : 0 }) : t(locale, "summary-ocr-none"));
    if (ocr.stop) out.push(t(locale, `summary-ocr-stopped-${ocr.stop.reason}`, { page: ocr.stop.page, limit: ocr.stop.limit }));
    if (ocr.overBudget.length > 0) out.push(t(locale, "summary-ocr-over-budget", { pages: pageList(ocr.overBudget), count: ocr.overBudget.length, seconds: ocr.pageBudgetS }));
    if (ocr.failed.length > 0) out.push(t(locale, "summary-ocr-failed", { pages: pageList(ocr.failed), count: ocr.failed.length }));
  }
  if (typeof facts.searchableSkipped === "string") out.push(t(locale, facts.searchableSkipped === SEARCHABLE_NOT_NEEDED ? "summary-searchable-not-needed" : "summary-searchable-failed"));
  return out;
}

/** A part of an album left out of its PDF, as facts record it (processors/parts/build-pdf.ts `FailedPart`). */
interface FailedPartFact {
  readonly part: number;
  readonly name: string | null;
  readonly reason: string;
  readonly params: Readonly<Record<string, string | number>>;
}

/** Most page numbers listed in a chat line; more are summarized as "…". */
const MAX_LISTED_PAGES = 10;

/** Page numbers for a chat line: "1, 3, 7", or the first ten and "…". */
export function pageList(pages: readonly number[]): string {
  const shown = pages.slice(0, MAX_LISTED_PAGES).join(", ");
  return pages.length > MAX_LISTED_PAGES ? `${shown}, …` : shown;
}

/**
 * A content label in the user's language: `label-<slug>` from the locale files
 * (e.g. "PNG image" → `label-png-image`), falling back to the English label.
 */
export function localizedLabel(locale: Locale, label: string): string {
  const key = `label-${label.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "")}`;
  return hasMessage(locale, key) ? i18n.t(locale, key) : label;
}

/**
 * The `scope` variable of reason messages: `page` when the params name one PDF `page` (the
 * message says "page N"), else `whole`. Fluent selects on strings, and a missing variable is an
 * error, so every reason message receives it.
 */
export function reasonScope(params: Readonly<Record<string, unknown>>): "page" | "whole" {
  return "page" in params ? "page" : "whole";
}

/**
 * Localized reason text for a failed job; falls back to the code itself when no message exists.
 * Params named `<name>_bytes` become `<name>` as a localized size ("59 KB", "3,3 МБ"); the
 * variable `scope` is `page` when params name a `page` (one PDF page failed), else `whole`.
 */
export function reasonText(locale: Locale, reason: string, params: Record<string, string | number>): string {
  const key = `reason-${reason}`;
  const vars: Record<string, string | number> = { scope: reasonScope(params) };
  for (const [k, v] of Object.entries(params)) {
    if (k.endsWith("_bytes") && typeof v === "number") {
      const s = sizeParts(v);
      vars[k.slice(0, -"_bytes".length)] = t(locale, s.key, { n: s.n });
    } else vars[k] = v;
  }
  return hasMessage(locale, key) ? i18n.t(locale, key, vars) : reason;
}
