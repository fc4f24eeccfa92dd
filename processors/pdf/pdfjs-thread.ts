/**
 * Entry script of the pdf.js worker thread (a Bun `Worker`, started by page-worker.ts).
 * pdf.js's evaluator (content-stream parsing, text extraction, operator lists, image and font
 * decoding) runs here, off the thread that holds the per-page budget timers, so a CPU-bound
 * page cannot starve those timers, and `Worker.terminate()` stops the page mid-work.
 * pdf.js does not start itself here (it sees Node/Bun and expects its fake worker), so the
 * port is set up explicitly; it then answers the parent with pdf.js's own `ready` message.
 *
 * pdf.js's warnings (`console.warn("Warning: …")`, e.g. an image it could not decode) are posted
 * to the parent as `{ docketWarning }` messages (warnings.ts) instead of printed: the parent
 * attributes them to the page it is working on.
 *
 * The thread is kept warm between documents (page-worker.ts), so it has its own garbage: the
 * message `{ docket: "gc" }` runs a full collection of this thread's heap and answers
 * `{ docket: "gc-done" }` (pdf.js's message handler ignores messages without its fields).
 */
import { WorkerMessageHandler } from "pdfjs-dist/legacy/build/pdf.worker.mjs";
import { warningText, type ThreadWarning } from "./warnings.ts";

const real = console.warn.bind(console);
console.warn = (...args: unknown[]) => {
  if (!String(args[0]).startsWith("Warning:")) return real(...args);
  const message: ThreadWarning = { docketWarning: warningText(args) };
  self.postMessage(message);
};

(WorkerMessageHandler as { initializeFromPort(port: unknown): void }).initializeFromPort(self);
self.addEventListener("message", (event: MessageEvent) => {
  if ((event.data as { docket?: unknown } | null)?.docket !== "gc") return;
  Bun.gc(true);
  postMessage({ docket: "gc-done" });
});
