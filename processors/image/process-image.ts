/**
 * The image processor (docs/processors.md "Images"), on sharp:
 * - the pixel limit is checked from the header before any decode (BR-14) and stays on
 *   in the decode itself (`limitInputPixels`);
 * - success needs a full decode: the output encode reads every pixel (BR-15, BR-21:
 *   metadata alone never counts);
 * - EXIF orientation applied (`autoOrient`, BR-17), metadata stripped (EXIF incl. GPS,
 *   XMP, ICC — sharp's default when no `keepMetadata`/`withMetadata` is asked for);
 * - CMYK and 16-bit converted to 8-bit sRGB (BR-16);
 * - animated GIF/WebP kept as animated WebP (BR-18), multi-page TIFF → page 1;
 * - alpha → PNG, palette → palette PNG, everything else → JPEG; longest side ≤ maxOutputSide.
 */
import sharp, { type Metadata, type OutputInfo, type Sharp } from "sharp";
import { join } from "node:path";
import { detectFile } from "../detect.ts";
import { outputFile } from "../naming.ts";
import { ProcessingError, type Facts, type ProcessorOptions, type ProcessorResult } from "../types.ts";
import { decodeBmp, readBmpHeader } from "./bmp.ts";
import { sharpFailure, type ImageContext } from "./errors.ts";

/** JPEG/WebP quality of outputs (1–100). */
const QUALITY = 85;

/** Size of the image as displayed: EXIF orientations 5–8 swap width and height (BR-17). */
export function displayedSize(width: number, height: number, orientation: number | undefined): { width: number; height: number } {
  return orientation && orientation >= 5 && orientation <= 8 ? { width: height, height: width } : { width, height };
}

/** Megapixels rounded to one decimal. */
function megapixels(pixels: number): number {
  return Math.round(pixels / 1e5) / 10;
}

/** Refuse before decoding when the header declares more pixels than allowed (BR-14). */
function checkPixels(width: number, frameHeight: number, frames: number, limit: number): void {
  const pixels = width * frameHeight * frames;
  if (pixels > limit) {
    throw new ProcessingError(
      "too_many_pixels",
      { width, height: frameHeight, megapixels: megapixels(width * frameHeight), limit: megapixels(limit) },
      `header declares ${width}x${frameHeight}x${frames} px, limit ${limit}`,
    );
  }
}

/** Output encoding chosen for an input. */
type OutputKind = "jpeg" | "png" | "webp";

/** Pick the output format: animation → WebP, alpha or palette → PNG, else JPEG. */
function chooseOutput(animated: boolean, meta: Metadata): OutputKind {
  if (animated) return "webp";
  if (meta.hasAlpha || meta.isPalette) return "png";
  return "jpeg";
}

/** Header facts of a sharp-readable input (read without decoding pixels: limit disabled on purpose). */
async function readHeader(input: string, ctx: ImageContext): Promise<Metadata> {
  try {
    return await sharp(input, { limitInputPixels: false, animated: true }).metadata();
  } catch (err) {
    throw sharpFailure(err, ctx);
  }
}

/**
 * Process an image file.
 * @param inputPath the source image
 * @param options maxInputPixels (pixel limit), maxOutputSide (px) and workDir
 * @throws ProcessingError `too_many_pixels` ({width, height, megapixels, limit} — MP),
 *   `truncated` / `corrupt` ({ext, label, size "W×H" or "none"}), `unsupported_type`
 *   (HEIC/HEVC that this libvips cannot decode)
 */
export async function processImage(inputPath: string, options: ProcessorOptions): Promise<ProcessorResult> {
  const detection = await detectFile(inputPath);
  const ctx0: ImageContext = { ext: detection.ext, label: detection.label };
  let pipeline: Sharp;
  let meta: Metadata;
  let frames = 1;
  let animated = false;
  let orientation: number | undefined;
  let storedWidth: number;
  let frameHeight: number;

  if (detection.ext === "bmp") {
    const bytes = await Bun.file(inputPath).bytes();
    const header = readBmpHeader(bytes);
    checkPixels(header.width, header.height, 1, options.maxInputPixels);
    const raw = decodeBmp(bytes, header);
    pipeline = sharp(raw.data, { raw: { width: raw.width, height: raw.height, channels: raw.channels }, limitInputPixels: options.maxInputPixels });
    meta = { format: "raw", width: raw.width, height: raw.height, channels: raw.channels, hasAlpha: raw.channels === 4, space: "srgb" } as Metadata;
    storedWidth = raw.width;
    frameHeight = raw.height;
  } else {
    meta = await readHeader(inputPath, ctx0);
    frames = meta.pages ?? 1;
    storedWidth = meta.width ?? 0;
    frameHeight = meta.pageHeight ?? (frames > 1 ? Math.round((meta.height ?? 0) / frames) : (meta.height ?? 0));
    // GIF/WebP animation is kept; other multi-page formats (TIFF) give page 1 only.
    animated = frames > 1 && (meta.format === "gif" || meta.format === "webp");
    checkPixels(storedWidth, frameHeight, animated ? frames : 1, options.maxInputPixels);
    orientation = meta.orientation;
    pipeline = sharp(inputPath, { limitInputPixels: options.maxInputPixels, animated, failOn: "error" });
  }

  const shown = displayedSize(storedWidth, frameHeight, orientation);
  const ctx: ImageContext = { ...ctx0, ...shown };
  const kind = chooseOutput(animated, meta);
  pipeline = pipeline
    .autoOrient()
    .resize({ width: options.maxOutputSide, height: options.maxOutputSide, fit: "inside", withoutEnlargement: true })
    .toColourspace("srgb");
  if (kind === "jpeg") pipeline = pipeline.jpeg({ quality: QUALITY, mozjpeg: true });
  else if (kind === "png") pipeline = pipeline.png({ palette: meta.isPalette === true, compressionLevel: 9 });
  else pipeline = pipeline.webp({ quality: QUALITY, loop: meta.loop ?? 0, ...(meta.delay ? { delay: meta.delay } : {}) });

  const ext = kind === "jpeg" ? "jpg" : kind;
  const diskName = `image.${ext}`;
  let info: OutputInfo;
  try {
    info = await pipeline.toFile(join(options.workDir, diskName));
  } catch (err) {
    if (meta.format === "heif" && meta.compression === "hevc") {
      // BR-21: prebuilt libvips reads the HEIF header but has no HEVC decoder.
      throw new ProcessingError("unsupported_type", { ext: "heic", label: "HEIC image", ...shown }, `HEIC decode failed: ${(err as Error).message.split("\n")[0]}`);
    }
    throw sharpFailure(err, ctx);
  }
  const facts: Record<string, unknown> = {
    type: detection.mime,
    label: detection.label,
    width: shown.width,
    height: shown.height,
    ...(frames > 1 ? { frames } : {}),
    ...(frames > 1 && !animated ? { framesOutput: 1 } : {}),
    space: meta.space,
    channels: meta.channels,
    ...(meta.depth ? { depth: meta.depth } : {}),
    hasAlpha: meta.hasAlpha === true,
    ...(meta.isPalette ? { palette: true } : {}),
    ...(orientation && orientation !== 1 ? { exifOrientation: orientation } : {}),
    outputFormat: kind,
    outputWidth: info.width,
    outputHeight: info.pageHeight ?? info.height,
  };
  const output = await outputFile(options, diskName, `.${ext}`, `image/${kind}`, "image");
  return { outputs: [output], facts: facts as Facts };
}
