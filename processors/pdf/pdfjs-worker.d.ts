/** pdfjs-dist ships no types for its worker module; we use only its message handler. */
declare module "pdfjs-dist/legacy/build/pdf.worker.mjs" {
  /**
   * The worker-side message handler: pdf.js's fake worker looks for it on
   * `globalThis.pdfjsWorker`; the worker thread (pdfjs-thread.ts) calls its
   * `initializeFromPort(self)`.
   */
  export const WorkerMessageHandler: unknown;
}
