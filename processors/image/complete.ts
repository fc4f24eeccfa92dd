/**
 * "Is the file all there?" for container formats whose end is marked (audit of issue 5,
 * gap 10): libvips reports a cut PNG as a generic read error and decodes the frames a cut GIF
 * still has, so the user was told "corrupt" or got half an animation without a word. A missing
 * end marker is `truncated` (fixture README: "file is cut short"), like a JPEG without EOI.
 * Sources: PNG spec §11.2.5 (IEND last), GIF89a §27 (Trailer 0x3B), RIFF (WebP container:
 * bytes 4–7 = size of the rest of the file).
 */
import { open } from "node:fs/promises";

/** Bytes read from the end of the file (an IEND chunk is 12 bytes; slack for trailing junk). */
const TAIL_BYTES = 64;

/**
 * Whether an image file of the given detected extension is cut short.
 * - PNG/APNG: no `IEND` chunk type in the last 64 bytes;
 * - GIF: the last byte that is not a 0x00 padding byte is not the trailer 0x3B;
 * - WebP: the RIFF header declares more bytes than the file has.
 * Other formats: false (JPEG is caught by libjpeg's "premature end", see errors.ts).
 * @param path the image file
 * @param ext detected extension (`png`, `gif`, `webp`, …)
 */
export async function isCutShort(path: string, ext: string): Promise<boolean> {
  if (ext !== "png" && ext !== "gif" && ext !== "webp") return false;
  const fh = await open(path, "r");
  try {
    const { size } = await fh.stat();
    if (ext === "webp") {
      const head = new Uint8Array(8);
      await fh.read(head, 0, 8, 0);
      const declared = new DataView(head.buffer).getUint32(4, true) + 8;
      return declared > size;
    }
    const n = Math.min(size, TAIL_BYTES);
    const tail = new Uint8Array(n);
    await fh.read(tail, 0, n, size - n);
    if (ext === "png") return !Buffer.from(tail).includes("IEND", 0, "latin1");
    let end = tail.length - 1;
    while (end >= 0 && tail[end] === 0) end--;
    return end < 0 || tail[end] !== 0x3b;
  } finally {
    await fh.close();
  }
}
