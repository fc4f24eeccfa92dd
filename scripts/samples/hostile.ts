/**
 * Hostile and edge-case inputs for the processor tests (audit of issue 5): broken PDF page trees,
 * flate bombs, a huge-but-valid PDF written sparse, APNG, GIFs with very many tiny frames, a PNG
 * whose text mentions `%PDF-`, a stored ZIP. Made in memory or streamed to a path at test time,
 * never kept in the repository. Deterministic: same arguments, same bytes.
 * Sources: ISO 32000-1 §7.5 (file structure), §7.7.3 (page tree); PNG spec §11.3.4.3 (tEXt);
 * APNG spec (acTL, fcTL, fdAT); GIF89a spec (§18–§23, LZW in §22 and appendix F).
 */
import { zipSync } from "fflate";
import { open } from "node:fs/promises";
import { deflateSync } from "node:zlib";
import { PNG_SIGNATURE, encodePng, pngChunk } from "./png.ts";

/** One indirect object for {@link rawPdf}: a dictionary (or any PDF value) and an optional stream. */
export interface RawPdfObject {
  /** The object's value, e.g. `<< /Type /Page … >>`; for a stream, its dictionary without `/Length`. */
  readonly dict: string;
  /** Stream data (written unchanged after `stream\n`; `/Length` is added). */
  readonly stream?: Uint8Array;
}

const latin1 = (s: string): Uint8Array => Buffer.from(s, "latin1");

/**
 * A PDF from a list of objects numbered 1…n (object 1 must be the Catalog), with a classic
 * xref table of exact offsets. Object numbers missing from `objects` (`null` entries) are
 * written as free xref entries, so a reference to them points at nothing.
 * @param objects objects 1…n in order; `null` = number left free
 * @param version header version, default `1.4`
 */
