/**
 * pdf.js's warnings, captured per document (issue 13 §2: a page whose images failed to decode must
 * not pass as a normal preview). pdf.js reports an image it could not decode only as a warning
 * (`warn()` → `console.warn("Warning: …")`, printed at verbosity WARNINGS) and then draws the page
 * without it: a fax scan whose decoder is missing renders all white. Two places warn:
 * - the evaluator (worker thread, or the in-process fake worker): `Unable to decode image "img_p0_1":
 *   "Jbig2Error: …"`, `#getWasmInstance: …`, `Filter "X" is not supported.`;
 * - the display side (this thread): `Dependent image isn't ready yet` when the page asks for an
 *   image the evaluator never delivered.
 * The thread forwards its lines as {@link ThreadWarning} messages (pdfjs-thread.ts); this thread's
 * `console.warn` is wrapped while a document is open ({@link captureConsoleWarnings}).
 * Source: pdfjs-dist 6.5 `src/shared/util.js` (`warn`), `src/core/evaluator.js` (`buildPaintImageXObject`).
 */

/** Most warnings kept per document (a broken file can warn per glyph). */
export const MAX_WARNINGS = 200;

/** The message the pdf.js thread posts for each warning line (pdf.js's own messages carry `targetName`; this one does not). */
export interface ThreadWarning {
  readonly docketWarning: string;
}

/** True when `data` is a {@link ThreadWarning}. */
export function isThreadWarning(data: unknown): data is ThreadWarning {
  return typeof (data as ThreadWarning | null)?.docketWarning === "string";
}

/**
 * True when a pdf.js warning says an image of the page was not decoded (and so is missing from the
 * render): the evaluator's "Unable to decode image", the display side's "Dependent image isn't ready
 * yet", a decoder module that failed to load, or an image stream with a filter pdf.js lacks.
 */
export function isImageDecodeWarning(text: string): boolean {
  return /Unable to decode image|Dependent image isn't ready|#get(Wasm|Js)Instance|Filter "[^"]*" is not supported|JPX|OpenJPEG|Jbig2|CCITT/i.test(text);
}

/** The text of a pdf.js warning line without its `Warning: ` prefix, bounded to 300 characters. */
export function warningText(args: readonly unknown[]): string {
  return args
    .map(String)
    .join(" ")
    .replace(/^Warning:\s*/, "")
    .slice(0, 300);
}

/** Sinks of the documents open in this thread; `console.warn` feeds all of them. */
const sinks = new Set<string[]>();
let original: typeof console.warn | null = null;

/**
 * Collect pdf.js's `console.warn` lines of this thread into `sink` (bounded by {@link MAX_WARNINGS})
 * until the returned function is called. Lines that are not pdf.js warnings pass to the real
 * `console.warn`. One processor child handles one document at a time; while two documents are open
 * in one thread (the start-up self-check beside a job) both sinks see each other's lines.
 */
export function captureConsoleWarnings(sink: string[]): () => void {
  if (!original) {
    const real = console.warn.bind(console);
    original = real;
    console.warn = (...args: unknown[]) => {
      if (sinks.size === 0 || !String(args[0]).startsWith("Warning:")) return real(...args);
      const text = warningText(args);
      for (const s of sinks) if (s.length < MAX_WARNINGS) s.push(text);
    };
  }
  sinks.add(sink);
  return () => void sinks.delete(sink);
}

/** Push `text` into `sink` unless it is full (the thread's forwarded lines). */
export function pushWarning(sink: string[], text: string): void {
  if (sink.length < MAX_WARNINGS) sink.push(text.slice(0, 300));
}
