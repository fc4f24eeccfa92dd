/**
 * Content streams that are cheap to write and expensive for pdf.js, for the per-page budget
 * tests (processors/budget.ts, PDF_PAGE_BUDGET). Append them to a page with makePdf's
 * `contents` option; they use the page's `/F1` font. Deterministic.
 * Source: ISO 32000-1 §9.4 (text objects: Td, Tj), §8.5 (path construction: re, f; g).
 */

/** Text-show operators per line of {@link textShowOps} (then the next line starts). */
const WORDS_PER_LINE = 50;
/** Lines per screen of {@link textShowOps} (then it starts again at the top). */
const LINES_PER_SCREEN = 125;

/**
 * `count` text-show operators (`(wN) Tj` with a `Td` move each, 6 pt Helvetica), laid out in
 * lines of 50 words that fill an A4 page top to bottom and then start again at the top, so
 * every glyph stays on the page (pdf.js drops text outside it). Each is parsed, measured and
 * turned into text by `getTextContent` and drawn by `render`; cost grows linearly with `count`.
 * @param count number of `Tj` operators; a multiple of 6,250 (one screen) keeps the layout whole
 * @returns the operators, one `BT … ET` text object; the page's text has `2 × count` non-space
 *   characters (`w0` … `w9`)
 */
export function textShowOps(count: number): string {
  const line: string[] = [];
  for (let i = 0; i < WORDS_PER_LINE; i++) line.push(`(w${i % 10}) Tj 10 0 Td`);
  const row = `${line.join(" ")} -${10 * WORDS_PER_LINE} -6 Td\n`;
  const screen = `${row.repeat(LINES_PER_SCREEN)}0 ${6 * LINES_PER_SCREEN} Td\n`;
  const perScreen = WORDS_PER_LINE * LINES_PER_SCREEN;
  const screens = Math.floor(count / perScreen);
  const rest = count - screens * perScreen;
  const tail = Array.from({ length: rest }, (_, i) => `(w${i % 10}) Tj 10 0 Td`).join("\n");
  return `BT /F1 6 Tf 40 790 Td\n${screen.repeat(screens)}${tail}\nET`;
}

/**
 * `count` full-page rectangle fills in alternating greys (`g`, `re`, `f`): trivial to parse
 * and for `getTextContent` (no text), costly to draw (every fill covers the whole canvas), so
 * the page is heavy for rendering only. Cost grows linearly with `count` and the render size.
 * @param count number of fills
 * @param size page width and height in pt (the rectangle covers it)
 * @returns the operators (no text; the last fill is light grey 0.9)
 */
export function fillOps(count: number, size: readonly [number, number] = [595, 842]): string {
  const pair = `0.8 g 0 0 ${size[0]} ${size[1]} re f\n0.9 g 0 0 ${size[0]} ${size[1]} re f\n`;
  return `q\n${pair.repeat(Math.floor(count / 2))}${count % 2 ? `0.9 g 0 0 ${size[0]} ${size[1]} re f\n` : ""}Q`;
}
