/**
 * Photo re-encoding like Telegram: a photo message carries several JPEG sizes (boxes 90, 320, 800, 1280, 2560
 * px on the long side), smallest first, largest last (botapi-facts.md §2 "photo"; field case BR-08 c).
 */
import sharp from "sharp";

/** One re-encoded size. */
export interface EncodedSize {
  width: number;
  height: number;
  bytes: Uint8Array;
}

/** Telegram's photo size boxes (s, m, x, y, w), long side in px. */
const BOXES = [90, 320, 800, 1280, 2560];

/**
 * Re-encodes an image to JPEG sizes.
 * @param input image bytes or a path sharp can read.
 * @param sizes explicit [width, height] targets (ascending); default: every box smaller than the image's long
 *   side, then the image itself (capped at 2560).
 * @throws Error when sharp cannot decode the input (the send handler maps it to "IMAGE_PROCESS_FAILED").
 */
export async function photoSizes(input: Uint8Array | string, sizes?: Array<[number, number]>): Promise<EncodedSize[]> {
  const base = sharp(input, { limitInputPixels: 100_000_000 }).rotate();
  const { info } = await base.clone().toBuffer({ resolveWithObject: true });
  const targets: Array<[number, number]> = sizes ?? defaultTargets(info.width, info.height);
  const out: EncodedSize[] = [];
  for (const [w, h] of targets) {
    const bytes = await base.clone().resize(w, h, { fit: "fill" }).jpeg({ quality: 87 }).toBuffer();
    out.push({ width: w, height: h, bytes: new Uint8Array(bytes) });
  }
  return out;
}

function defaultTargets(w: number, h: number): Array<[number, number]> {
  const long = Math.max(w, h);
  const fit = (box: number): [number, number] => {
    const k = Math.min(1, box / long);
    return [Math.max(1, Math.round(w * k)), Math.max(1, Math.round(h * k))];
  };
  const t = BOXES.filter((b) => b < long).map(fit);
  t.push(fit(Math.min(long, 2560)));
  return t;
}
