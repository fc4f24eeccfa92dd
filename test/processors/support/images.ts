/**
 * Test-only image makers: inputs generated in the test (sharp, or raw bytes written by
 * hand where sharp would be the code under test), so the suites run without ../shared.
 */
import { deflateSync } from "node:zlib";

/** PNG chunk with its CRC-32 (PNG spec §5.3). */
function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(Bun.hash.crc32(body) >>> 0);
  return Buffer.concat([len, body, crc]);
}

/**
 * Decompression bomb (field case BR-14): a 1-bit grayscale PNG of side×side pixels whose
 * rows are all zero, compressed at zlib level 9. 30000 gives ~110 KB on disk, 900 MP declared.
 */
export function bombPng(side: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(side, 0);
  ihdr.writeUInt32BE(side, 4);
  ihdr[8] = 1; // bit depth
  ihdr[9] = 0; // grayscale
  const rowBytes = 1 + Math.ceil(side / 8); // filter byte + packed pixels
  const idat = deflateSync(Buffer.alloc(rowBytes * side), { level: 9 });
  return Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), chunk("IHDR", ihdr), chunk("IDAT", idat), chunk("IEND", Buffer.alloc(0))]);
}

/**
 * 24-bit bottom-up BMP (BITMAPINFOHEADER, BI_RGB) written by hand; pixel(x, y) gives [r, g, b]
 * with y = 0 at the top.
 */
export function bmp24(width: number, height: number, pixel: (x: number, y: number) => [number, number, number]): Buffer {
  const stride = Math.ceil((width * 3) / 4) * 4;
  const size = 54 + stride * height;
  const b = Buffer.alloc(size);
  b.write("BM", 0, "latin1");
  b.writeUInt32LE(size, 2);
  b.writeUInt32LE(54, 10);
  b.writeUInt32LE(40, 14);
  b.writeInt32LE(width, 18);
  b.writeInt32LE(height, 22);
  b.writeUInt16LE(1, 26);
  b.writeUInt16LE(24, 28);
  b.writeUInt32LE(stride * height, 34);
  for (let y = 0; y < height; y++) {
    const row = 54 + (height - 1 - y) * stride;
    for (let x = 0; x < width; x++) {
      const [r, g, bl] = pixel(x, y);
      b[row + x * 3] = bl;
      b[row + x * 3 + 1] = g;
      b[row + x * 3 + 2] = r;
    }
  }
  return b;
}

/** Raw RGB frames stacked vertically (for sharp `raw` input with `pageHeight`). */
export function stackedFrames(width: number, height: number, colours: readonly [number, number, number][]): Buffer {
  const frame = width * height * 3;
  const raw = Buffer.alloc(frame * colours.length);
  colours.forEach((c, f) => {
    for (let i = 0; i < width * height; i++) raw.set(c, f * frame + i * 3);
  });
  return raw;
}
