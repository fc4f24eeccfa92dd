/** pdfjs-dist ships no types for its worker module; we only publish it as globalThis.pdfjsWorker. */
declare module "pdfjs-dist/legacy/build/pdf.worker.mjs" {
  /** The worker-side message handler pdf.js's fake worker looks for. */
  export const WorkerMessageHandler: unknown;
}