export function rawPdf(objects: readonly (RawPdfObject | null)[], version = "1.4"): Uint8Array {
  const parts: Uint8Array[] = [latin1(`%PDF-${version}\n%\u00e2\u00e3\u00cf\u00d3\n`)];
  let offset = parts[0]!.length;
  const offsets: (number | null)[] = [];
  objects.forEach((o, i) => {
    if (!o) {
      offsets.push(null);
      return;
    }
    offsets.push(offset);
    const head = o.stream ? `${i + 1} 0 obj\n${o.dict.replace(/>>\s*$/, `/Length ${o.stream.length} >>`)}\nstream\n` : `${i + 1} 0 obj\n${o.dict}\nendobj\n`;
    const pieces = o.stream ? [latin1(head), o.stream, latin1("\nendstream\nendobj\n")] : [latin1(head)];
    for (const p of pieces) {
      parts.push(p);
      offset += p.length;
    }
  });
  const xref = [`xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`, ...offsets.map((o) => (o === null ? "0000000000 65535 f \n" : `${String(o).padStart(10, "0")} 00000 n \n`))].join("");
  parts.push(latin1(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${offset}\n%%EOF\n`));
  return Buffer.concat(parts);
}

const FONT: RawPdfObject = { dict: "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>" };
const textPage = (parent: number, content: number, font: number): RawPdfObject => ({
  dict: `<< /Type /Page /Parent ${parent} 0 R /MediaBox [0 0 200 200] /Contents ${content} 0 R /Resources << /Font << /F1 ${font} 0 R >> >> >>`,
});
const textContent = (text: string): RawPdfObject => ({ dict: "<< >>", stream: latin1(`BT /F1 24 Tf 20 100 Td (${text}) Tj ET\n`) });

/** How {@link makeBrokenTreePdf} breaks page 2 of a 2-page tree. */
export type BrokenTree = "wrong-kid" | "missing-kid" | "kids-loop";

/**
 * A 2-page PDF whose page 1 is fine and whose page 2 entry in `/Kids` is broken: it points at the
 * font (`wrong-kid`), at a free object number (`missing-kid`), or back at the Pages node itself
 * (`kids-loop`, a circular tree). The file opens (xref and trailer are fine); pdf.js fails only
 * when it walks the tree (pdf.js: "Page dictionary kid reference points to wrong type of object" /
 * "Pages tree contains circular reference").
 */
export function makeBrokenTreePdf(kind: BrokenTree): Uint8Array {
  const kid2 = kind === "wrong-kid" ? "5 0 R" : kind === "missing-kid" ? "6 0 R" : "2 0 R";
  return rawPdf([
    { dict: "<< /Type /Catalog /Pages 2 0 R >>" },
    { dict: `<< /Type /Pages /Kids [3 0 R ${kid2}] /Count 2 >>` },
    textPage(2, 4, 5),
    textContent("Page one"),
    FONT,
    null,
  ]);
}

/**
 * A 1-page PDF whose content (`content`) or full-page image XObject (`image`, square DeviceRGB)
 * inflates to about `inflatedBytes` bytes from a few hundred KB (FlateDecode of spaces / zeros):
 * a decompression bomb for pdf.js.
 */
export function makeFlateBombPdf(kind: "content" | "image", inflatedBytes: number): Uint8Array {
  if (kind === "content") {
    const bomb = new Uint8Array(deflateSync(new Uint8Array(inflatedBytes).fill(0x20), { level: 9 }));
    return rawPdf([
      { dict: "<< /Type /Catalog /Pages 2 0 R >>" },
      { dict: "<< /Type /Pages /Kids [3 0 R] /Count 1 >>" },
      { dict: "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << >> >>" },
      { dict: "<< /Filter /FlateDecode >>", stream: bomb },
    ]);
  }
  const side = Math.floor(Math.sqrt(inflatedBytes / 3));
  const bomb = new Uint8Array(deflateSync(new Uint8Array(side * side * 3), { level: 9 }));
  return rawPdf([
    { dict: "<< /Type /Catalog /Pages 2 0 R >>" },
    { dict: "<< /Type /Pages /Kids [3 0 R] /Count 1 >>" },
    { dict: "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /XObject << /Im1 5 0 R >> >> >>" },
    { dict: "<< >>", stream: latin1("q 595 0 0 842 0 0 cm /Im1 Do Q\n") },
    { dict: `<< /Type /XObject /Subtype /Image /Width ${side} /Height ${side} /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode >>`, stream: bomb },
  ]);
}

/**
 * Write a valid PDF of `padBytes` + about 1 KB to `path`: one 200×200 pt text page ("Big file")
 * and an unreferenced stream of `padBytes` zero bytes. The zeros are a hole (the file is sparse),
 * so a 600 MB file costs no disk blocks and is written in milliseconds. Remove it after use.
 * @returns the file size in bytes
 */
export async function writeSparsePdf(path: string, padBytes: number): Promise<number> {
  const small = rawPdf([{ dict: "<< /Type /Catalog /Pages 2 0 R >>" }, { dict: "<< /Type /Pages /Kids [3 0 R] /Count 1 >>" }, textPage(2, 4, 5), textContent("Big file"), FONT]);
  // Body of the small PDF up to its xref, then object 6 (the padding), then a new xref.
  const text = Buffer.from(small).toString("latin1");
  const xrefAt = text.lastIndexOf("\nxref\n") + 1;
  const offsets = [...text.slice(xrefAt).matchAll(/(\d{10}) 00000 n /g)].map((m) => Number(m[1]));
  const head = latin1(`6 0 obj\n<< /Length ${padBytes} >>\nstream\n`);
  const padStart = xrefAt + head.length;
  const obj6 = xrefAt;
  const afterPad = padStart + padBytes;
  const tailXrefAt = afterPad + "\nendstream\nendobj\n".length;
  const xref = ["xref\n0 7\n0000000000 65535 f \n", ...[...offsets, obj6].map((o) => `${String(o).padStart(10, "0")} 00000 n \n`)].join("");
  const tail = latin1(`\nendstream\nendobj\n${xref}trailer\n<< /Size 7 /Root 1 0 R >>\nstartxref\n${tailXrefAt}\n%%EOF\n`);
  const fh = await open(path, "w");
  try {
    await fh.write(small, 0, xrefAt, 0);
    await fh.write(head, 0, head.length, xrefAt);
    await fh.write(tail, 0, tail.length, afterPad); // the gap before it stays a hole of zeros
  } finally {
    await fh.close();
  }
  return afterPad + tail.length;
}

/** Filtered (filter 0) RGB rows of one solid colour, deflated (PNG/APNG image data). */
function solidRgbData(width: number, height: number, rgb: readonly [number, number, number]): Uint8Array {
  const raw = new Uint8Array((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) raw.set(rgb, y * (width * 3 + 1) + 1 + x * 3);
  return new Uint8Array(deflateSync(raw, { level: 9 }));
}

/** Where a later APNG frame is drawn, and its dispose op (APNG §4: 0 none, 1 background, 2 previous). */
export interface ApngRegion {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
  readonly dispose?: 0 | 1 | 2;
}

/**
 * An animated PNG (APNG): 8-bit RGB, one solid colour per frame (default red, lime, blue), each
 * frame `delayMs` long, looping forever. The first frame is the default image (plain decoders
 * show it); `file-type` reports `image/apng` for it. `regions[i]` makes frame i (i ≥ 1) a
 * rectangle with a dispose op instead of the whole canvas (blend op "source").
 */
export function makeApng(
  width: number,
  height: number,
  colours: readonly (readonly [number, number, number])[] = [[255, 0, 0], [0, 255, 0], [0, 0, 255]],
  delayMs = 200,
  regions: readonly (ApngRegion | null | undefined)[] = [],
): Uint8Array {
  const u32 = (n: number): number[] => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
  const u16 = (n: number): number[] => [(n >>> 8) & 255, n & 255];
  const ihdr = Uint8Array.from([...u32(width), ...u32(height), 8, 2, 0, 0, 0]);
  const parts: Uint8Array[] = [PNG_SIGNATURE, pngChunk("IHDR", ihdr), pngChunk("acTL", Uint8Array.from([...u32(colours.length), ...u32(0)]))];
  let seq = 0;
  colours.forEach((c, i) => {
    const r = (i > 0 ? regions[i] : null) ?? { x: 0, y: 0, width, height, dispose: 0 };
    parts.push(pngChunk("fcTL", Uint8Array.from([...u32(seq++), ...u32(r.width), ...u32(r.height), ...u32(r.x), ...u32(r.y), ...u16(delayMs), ...u16(1000), r.dispose ?? 0, 0])));
    const data = solidRgbData(r.width, r.height, c);
    if (i === 0) parts.push(pngChunk("IDAT", data));
    else parts.push(pngChunk("fdAT", Buffer.concat([Uint8Array.from(u32(seq++)), data])));
  });
  parts.push(pngChunk("IEND", new Uint8Array(0)));
  return Buffer.concat(parts);
}

/**
 * A GIF89a of `frames` frames of 1×1 pixel, alternating black and white, looping forever: tiny
 * on disk (23 bytes a frame) and tiny in pixels, but a decoder still walks every frame.
 */
export function makeTinyFrameGif(frames: number): Uint8Array {
  const head = Uint8Array.from([
    ...latin1("GIF89a"), 1, 0, 1, 0, 0x80, 0, 0, // logical screen 1×1, global colour table of 2
    0, 0, 0, 255, 255, 255,
    0x21, 0xff, 11, ...latin1("NETSCAPE2.0"), 3, 1, 0, 0, 0, // loop forever
  ]);
  // One frame: graphic control (delay 10 ms), image descriptor 1×1, LZW min code size 2,
  // one sub-block with clear(4), the pixel (0 or 1), end(5) in 3-bit codes.
  const frame = (pixel: number): number[] => [0x21, 0xf9, 4, 0, 1, 0, 0, 0, 0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 4 | (pixel << 3) | ((5 << 6) & 0xff), 5 >> 2, 0];
  const a = frame(0);
  const b = frame(1);
  const out = new Uint8Array(head.length + frames * a.length + 1);
  out.set(head, 0);
  for (let i = 0; i < frames; i++) out.set(i % 2 ? b : a, head.length + i * a.length);
  out[out.length - 1] = 0x3b;
  return out;
}

/** A 64×64 grey RGB PNG with a `tEXt` chunk (keyword `Comment`) holding `text` right after IHDR. */
export function makePngWithText(text: string): Uint8Array {
  const png = encodePng({ width: 64, height: 64, bitDepth: 8, colorType: 2, row: () => new Uint8Array(64 * 3).fill(128) });
  const afterIhdr = 8 + 25; // signature + IHDR chunk (4 length + 4 type + 13 data + 4 CRC)
  return Buffer.concat([png.subarray(0, afterIhdr), pngChunk("tEXt", latin1(`Comment\0${text}`)), png.subarray(afterIhdr)]);
}

/** A ZIP holding one file stored uncompressed (`zip -0`), so the member's bytes appear as-is. */
export function makeStoredZip(name: string, bytes: Uint8Array): Uint8Array {
  return zipSync({ [name]: [bytes, { level: 0 }] });
}
