/**
 * Sample generators and the manifest reader, for the demo and for tests that make inputs on the fly.
 * See samples/README.md (generated) and scripts/make-samples.ts.
 */
export { makePdf, type MakePdfOptions, type PdfImage, type PdfEncryption } from "./pdf.ts";
export { textShowOps, fillOps } from "./heavy-page.ts";
export { rc4, standardSecurityR2 } from "./pdf-crypt.ts";
export { encodePng, makeBombPng, pngChunk, PNG_SIGNATURE, type EncodePngOptions, type PngColorType } from "./png.ts";
export { rawPdf, makeBrokenTreePdf, makeFlateBombPdf, writeSparsePdf, makeApng, makeTinyFrameGif, type ApngRegion, makePngWithText, makeStoredZip, type RawPdfObject, type BrokenTree } from "./hostile.ts";
export { makeJpeg, makePng, makeAnimated, makeScanJpeg, type MakeJpegOptions, type MakePngOptions, type MakeAnimatedOptions } from "./images.ts";
export { CARD_COLOURS, testCard, scanPage, solid, fillRect, fillCircle, type Raster } from "./raster.ts";
export { makeDocx, makeXxeSvg, makeTextInvoice } from "./documents.ts";
export { truncate, prependJunk, insertAfterHeader, garbageAfterHeader, randomBytes } from "./damage.ts";
export { mulberry32, seededBytes } from "./prng.ts";
export {
  parseManifest,
  parseManifestText,
  parseDetail,
  isManifestReason,
  formatManifest,
  MANIFEST_COLUMNS,
  MANIFEST_REASONS,
  type ManifestRow,
  type ManifestLine,
  type ManifestReason,
  type SampleFacts,
} from "./manifest.ts";
export { SAMPLES, sampleDetail, sampleLine, type SampleSpec } from "./catalog.ts";
export { buildSamples, writeSamples, SAMPLES_BUDGET_BYTES, MANIFEST_FILE, type BuiltSample, type WriteResult } from "./generate.ts";
export { makeScanPdf, typesetPage, relabelAsJbig2, ENGLISH_LINES, RUSSIAN_LINES, SCAN_DPI, SCAN_PAGE, type ScanKind } from "./scans.ts";
