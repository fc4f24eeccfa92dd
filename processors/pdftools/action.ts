/**
 * The PDF tools' actions as job variants (issue 15): pressing an action makes a job whose `variant`
 * names the action and its arguments, so the idempotency key (chat, file, variant) makes pressing twice
 * one job. Variant strings: `rotate:90`, `rotate:270:1-3,7`, `extract:1-3,7`, `split:1-3,4-9`,
 * `compress:ebook`, `compress:strong`, `topdf`. Ranges in a variant are canonical and resolved against
 * the page count (processors/page-ranges.ts `formatRanges`).
 */
import { formatRanges, parseRanges, type PageRange } from "../page-ranges.ts";

/** Angles a page may be turned by (issue 15 item 5: 90°, 180° or 270°, clockwise, by page rotation). */
export const ROTATIONS = [90, 180, 270] as const;
/** One of {@link ROTATIONS}. */
export type Rotation = (typeof ROTATIONS)[number];

/**
 * Compression levels (issue 15 item 4), each a target resolution and JPEG quality for the raster
 * images inside the PDF: `ebook` ≈ Ghostscript's /ebook (150 dpi), `strong` ≈ /screen (96 dpi).
 */
export const COMPRESS_LEVELS = { ebook: { dpi: 150, quality: 70 }, strong: { dpi: 96, quality: 50 } } as const;
/** A key of {@link COMPRESS_LEVELS}. */
export type CompressLevel = keyof typeof COMPRESS_LEVELS;

/** A parsed action. `ranges` null = every page. */
export type PdfToolAction =
  | { readonly tool: "rotate"; readonly degrees: Rotation; readonly ranges: readonly PageRange[] | null }
  | { readonly tool: "extract"; readonly ranges: readonly PageRange[] }
  | { readonly tool: "split"; readonly ranges: readonly PageRange[] }
  | { readonly tool: "compress"; readonly level: CompressLevel }
  | { readonly tool: "topdf" };

/** The variant string of an action (see the module doc). */
export function formatAction(a: PdfToolAction): string {
  switch (a.tool) {
    case "rotate":
      return a.ranges ? `rotate:${a.degrees}:${formatRanges(a.ranges)}` : `rotate:${a.degrees}`;
    case "extract":
    case "split":
      return `${a.tool}:${formatRanges(a.ranges)}`;
    case "compress":
      return `compress:${a.level}`;
    case "topdf":
      return "topdf";
  }
}

/** Whether `n` is one of {@link ROTATIONS}. */
export function isRotation(n: number): n is Rotation {
  return (ROTATIONS as readonly number[]).includes(n);
}

/** Ranges of a variant (already canonical: any page count fits). */
function ranges(text: string | undefined): PageRange[] | null {
  if (!text) return null;
  const r = parseRanges(text, Number.MAX_SAFE_INTEGER);
  return r.ok ? r.ranges : null;
}

/** The action a job variant names, or null for a variant that is no PDF tool (`default`, `pages`, `searchable`). */
export function parseAction(variant: string | null | undefined): PdfToolAction | null {
  if (!variant) return null;
  const [tool, arg, rest] = variant.split(":");
  if (tool === "topdf" && arg === undefined) return { tool: "topdf" };
  if (tool === "compress" && arg && arg in COMPRESS_LEVELS) return { tool: "compress", level: arg as CompressLevel };
  if (tool === "rotate" && isRotation(Number(arg))) {
    if (rest === undefined) return { tool: "rotate", degrees: Number(arg) as Rotation, ranges: null };
    const r = ranges(rest);
    return r ? { tool: "rotate", degrees: Number(arg) as Rotation, ranges: r } : null;
  }
  if ((tool === "extract" || tool === "split") && arg) {
    const r = ranges(arg);
    return r ? { tool, ranges: r } : null;
  }
  return null;
}
