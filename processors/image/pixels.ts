/**
 * The pixel limit of an image input (MAX_INPUT_PIXELS), checked from the header before any decode
 * (field case BR-14: a 600 KB PNG can decode to ~800 MB). Shared by the image processor, the BMP
 * decoder and the album builder.
 */
import { ProcessingError } from "../types.ts";

/** Megapixels rounded to one decimal. */
function megapixels(pixels: number): number {
  return Math.round(pixels / 1e5) / 10;
}

/**
 * Refuse before decoding when the header declares more pixels than allowed (BR-14).
 * @param width pixels; @param frameHeight pixels of one frame; @param frames frames decoded; @param limit pixels
 * @throws ProcessingError `too_many_pixels` ({width, height, megapixels, limit} — MP)
 */
export function checkPixels(width: number, frameHeight: number, frames: number, limit: number): void {
  const pixels = width * frameHeight * frames;
  if (pixels > limit) {
    throw new ProcessingError(
      "too_many_pixels",
      { width, height: frameHeight, megapixels: megapixels(width * frameHeight), limit: megapixels(limit) },
      `header declares ${width}x${frameHeight}x${frames} px, limit ${limit}`,
    );
  }
}
