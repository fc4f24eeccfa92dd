/**
 * Section "image phases" of bench/processors: where the image step's time goes (issue 12, "one
 * decode per image"), each phase alone, in this process (warm, libvips cache off as in the pool's
 * children): content detection, the completeness check, the header read, a full decode to raw
 * pixels (what a separate decode proof would cost), the output pipeline as the processor runs it
 * (decode → orient → resize → encode, the pixels decoded once), the same with the mozjpeg encoder
 * it used before, and processImage whole. A 48 MP photo shows shrink-on-load: its pipeline
 * decodes at 1/2 scale and costs less than decoding it fully.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { detectFile } from "../../processors/detect.ts";
import { isCutShort } from "../../processors/image/complete.ts";
import { processImage } from "../../processors/image/process-image.ts";
import { median } from "../queue/stats.ts";
import { fmt } from "./measure.ts";

/** Median ms of `runs` calls after one warm-up call. */
async function timed(runs: number, f: () => Promise<unknown>): Promise<number> {
  await f();
  const xs: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await f();
    xs.push(performance.now() - t0);
  }
  return median(xs);
}

/** The output pipeline of processors/image/process-image.ts for a JPEG, with or without mozjpeg. */
function pipeline(input: string, mozjpeg: boolean) {
  return sharp(input, { limitInputPixels: 100_000_000, failOn: "error" })
    .autoOrient()
    .resize({ width: 2560, height: 2560, fit: "inside", withoutEnlargement: true })
    .toColourspace("srgb")
    .jpeg({ quality: 85, ...(mozjpeg ? { mozjpeg: true } : {}) })
    .toBuffer();
}

/** Run the section for the 12 MP `photo` and the 48 MP `big`; returns the markdown. */
export async function imagePhasesSection(photo: string, big: string, runs: number, scratch: string): Promise<string> {
  sharp.cache(false);
  const work = join(scratch, "phases");
  mkdirSync(work, { recursive: true });
  const options = { workDir: work, declaredName: "photo.jpg", maxInputPixels: 100_000_000, maxOutputSide: 2560, maxPdfPages: 500, pdfPageBudgetMs: 2000 };
  const rows: [string, number, number][] = [];
  for (const [label, input] of [["detect (file-type, first bytes)", "detect"], ["completeness check (end marker)", "complete"], ["header read (metadata, no pixels)", "header"], ["full decode to raw pixels", "decode"], ["output pipeline, libjpeg-turbo (now)", "turbo"], ["output pipeline, mozjpeg (before)", "moz"], ["processImage, whole step (now)", "step"]] as const) {
    const op = (file: string) =>
      input === "detect" ? detectFile(file)
      : input === "complete" ? isCutShort(file, "jpg")
      : input === "header" ? sharp(file, { limitInputPixels: false, animated: true }).metadata()
      : input === "decode" ? sharp(file, { limitInputPixels: false }).raw().toBuffer()
      : input === "turbo" ? pipeline(file, false)
      : input === "moz" ? pipeline(file, true)
      : processImage(file, options);
    rows.push([label, await timed(runs, () => op(photo)), await timed(input === "moz" ? Math.min(runs, 3) : runs, () => op(big))]);
  }
  const out = ["| phase | 12 MP (4000×3000) → 2560 ms | 48 MP (8000×6000) → 2560 ms |", "| --- | ---: | ---: |"];
  for (const [label, a, b] of rows) out.push(`| ${label} | ${fmt(a, 1)} | ${fmt(b, 1)} |`);
  return out.join("\n");
}
