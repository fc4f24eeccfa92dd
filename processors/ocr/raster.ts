/**
 * The page raster handed to Tesseract: 8-bit grey PGM (Netpbm P5), written from the canvas docket
 * drew. PGM needs no encoder (a PNG of an A4 page at 300 dpi takes ~0.3 s to deflate) and Tesseract
 * reads it through Leptonica; the resolution is passed on its command line (`--dpi`).
 * Source: Netpbm PGM format (P5: "P5 <w> <h> 255\n" then one byte per pixel, rows top to bottom).
 */
import { writeFile } from "node:fs/promises";

/**
 * Convert RGBA pixels to 8-bit grey (ITU-R BT.601 luma, integer weights 77/150/29 of 256).
 * @param rgba row-major RGBA, `width × height × 4` bytes
 * @returns `width × height` bytes
 */
export function rgbaToGrey(rgba: Uint8ClampedArray | Uint8Array, pixels: number): Uint8Array {
  const grey = new Uint8Array(pixels);
  for (let i = 0, j = 0; i < pixels; i++, j += 4) grey[i] = (77 * rgba[j]! + 150 * rgba[j + 1]! + 29 * rgba[j + 2]!) >> 8;
  return grey;
}

/**
 * Write grey pixels as a binary PGM file.
 * @param path where to write
 * @param grey `width × height` bytes, rows top to bottom
 */
export async function writePgm(path: string, grey: Uint8Array, width: number, height: number): Promise<void> {
  const header = new TextEncoder().encode(`P5\n${width} ${height}\n255\n`);
  const out = new Uint8Array(header.length + grey.length);
  out.set(header);
  out.set(grey, header.length);
  await writeFile(path, out);
}
