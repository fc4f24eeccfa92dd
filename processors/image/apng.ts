/**
 * Animated PNG (APNG) frames for the image processor. libvips reads only an APNG's default
 * image, so to treat APNG like animated GIF/WebP (docs/processors.md "APNG": animation kept as
 * animated WebP) the frames are composed here: each frame's data (IDAT or fdAT) is rewrapped as
 * a standalone PNG, decoded by sharp, and drawn on an RGBA canvas with the frame's blend and
 * dispose operations. Source: APNG specification 1.0 (acTL, fcTL, fdAT; §4 dispose/blend ops).
 */
import sharp from "sharp";

/** The parsed animation: canvas size, loop count (0 = forever) and frames in order. */
export interface ApngInfo {
  readonly width: number;
  readonly height: number;
  /** `num_plays` of acTL; 0 = loop forever. */
  readonly plays: number;
  readonly frames: readonly ApngFrame[];
}

/** One frame: region on the canvas, delay (ms), operations, and its image data as a PNG. */
export interface ApngFrame {
  readonly width: number;
  readonly height: number;
  readonly x: number;
  readonly y: number;
  readonly delayMs: number;
  /** 0 none, 1 clear region to transparent, 2 restore the previous canvas. */
  readonly dispose: number;
  /** 0 source (replace the region), 1 over (alpha-composite). */
  readonly blend: number;
  /** A standalone PNG of the frame (its own IHDR size, the file's PLTE/tRNS etc.). */
  readonly png: Uint8Array;
}

const SIGNATURE = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** Chunks copied into every frame's PNG (colour-related, before IDAT). */
const SHARED_CHUNKS = new Set(["PLTE", "tRNS", "gAMA", "cHRM", "sRGB", "iCCP", "sBIT"]);

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  out.set(Buffer.from(type, "latin1"), 4);
  out.set(data, 8);
  view.setUint32(8 + data.length, Bun.hash.crc32(out.subarray(4, 8 + data.length)) >>> 0);
  return out;
}

/**
 * Parse an APNG's chunk structure (no pixel decoding).
 * @returns the animation, or null when the file has no acTL or fewer than 2 frames (a still PNG)
 * @throws Error on a malformed animation (bad sequence, frame outside the canvas, missing data)
 */
export function parseApng(bytes: Uint8Array): ApngInfo | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let ihdr: Uint8Array | null = null;
  let plays = 0;
  let declared = 0;
  const shared: Uint8Array[] = [];
  type Pending = Omit<ApngFrame, "png"> & { data: Uint8Array[] };
  const pending: Pending[] = [];
  let current: Pending | null = null;
  for (let pos = 8; pos + 12 <= bytes.length; ) {
    const len = view.getUint32(pos);
    const type = String.fromCharCode(...bytes.subarray(pos + 4, pos + 8));
    const data = bytes.subarray(pos + 8, pos + 8 + len);
    if (data.length !== len) throw new Error(`APNG: chunk ${type} cut short`);
    pos += 12 + len;
    if (type === "IHDR") ihdr = data;
    else if (type === "acTL") {
      declared = view.getUint32(data.byteOffset - bytes.byteOffset);
      plays = view.getUint32(data.byteOffset - bytes.byteOffset + 4);
    } else if (SHARED_CHUNKS.has(type)) shared.push(chunk(type, data));
    else if (type === "fcTL") {
      if (len < 26) throw new Error("APNG: short fcTL");
      const d = new DataView(data.buffer, data.byteOffset, data.byteLength);
      const den = d.getUint16(22) || 100;
      current = { width: d.getUint32(4), height: d.getUint32(8), x: d.getUint32(12), y: d.getUint32(16), delayMs: Math.round((d.getUint16(20) * 1000) / den), dispose: data[24]!, blend: data[25]!, data: [] };
      pending.push(current);
    } else if (type === "IDAT") current?.data.push(data); // IDAT before any fcTL: default image only
    else if (type === "fdAT") current?.data.push(data.subarray(4));
    else if (type === "IEND") break;
  }
  if (!ihdr || declared < 2 || pending.length < 2) return null;
  const width = new DataView(ihdr.buffer, ihdr.byteOffset).getUint32(0);
  const height = new DataView(ihdr.buffer, ihdr.byteOffset).getUint32(4);
  const frames = pending.map((f, i): ApngFrame => {
    if (f.data.length === 0) throw new Error(`APNG: frame ${i + 1} has no data`);
    if (f.width === 0 || f.height === 0 || f.x + f.width > width || f.y + f.height > height) throw new Error(`APNG: frame ${i + 1} lies outside the canvas`);
    const head = new Uint8Array(ihdr);
    new DataView(head.buffer).setUint32(0, f.width);
    new DataView(head.buffer).setUint32(4, f.height);
    const png = Buffer.concat([SIGNATURE, chunk("IHDR", head), ...shared, chunk("IDAT", Buffer.concat(f.data)), chunk("IEND", new Uint8Array(0))]);
    const { data: _data, ...rest } = f;
    return { ...rest, png };
  });
  return { width, height, plays, frames };
}

/**
 * Compose the frames into full RGBA canvases, stacked vertically (frame n at row n × height),
 * ready for `sharp(raw, { raw: { width, height: height × n, channels: 4, pageHeight: height } })`.
 * @param limitInputPixels sharp's pixel limit for each frame's decode
 * @throws whatever sharp throws for a frame it cannot decode (truncated, corrupt)
 */
export async function composeApng(apng: ApngInfo, limitInputPixels: number): Promise<Buffer> {
  const { width, height, frames } = apng;
  const size = width * height * 4;
  const out = Buffer.alloc(size * frames.length);
  let canvas = new Uint8Array(size);
  for (const [i, f] of frames.entries()) {
    const rgba = await sharp(f.png, { limitInputPixels, failOn: "error" }).ensureAlpha().toColourspace("srgb").raw().toBuffer();
    // APNG §4: dispose_op 2 on the first frame is treated as 1.
    const dispose = i === 0 && f.dispose === 2 ? 1 : f.dispose;
    const before = dispose === 2 ? canvas.slice() : null;
    for (let y = 0; y < f.height; y++) {
      for (let x = 0; x < f.width; x++) {
        const s = (y * f.width + x) * 4;
        const d = ((f.y + y) * width + f.x + x) * 4;
        const a = rgba[s + 3]!;
        if (f.blend === 0 || a === 255 || canvas[d + 3] === 0) {
          if (f.blend === 1 && a === 0) continue;
          canvas.set(rgba.subarray(s, s + 4), d);
        } else if (a > 0) {
          // "over" (APNG §4, blend_op 1) on straight alpha.
          const da = canvas[d + 3]! / 255;
          const sa = a / 255;
          const oa = sa + da * (1 - sa);
          for (let c = 0; c < 3; c++) canvas[d + c] = Math.round((rgba[s + c]! * sa + canvas[d + c]! * da * (1 - sa)) / oa);
          canvas[d + 3] = Math.round(oa * 255);
        }
      }
    }
    out.set(canvas, i * size);
    if (dispose === 1) for (let y = 0; y < f.height; y++) canvas.fill(0, ((f.y + y) * width + f.x) * 4, ((f.y + y) * width + f.x + f.width) * 4);
    else if (before) canvas = before;
  }
  return out;
}
