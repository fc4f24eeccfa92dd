/**
 * BMP input. sharp's prebuilt libvips has no BMP loader ("unsupported image format",
 * checked on sharp 0.35.5), so BMP is decoded by `bmp-ts` (pure TypeScript) into raw
 * RGBA, after the header's size has been checked against the pixel limit
 * (field case BR-14: refuse from the header, before decoding). {@link bmpInput} is the one way
 * in for every path that reads a BMP (the image processor, an album's page).
 */
import { decode } from "bmp-ts";
import sharp, { type Sharp } from "sharp";
import { ProcessingError } from "../types.ts";
import { checkPixels } from "./pixels.ts";

/** Size fields of a BMP header. */
export interface BmpHeader {
  readonly width: number;
  readonly height: number;
  readonly bitsPerPixel: number;
}

/**
 * Read width, height and bit depth from a BMP header (BITMAPCOREHEADER or BITMAPINFOHEADER+).
 * @throws ProcessingError `truncated` when the header is cut short, `corrupt` when it is nonsense
 */
export function readBmpHeader(bytes: Uint8Array): BmpHeader {
  if (bytes.length < 26) throw new ProcessingError("truncated", { ext: "bmp", label: "BMP image", size: "none" }, "BMP header cut short");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerSize = view.getUint32(14, true);
  if (headerSize === 12) {
    return { width: view.getUint16(18, true), height: view.getUint16(20, true), bitsPerPixel: view.getUint16(24, true) };
  }
  if (headerSize < 40 || bytes.length < 30) throw new ProcessingError("corrupt", { ext: "bmp", label: "BMP image", size: "none" }, `BMP header size ${headerSize}`);
  return {
    width: Math.abs(view.getInt32(18, true)),
    height: Math.abs(view.getInt32(22, true)),
    bitsPerPixel: view.getUint16(28, true),
  };
}

/**
 * Decode a BMP into raw pixels for sharp's `raw` input.
 * @returns RGBA (4 channels) for 32-bit BMPs, RGB (3 channels) otherwise, top-down rows
 * @throws ProcessingError `truncated` when the pixel data is shorter than the header says, `corrupt` otherwise
 */
export function decodeBmp(bytes: Uint8Array, header: BmpHeader): { data: Buffer; width: number; height: number; channels: 3 | 4 } {
  let rgba: Buffer;
  try {
    rgba = decode(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { toRGBA: true }).data;
  } catch (err) {
    const reason = err instanceof RangeError ? "truncated" : "corrupt";
    throw new ProcessingError(reason, { ext: "bmp", label: "BMP image", size: `${header.width}×${header.height}` }, `bmp-ts: ${(err as Error).message}`);
  }
  const { width, height } = header;
  if (rgba.length < width * height * 4) {
    throw new ProcessingError("truncated", { ext: "bmp", label: "BMP image", size: `${width}×${height}` }, "BMP pixel data shorter than the header says");
  }
  if (header.bitsPerPixel === 32) return { data: rgba, width, height, channels: 4 };
  // Other depths carry no alpha; bmp-ts fills the 4th byte anyway, so drop it.
  const rgb = Buffer.alloc(width * height * 3);
  for (let i = 0, j = 0; j < rgb.length; i += 4, j += 3) {
    rgb[j] = rgba[i]!;
    rgb[j + 1] = rgba[i + 1]!;
    rgb[j + 2] = rgba[i + 2]!;
  }
  return { data: rgb, width, height, channels: 3 };
}

/**
 * A BMP file as a sharp pipeline of its decoded pixels: the header read, its size checked against
 * `maxInputPixels` before decoding (BR-14), then decoded by bmp-ts (sharp cannot read BMP).
 * @param path the BMP file; @param maxInputPixels MAX_INPUT_PIXELS
 * @returns the raw-input pipeline (not yet oriented, resized or encoded) and its size and channels
 * @throws ProcessingError `too_many_pixels`, `truncated`, `corrupt`
 */
export async function bmpInput(path: string, maxInputPixels: number): Promise<{ pipeline: Sharp; width: number; height: number; channels: 3 | 4 }> {
  const bytes = await Bun.file(path).bytes();
  const header = readBmpHeader(bytes);
  checkPixels(header.width, header.height, 1, maxInputPixels);
  const raw = decodeBmp(bytes, header);
  const pipeline = sharp(raw.data, { raw: { width: raw.width, height: raw.height, channels: raw.channels }, limitInputPixels: maxInputPixels });
  return { pipeline, width: raw.width, height: raw.height, channels: raw.channels };
}
