/**
 * A hand-written PNG encoder (node:zlib) for what sharp won't write on request: exact bit depths,
 * true 16-bit samples, and decompression bombs whose header declares a huge image.
 * Source: PNG specification (ISO/IEC 15948, W3C PNG 2nd ed.) §5 chunks, §9 filtering.
 */
import { crc32, deflateSync } from "node:zlib";

/** PNG signature, 8 bytes (PNG spec §5.2). */
export const PNG_SIGNATURE = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Colour types (PNG spec Table 11.1): 0 gray, 2 RGB, 3 palette, 4 gray+alpha, 6 RGBA. */
export type PngColorType = 0 | 2 | 3 | 4 | 6;

const CHANNELS: Record<PngColorType, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

/** Input for {@link encodePng}. */
export interface EncodePngOptions {
  /** Image width in pixels (1..2^31-1). */
  readonly width: number;
  /** Image height in pixels (1..2^31-1). */
  readonly height: number;
  /** Bits per sample: 1, 2, 4, 8 or 16 (valid combinations per colour type are the caller's job). */
  readonly bitDepth: 1 | 2 | 4 | 8 | 16;
  /** PNG colour type. */
  readonly colorType: PngColorType;
  /** RGB triples for colour type 3 (PLTE chunk). */
  readonly palette?: readonly (readonly [number, number, number])[];
  /**
   * Returns the unfiltered bytes of row `y` (big-endian samples, `ceil(width*channels*bitDepth/8)` bytes).
   * Called once per row, top to bottom; may return the same array every time.
   */
  readonly row: (y: number) => Uint8Array;
  /** Use filter type 1 (Sub) instead of 0 (None); shrinks smooth gradients. Default false. */
  readonly subFilter?: boolean;
  /** zlib level 0..9; default 9. */
  readonly level?: number;
}

/** One chunk: length, type, data, CRC-32 over type+data (PNG spec §5.3). */
export function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  out.set(Buffer.from(type, "latin1"), 4);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

/**
 * Encodes a PNG (IHDR, optional PLTE, one IDAT, IEND; no ancillary chunks, so no timestamps).
 *
 * @param options - dimensions, sample format and a row source; see {@link EncodePngOptions}.
 * @returns the PNG file bytes.
 * @throws RangeError when a row has the wrong length or colour type 3 has no palette.
 */
export function encodePng(options: EncodePngOptions): Uint8Array {
  const { width, height, bitDepth, colorType } = options;
  const bitsPerPixel = CHANNELS[colorType] * bitDepth;
  const rowBytes = Math.ceil((width * bitsPerPixel) / 8);
  const bpp = Math.max(1, bitsPerPixel >> 3); // filter distance in bytes (PNG spec §9.2)
  const filtered = Buffer.alloc(height * (rowBytes + 1));
  for (let y = 0; y < height; y++) {
    const row = options.row(y);
    if (row.length !== rowBytes) throw new RangeError(`encodePng: row ${y} has ${row.length} bytes, expected ${rowBytes}`);
    const base = y * (rowBytes + 1);
    if (options.subFilter) {
      filtered[base] = 1;
      for (let i = 0; i < rowBytes; i++) filtered[base + 1 + i] = (row[i]! - (i >= bpp ? row[i - bpp]! : 0)) & 0xff;
    } else {
      filtered.set(row, base + 1); // filter byte 0 (None) is already there
    }
  }
  const ihdr = new Uint8Array(13);
  const view = new DataView(ihdr.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  ihdr.set([bitDepth, colorType, 0, 0, 0], 8);
  const parts = [PNG_SIGNATURE, pngChunk("IHDR", ihdr)];
  if (colorType === 3) {
    if (!options.palette?.length) throw new RangeError("encodePng: colour type 3 needs a palette");
    parts.push(pngChunk("PLTE", Uint8Array.from(options.palette.flat())));
  }
  parts.push(pngChunk("IDAT", new Uint8Array(deflateSync(filtered, { level: options.level ?? 9 }))));
  parts.push(pngChunk("IEND", new Uint8Array(0)));
  return Buffer.concat(parts);
}

/**
 * A decompression bomb: a valid 1-bit palette PNG (white, black) of `width` x `height` pixels,
 * all white. 30000x30000 (900 MP) compresses to about 110 KB; decoded as RGB it would be 2.7 GB.
 * Field case BR-14: must be refused from the header, before decoding.
 *
 * @param width - pixels (default 30000).
 * @param height - pixels (default 30000).
 * @returns the PNG file bytes.
 */
export function makeBombPng(width = 30_000, height = 30_000): Uint8Array {
  const row = new Uint8Array(Math.ceil(width / 8)); // all zero = palette index 0 = white
  return encodePng({
    width,
    height,
    bitDepth: 1,
    colorType: 3,
    palette: [
      [255, 255, 255],
      [0, 0, 0],
    ],
    row: () => row,
  });
}
