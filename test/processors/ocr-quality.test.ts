/**
 * issue 13 §6: recognition quality on generated 300-dpi scans with known text — CCITT G4, a grey
 * noisy slightly rotated JPEG "phone" scan, JPEG 2000; English and Russian — the character error
 * rate against the ground truth is at most 2 % on every page. Scans are made by Debian's tools
 * (scripts/samples/scans.ts); recognition runs through the PDF processor as a job runs it.
 */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, test } from "vitest";
import { characterErrorRate, splitPages } from "../../scripts/samples/cer.ts";
import { ENGLISH_LINES, makeScanPdf, RUSSIAN_LINES } from "../../scripts/samples/index.ts";
import { toolReady } from "../support/tools.ts";
import { cleanupWorkDirs, processBytes } from "./support/run.ts";
import { testOcr } from "./support/ocr.ts";

afterEach(cleanupWorkDirs);

const ready = (["tesseract", "convert", "tiff2pdf", "img2pdf", "opj_compress"] as const).every((t) => toolReady(t));

describe.skipIf(!ready)("OCR quality (character error rate ≤ 2 %)", () => {
  for (const kind of ["g4", "phone", "jpx"] as const) {
    test(`${kind}: an English and a Russian page`, async () => {
      const r = await processBytes(await makeScanPdf(kind, [ENGLISH_LINES, RUSSIAN_LINES]), `${kind}.pdf`, { ocr: testOcr() });
      // G4 and the phone scan give their own images (page-image.ts); pdf.js decodes this JPEG 2000
      // at half its size (150 dpi), so its pages are drawn at 300 dpi.
      expect(r.facts.ocr).toMatchObject({ needed: 2, recognized: 2, overBudget: [], failed: [], direct: kind === "jpx" ? [] : [1, 2] });
      const pages = splitPages(readFileSync(r.outputs.find((o) => o.fileName.endsWith(".txt"))!.path, "utf8"));
      const en = characterErrorRate(pages[0]!, ENGLISH_LINES.join("\n"));
      const ru = characterErrorRate(pages[1]!, RUSSIAN_LINES.join("\n"));
      console.log(`CER ${kind}: en ${(en * 100).toFixed(2)} %, ru ${(ru * 100).toFixed(2)} %`);
      expect(en).toBeLessThanOrEqual(0.02);
      expect(ru).toBeLessThanOrEqual(0.02);
    }, 120_000);
  }
});
