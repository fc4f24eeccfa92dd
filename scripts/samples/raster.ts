/**
 * Raw pixel buffers drawn in code (no fonts, no randomness), fed to sharp as `raw` input.
 * Drawing is deterministic so generated samples are byte-identical on every run.
 */

/** An 8-bit interleaved pixel buffer, row-major, `channels` bytes per pixel. */
export interface Raster {
  /** Width in pixels. */
  readonly width: number;
  /** Height in pixels. */
  readonly height: number;
  /** 1 gray, 3 RGB, 4 RGBA. */
  readonly channels: 1 | 3 | 4;
  /** `width * height * channels` bytes. */
  readonly data: Uint8Array;
}

/** Colours of the test card: the corner squares let tests check orientation after decoding. */
export const CARD_COLOURS = {
  /** Top-left square as displayed (#d00000). */
  topLeft: [0xd0, 0x00, 0x00],
  /** Bottom-right square as displayed (#0000d0). */
  bottomRight: [0x00, 0x00, 0xd0],
} as const;

/**
 * A blank raster filled with one colour.
 *
 * @param colour - one value per channel (e.g. `[255, 255, 255]` for white RGB).
 */
export function solid(width: number, height: number, colour: readonly number[]): Raster {
  const channels = colour.length as 1 | 3 | 4;
  const data = new Uint8Array(width * height * channels);
  for (let i = 0; i < data.length; i += channels) data.set(colour, i);
  return { width, height, channels, data };
}

/**
 * Paints a rectangle (clipped to the raster). Coordinates in pixels, origin top-left.
 *
 * @param colour - one value per channel of the raster.
 */
export function fillRect(r: Raster, x: number, y: number, w: number, h: number, colour: readonly number[]): void {
  for (let yy = Math.max(0, y); yy < Math.min(r.height, y + h); yy++) {
    for (let xx = Math.max(0, x); xx < Math.min(r.width, x + w); xx++) r.data.set(colour, (yy * r.width + xx) * r.channels);
  }
}

/** Paints a filled circle of radius `radius` px centred at (`cx`, `cy`). */
export function fillCircle(r: Raster, cx: number, cy: number, radius: number, colour: readonly number[]): void {
  for (let y = Math.max(0, cy - radius); y <= Math.min(r.height - 1, cy + radius); y++) {
    for (let x = Math.max(0, cx - radius); x <= Math.min(r.width - 1, cx + radius); x++) {
      if ((x - cx) ** 2 + (y - cy) ** 2 <= radius ** 2) r.data.set(colour, (y * r.width + x) * r.channels);
    }
  }
}

/**
 * The RGB test card: a smooth gradient (red grows left to right, green top to bottom) with a
 * #d00000 square in the top-left corner and a #0000d0 square in the bottom-right corner,
 * each a fifth of the shorter side.
 */
export function testCard(width: number, height: number): Raster {
  const r = solid(width, height, [0, 0, 0]);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      r.data.set([Math.round((x * 255) / Math.max(1, width - 1)), Math.round((y * 255) / Math.max(1, height - 1)), 160], (y * width + x) * 3);
    }
  }
  const side = Math.max(1, Math.floor(Math.min(width, height) / 5));
  fillRect(r, 0, 0, side, side, CARD_COLOURS.topLeft);
  fillRect(r, width - side, height - side, side, side, CARD_COLOURS.bottomRight);
  return r;
}

/**
 * A grayscale "scanned page": white paper with dark bars standing in for lines of text
 * (pixels only, so a PDF made from it has no text layer).
 */
export function scanPage(width: number, height: number): Raster {
  const r = solid(width, height, [250]);
  const margin = Math.round(width / 10);
  const lineHeight = Math.max(2, Math.round(height / 60));
  for (let line = 0, y = margin; y + lineHeight < height - margin; line++, y += lineHeight * 2) {
    // Ragged right edge like real text; the pattern repeats so it stays deterministic.
    const length = Math.round((width - 2 * margin) * (0.55 + 0.45 * (((line * 7) % 10) / 9)));
    fillRect(r, margin, y, length, lineHeight, [40]);
  }
  return r;
}
