/** Small statistics for the benchmark tables (no timing asserts anywhere: printed only). */

/** Median of `xs` (mean of the two middle values for an even count); NaN for none. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[(s.length - 1) >> 1]! + s[s.length >> 1]!) / 2 : NaN;
}

/** Nearest-rank percentile `p` (0–100) of `xs`; NaN for none. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

/** Format a rate for a table cell: integer with thin grouping (e.g. "12 345"). */
export function rate(x: number): string {
  return Number.isFinite(x) ? Math.round(x).toLocaleString("en-US").replace(/,/g, " ") : "—";
}
