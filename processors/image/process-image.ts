/**
 * The image processor (docs/processors.md "Images"), on sharp:
 * - the pixel limit is checked from the header before any decode (BR-14) and stays on
 *   in the decode itself (`limitInputPixels`);
 * - success needs a full decode: the output encode reads every pixel (BR-15, BR-21:
 *   metadata alone never counts);
 * - EXIF orientation applied (`autoOrient`, BR-17), metadata stripped (EXIF incl. GPS,
 *   XMP, ICC — sharp's default when no `keepMetadata`/`withMetadata` is asked for);
 * - CMYK and 16-bit converted to 8-bit sRGB (BR-16);
 * - animated GIF/WebP/APNG kept as animated WebP (BR-18; APNG frames composed by apng.ts),
 *   multi-page TIFF → page 1; more frames than `maxFrames` → frame 1 only (facts say so);
 * - a PNG/GIF/WebP without its end marker is `truncated` (complete.ts);
 * - palette → lossless WebP (exact pixels), alpha → WebP with alpha kept, everything else →
 *   JPEG (issue 5 §4: "output WebP or JPEG"); longest side ≤ maxOutputSide.
 *
 * One decode per image (issue 12): the header read and the completeness check read no pixels;
 * the pixels are decoded once, by the output pipeline (decode → orient → resize → encode), with
 * libvips's shrink-on-load (JPEG at 1/2, 1/4, 1/8 and WebP at any scale while decoding) where the
 * output is at least 2× smaller. The JPEG encoder is libjpeg-turbo: mozjpeg's trellis
 * quantisation took 5–10× the decode time (docs/benchmarks.md "Image phases"). An APNG's frames
 * are composed once and resized as raw pixels, never encoded and decoded again.
 */
import sharp, { type Metadata, type OutputInfo, type Sharp } from "sharp";
import { join } from "node:path";
import { detectFile } from "../detect.ts";
import { outputFile } from "../naming.ts";
import { ProcessingError, type Detection, type Facts, type ProcessorOptions, type ProcessorResult } from "../types.ts";
import { composeApng, parseApng } from "./apng.ts";
import { bmpInput } from "./bmp.ts";
import { checkPixels } from "./pixels.ts";
import { isCutShort } from "./complete.ts";
import { sharpFailure, type ImageContext } from "./errors.ts";

/** JPEG/WebP quality of outputs (1–100). */
const QUALITY = 85;
/**
 * Frames of an animation converted when `options.maxFrames` is not given (config MAX_FRAMES).
 * Frame count is read from the header; above the cap only frame 1 is converted, so a GIF of a
 * million 1×1 frames (tiny in pixels) cannot keep the decoder busy for minutes (audit gap 6).
 */
export const DEFAULT_MAX_FRAMES = 1000;

/** Size of the image as displayed: EXIF orientations 5–8 swap width and height (BR-17). */
export function displayedSize(width: number, height: number, orientation: number | undefined): { width: number; height: number } {
  return orientation && orientation >= 5 && orientation <= 8 ? { width: height, height: width } : { width, height };
}

/** Output encoding chosen for an input: JPEG, lossy WebP (animation, alpha) or lossless WebP (palette). */
type OutputKind = "jpeg" | "webp" | "webp-lossless";

/**
 * Pick the output format (issue 5 §4: "output WebP or JPEG"): a palette image → lossless WebP
 * (its few colours come out exactly, and small); animation or alpha → WebP (alpha kept); else JPEG.
 */
function chooseOutput(animated: boolean, meta: Metadata): OutputKind {
  if (meta.isPalette) return "webp-lossless";
  if (animated || meta.hasAlpha) return "webp";
  return "jpeg";
}

/** The animation of an APNG (null when it has fewer than 2 frames); a malformed one is `corrupt`. */
function readApng(bytes: Uint8Array, ctx: ImageContext): ReturnType<typeof parseApng> {
  try {
    return parseApng(bytes);
  } catch (err) {
    throw new ProcessingError("corrupt", { ext: ctx.ext, label: ctx.label, size: "none" }, (err as Error).message);
  }
}

/** Header facts of a sharp-readable input (read without decoding pixels: limit disabled on purpose). */
async function readHeader(input: string, ctx: ImageContext): Promise<Metadata> {
  try {
    return await sharp(input, { limitInputPixels: false, animated: true }).metadata();
  } catch (err) {
    throw sharpFailure(err, ctx);
  }
}

/** Size of an image fitted inside `maxSide` × `maxSide`, never enlarged (sharp's `fit: "inside"` rounding). */
export function fitInside(width: number, height: number, maxSide: number): { width: number; height: number } {
  if (width <= maxSide && height <= maxSide) return { width, height };
  return width >= height
    ? { width: maxSide, height: Math.max(1, Math.round((height * maxSide) / width)) }
    : { width: Math.max(1, Math.round((width * maxSide) / height)), height: maxSide };
}

/**
 * An APNG's composed frames (RGBA, stacked) as the output pipeline's input, each frame resized to
 * fit `maxSide` as raw pixels: sharp's resize drops the page height of raw input, so frames are
 * resized one by one and the pipeline itself does not resize. No encode and decode in between.
 */
async function apngInput(frames: Buffer, width: number, height: number, count: number, maxSide: number, limit: number): Promise<Sharp> {
  const out = fitInside(width, height, maxSide);
  let data = frames;
  if (out.width !== width || out.height !== height) {
    const size = width * height * 4;
    const resized = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        sharp(frames.subarray(i * size, (i + 1) * size), { raw: { width, height, channels: 4 }, limitInputPixels: limit })
          .resize(out.width, out.height, { fit: "fill" })
          .raw()
          .toBuffer(),
      ),
    );
    data = Buffer.concat(resized);
  }
  return sharp(data, { raw: { width: out.width, height: out.height * count, channels: 4, pageHeight: out.height }, limitInputPixels: limit });
}

