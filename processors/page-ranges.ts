/**
 * Page ranges as users type them (issue 15 item 2: `1-3,7,10-`), parsed and checked against a page
 * count before any work. Pure; shared by the bot (checking a reply) and the PDF tools (applying it).
 */

/** One range of a list, 1-based and inclusive, resolved against the page count. */
export interface PageRange {
  readonly from: number;
  readonly to: number;
}

/** Why a range list was refused (the chat message names it). */
export type RangeProblem =
  | { readonly kind: "syntax"; readonly item: string }
  | { readonly kind: "past_end"; readonly item: string; readonly pages: number }
  | { readonly kind: "backwards"; readonly item: string }
  | { readonly kind: "too_many"; readonly limit: number };

/** Most ranges in one list (a split makes one file per range; Telegram groups at most 10 per album). */
export const MAX_RANGES = 100;

/**
 * Parse `text` (`1-3,7,10-`; spaces and `;` allowed, `–`/`—` read as `-`) against `pages`.
 * `N-` runs to the last page, `-N` starts at page 1.
 * @returns the ranges in the order typed, or the first problem
 */
export function parseRanges(text: string, pages: number): { ok: true; ranges: PageRange[] } | { ok: false; problem: RangeProblem } {
  const items = text
    .replace(/[–—]/g, "-")
    .split(/[,;]/)
    .map((s) => s.replace(/\s+/g, ""))
    .filter((s) => s.length > 0);
  if (items.length === 0) return { ok: false, problem: { kind: "syntax", item: text.trim().slice(0, 20) } };
  if (items.length > MAX_RANGES) return { ok: false, problem: { kind: "too_many", limit: MAX_RANGES } };
  const ranges: PageRange[] = [];
  for (const item of items) {
    const m = /^(\d{1,6})?(-)?(\d{1,6})?$/.exec(item);
    if (!m || (!m[1] && !m[3]) || (!m[2] && !m[1])) return { ok: false, problem: { kind: "syntax", item: item.slice(0, 20) } };
    const from = m[1] ? Number(m[1]) : 1;
    const to = m[2] ? (m[3] ? Number(m[3]) : pages) : from;
    if (from < 1 || to < 1) return { ok: false, problem: { kind: "syntax", item } };
    if (from > to) return { ok: false, problem: { kind: "backwards", item } };
    if (to > pages || from > pages) return { ok: false, problem: { kind: "past_end", item, pages } };
    ranges.push({ from, to });
  }
  return { ok: true, ranges };
}

/** The canonical text of ranges (`1-3,7,10-12`): what a job's variant carries, so the same pages are one job. */
export function formatRanges(ranges: readonly PageRange[]): string {
  return ranges.map((r) => (r.from === r.to ? String(r.from) : `${r.from}-${r.to}`)).join(",");
}

/** Page numbers of `ranges` in order (1-based; a page named twice appears twice). */
export function pagesOf(ranges: readonly PageRange[]): number[] {
  const out: number[] = [];
  for (const r of ranges) for (let p = r.from; p <= r.to; p++) out.push(p);
  return out;
}
