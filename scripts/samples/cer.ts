/**
 * Character error rate of recognized text against its ground truth (issue 13 §6), for the OCR
 * quality test and the benchmark: the Levenshtein distance (insertions, deletions, substitutions;
 * fastest-levenshtein) between the two texts after whitespace is normalized, divided by the
 * length of the truth. Line breaks and runs of spaces count as one space: the layout of lines is
 * not what is measured, the characters are.
 */
import { distance } from "fastest-levenshtein";

/** Whitespace runs to one space, ends trimmed; typographic quotes and dashes as ASCII. */
export function normalizeForCer(text: string): string {
  return text
    .replace(/[‘’‚‛]/g, "'")
    .replace(/[“”„‟]/g, '"')
    .replace(/[‐‑‒–—]/g, "-")
    .replace(/\s+/g, " ")
    .trim();
}

/**
 * CER of `recognized` against `truth` (0 = identical; can exceed 1 for much longer output).
 * @throws Error when the truth is empty (the rate is undefined)
 */
export function characterErrorRate(recognized: string, truth: string): number {
  const t = normalizeForCer(truth);
  if (t.length === 0) throw new Error("empty ground truth");
  return distance(normalizeForCer(recognized), t) / t.length;
}

/**
 * The page texts of a docket `.txt` result, in page order, without the `--- page N of M … ---`
 * separator lines (processors/pdf/text.ts `pageSeparator`).
 */
export function splitPages(txt: string): string[] {
  return txt
    .split(/^--- page \d+ of \d+[^\n]*---$/m)
    .slice(1)
    .map((p) => p.trim());
}
