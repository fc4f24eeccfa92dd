/**
 * Image sample generators on sharp (libvips): JPEG (RGB, CMYK, EXIF-oriented, grayscale),
 * PNG (8-bit RGB/RGBA via sharp, 16-bit via the own encoder), animated GIF/WebP.
 * All drawn from {@link testCard}-style rasters, so output is deterministic for a given sharp build.
 */
import sharp, { type Sharp } from "sharp";
import { encodePng } from "./png.ts";
import type { PdfImage } from "./pdf.ts";
import { fillCircle, fillRect, scanPage, solid, testCard, type Raster } from "./raster.ts";

function fromRaster(r: Raster, pageHeight?: number): Sharp {
  return sharp(r.data, { raw: { width: r.width, height: r.height, channels: r.channels, ...(pageHeight ? { pageHeight } : {}) } });
}

/** EXIF orientations {@link makeJpeg} can write, with the clockwise turn a viewer applies (EXIF 2.3 Orientation tag). */
const ORIENTATION_TURN = { 1: 0, 3: 180, 6: 90, 8: 270 } as const;

/** Options for {@link makeJpeg}. */
export interface MakeJpegOptions {
  /** JPEG quality 1..100; default 85. */
  readonly quality?: number;
  /**
   * EXIF Orientation to write (1, 3, 6 or 8). The pixels are stored turned the other way,
   * so the image *as displayed* is `width` x `height` with the test card upright.
   */
  readonly orientation?: keyof typeof ORIENTATION_TURN;
  /** Write CMYK (4 components, Adobe APP14) instead of YCbCr. */
  readonly cmyk?: boolean;
  /** Progressive (SOF2) instead of baseline. */
  readonly progressive?: boolean;
  /** Fill with this RGB colour instead of drawing the test card (e.g. `[0, 0, 0]`). */
  readonly fill?: readonly [number, number, number];
}

/**
 * A JPEG of the test card (gradient, #d00000 square top-left, #0000d0 square bottom-right).
 *
 * @param width - displayed width in pixels (after EXIF orientation).
 * @param height - displayed height in pixels (after EXIF orientation).
 * @returns the JPEG file bytes (no EXIF unless `orientation` is given; then also an sRGB ICC profile).
 */
export async function makeJpeg(width: number, height: number, options: MakeJpegOptions = {}): Promise<Uint8Array> {
  const raster = options.fill ? solid(width, height, options.fill) : testCard(width, height);
  let img = fromRaster(raster);
  const orientation = options.orientation ?? 1;
  const turn = ORIENTATION_TURN[orientation];
  // Store the pixels turned back (counter-clockwise), so the viewer's clockwise turn restores them.
  if (turn !== 0) img = sharp(await img.rotate(360 - turn).png().toBuffer());
  if (options.cmyk) img = img.toColourspace("cmyk");
  img = img.jpeg({ quality: options.quality ?? 85, progressive: options.progressive ?? false, mozjpeg: false });
  if (orientation !== 1) img = img.withMetadata({ orientation });
  return new Uint8Array(await img.toBuffer());
}

/** Options for {@link makePng}. */
export interface MakePngOptions {
  /** RGBA: transparent background, a teal disc at alpha 204 (0xcc), an opaque dark bar. Default false (RGB test card). */
  readonly alpha?: boolean;
  /** 16 bits per sample (colour type 2, true 16-bit gradient, own encoder). Default 8. Not with `alpha`. */
  readonly bitDepth?: 8 | 16;
  /** Fill with this RGB colour instead of drawing the test card (8-bit only). */
  readonly fill?: readonly [number, number, number];
}

/**
 * A PNG: by default the 8-bit RGB test card (colour type 2) written by sharp.
 *
 * @param width - pixels.
 * @param height - pixels.
 * @returns the PNG file bytes.
 * @throws RangeError for `alpha` together with `bitDepth: 16`.
 */
export async function makePng(width: number, height: number, options: MakePngOptions = {}): Promise<Uint8Array> {
  if (options.bitDepth === 16) {
    if (options.alpha) throw new RangeError("makePng: 16-bit with alpha is not supported");
    return make16BitPng(width, height);
  }
  let raster: Raster;
  if (options.alpha) {
    raster = solid(width, height, [0, 0, 0, 0]);
    fillCircle(raster, width >> 1, height >> 1, Math.floor(Math.min(width, height) / 3), [0x00, 0x80, 0x80, 0xcc]);
    fillRect(raster, Math.floor(width / 4), Math.floor(height * 0.8), width >> 1, Math.max(1, Math.floor(height / 12)), [0x20, 0x20, 0x20, 0xff]);
  } else {
    raster = options.fill ? solid(width, height, options.fill) : testCard(width, height);
  }
  return new Uint8Array(await fromRaster(raster).png({ compressionLevel: 9, palette: false }).toBuffer());
}

/**
 * A true 16-bit RGB PNG: red = x*256 + y, green = y*341 (clamped), blue = (width-1-x)*256, so the
 * low bytes carry information an 8-bit decode would lose.
 */
function make16BitPng(width: number, height: number): Uint8Array {
  const row = new Uint8Array(width * 6);
  const view = new DataView(row.buffer);
  return encodePng({
    width,
    height,
    bitDepth: 16,
    colorType: 2,
    subFilter: true,
    row: (y) => {
      for (let x = 0; x < width; x++) {
        view.setUint16(x * 6, Math.min(65535, x * 256 + y));
        view.setUint16(x * 6 + 2, Math.min(65535, y * 341));
        view.setUint16(x * 6 + 4, Math.min(65535, (width - 1 - x) * 256));
      }
      return row;
    },
  });
}

/** Options for {@link makeAnimated}. */
export interface MakeAnimatedOptions {
  /** Output container; default `gif`. */
  readonly format?: "gif" | "webp";
  /** One RGB fill colour per frame; default red, lime, blue (3 frames). */
  readonly colours?: readonly (readonly [number, number, number])[];
  /** Delay per frame in ms; default 200. */
  readonly delayMs?: number;
}

/**
 * An animated GIF or WebP, looping forever, one solid colour per frame (field case BR-18).
 *
 * @param width - frame width in pixels.
 * @param height - frame height in pixels (the whole image is `frames` times that, stacked).
 * @returns the file bytes; sharp metadata reports `pages` = number of frames.
 */
export async function makeAnimated(width: number, height: number, options: MakeAnimatedOptions = {}): Promise<Uint8Array> {
  const colours = options.colours ?? [
    [255, 0, 0],
    [0, 255, 0],
    [0, 0, 255],
  ];
  const frames = solid(width, height * colours.length, [0, 0, 0]);
  colours.forEach((c, i) => fillRect(frames, 0, i * height, width, height, c));
  const delay = colours.map(() => options.delayMs ?? 200);
  const img = fromRaster(frames, height);
  const out = options.format === "webp" ? img.webp({ loop: 0, delay, lossless: true }) : img.gif({ loop: 0, delay });
  return new Uint8Array(await out.toBuffer());
}

/**
 * A grayscale JPEG of a "scanned page" (bars standing in for text, no real glyphs), ready to
 * embed in a PDF with DCTDecode via {@link makePdf}'s `images`.
 *
 * @param width - pixels.
 * @param height - pixels.
 * @param quality - JPEG quality; default 60.
 */
export async function makeScanJpeg(width: number, height: number, quality = 60): Promise<PdfImage> {
  const jpeg = await fromRaster(scanPage(width, height)).toColourspace("b-w").jpeg({ quality, mozjpeg: false }).toBuffer();
  return { jpeg: new Uint8Array(jpeg), width, height, colorSpace: "DeviceGray" };
}