/**
 * Process an image file.
 * @param inputPath the source image
 * @param options maxInputPixels (pixel limit), maxOutputSide (px), maxFrames (frames) and workDir
 * @param detected what processFile's content detection found (read again when not given)
 * @throws ProcessingError `too_many_pixels` ({width, height, megapixels, limit} — MP),
 *   `truncated` (also a PNG/GIF/WebP without its end marker) / `corrupt` ({ext, label,
 *   size "W×H" or "none"}), `unsupported_type`
 *   (HEIC/HEVC that this libvips cannot decode)
 */
export async function processImage(inputPath: string, options: ProcessorOptions, detected?: Detection): Promise<ProcessorResult> {
  const detection = detected ?? (await detectFile(inputPath));
  const ctx0: ImageContext = { ext: detection.ext, label: detection.label };
  let pipeline: Sharp;
  let meta: Metadata;
  let frames = 1;
  let animated = false;
  let orientation: number | undefined;
  let storedWidth: number;
  let frameHeight: number;
  /** The input is already at its output size (APNG frames): the pipeline must not resize again. */
  let resized = false;
  const maxFrames = options.maxFrames ?? DEFAULT_MAX_FRAMES;

  if (await isCutShort(inputPath, detection.ext)) {
    const head = detection.ext === "bmp" ? null : await readHeader(inputPath, ctx0).catch(() => null);
    const size = head?.width && head.height ? `${head.width}×${head.pageHeight ?? head.height}` : "none";
    throw new ProcessingError("truncated", { ext: detection.ext, label: detection.label, size }, `${detection.label} has no end marker (cut short)`);
  }

  if (detection.ext === "bmp") {
    const raw = await bmpInput(inputPath, options.maxInputPixels);
    pipeline = raw.pipeline;
    meta = { format: "raw", width: raw.width, height: raw.height, channels: raw.channels, hasAlpha: raw.channels === 4, space: "srgb" } as Metadata;
    storedWidth = raw.width;
    frameHeight = raw.height;
  } else {
    meta = await readHeader(inputPath, ctx0);
    // libvips reads only an APNG's default image; the frames come from apng.ts.
    const apng = detection.mime === "image/apng" ? readApng(await Bun.file(inputPath).bytes(), ctx0) : null;
    frames = apng?.frames.length ?? meta.pages ?? 1;
    storedWidth = meta.width ?? 0;
    frameHeight = meta.pageHeight ?? (frames > 1 && !apng ? Math.round((meta.height ?? 0) / frames) : (meta.height ?? 0));
    // GIF/WebP/APNG animation is kept up to maxFrames; other multi-page formats (TIFF) give page 1 only.
    animated = frames > 1 && frames <= maxFrames && (meta.format === "gif" || meta.format === "webp" || apng !== null);
    checkPixels(storedWidth, frameHeight, animated ? frames : 1, options.maxInputPixels);
    orientation = meta.orientation;
    if (apng && animated) {
      let data: Buffer;
      try {
        data = await composeApng(apng, options.maxInputPixels);
      } catch (err) {
        throw sharpFailure(err, { ...ctx0, width: storedWidth, height: frameHeight });
      }
      meta = { ...meta, hasAlpha: true, isPalette: false, delay: apng.frames.map((f) => f.delayMs), loop: apng.plays };
      pipeline = await apngInput(data, apng.width, apng.height, frames, options.maxOutputSide, options.maxInputPixels);
      resized = true;
    } else {
      pipeline = sharp(inputPath, { limitInputPixels: options.maxInputPixels, animated, failOn: "error" });
    }
  }

  const shown = displayedSize(storedWidth, frameHeight, orientation);
  const ctx: ImageContext = { ...ctx0, ...shown };
  const kind = chooseOutput(animated, meta);
  pipeline = pipeline.autoOrient();
  if (!resized) pipeline = pipeline.resize({ width: options.maxOutputSide, height: options.maxOutputSide, fit: "inside", withoutEnlargement: true });
  pipeline = pipeline.toColourspace("srgb");
  const timing = animated ? { loop: meta.loop ?? 0, ...(meta.delay ? { delay: meta.delay } : {}) } : {};
  if (kind === "jpeg") pipeline = pipeline.jpeg({ quality: QUALITY });
  else if (kind === "webp-lossless") pipeline = pipeline.webp({ lossless: true, effort: 4, ...timing });
  else pipeline = pipeline.webp({ quality: QUALITY, alphaQuality: 100, ...timing });

  const format = kind === "jpeg" ? "jpeg" : "webp";
  const ext = kind === "jpeg" ? "jpg" : "webp";
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
    // Why only frame 1 of an animation was converted (chat: bot/status/texts.ts factsSummary).
    ...(frames > maxFrames && frames > 1 && !animated && (meta.format === "gif" || meta.format === "webp" || detection.mime === "image/apng") ? { framesLimit: maxFrames } : {}),
    space: meta.space,
    channels: meta.channels,
    ...(meta.depth ? { depth: meta.depth } : {}),
    hasAlpha: meta.hasAlpha === true,
    ...(meta.isPalette ? { palette: true } : {}),
    ...(orientation && orientation !== 1 ? { exifOrientation: orientation } : {}),
    outputFormat: format,
    outputWidth: info.width,
    outputHeight: info.pageHeight ?? info.height,
  };
  const output = await outputFile(options, diskName, `.${ext}`, `image/${format}`, "image");
  return { outputs: [output], facts: facts as Facts };
}
