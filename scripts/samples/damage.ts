/**
 * Byte-level damage applied to good files to make the bad samples: cut short, junk in front,
 * shifted xref, garbage after a header. Pure functions on byte arrays.
 */
import { seededBytes } from "./prng.ts";

/**
 * The first `floor(length * fraction)` bytes (a download or copy cut short).
 *
 * @param fraction - 0..1; default 0.5 (the shared fixtures' "first half").
 */
export function truncate(bytes: Uint8Array, fraction = 0.5): Uint8Array {
  return bytes.slice(0, Math.floor(bytes.length * fraction));
}

/**
 * `junkLength` bytes of Latin-1 text (a mail header pasted in front), then `bytes`.
 * Readers such as Acrobat, poppler, qpdf and pdf.js accept a `%PDF-` within the first 1024 bytes.
 *
 * @param junkLength - bytes of junk; default 512.
 */
export function prependJunk(bytes: Uint8Array, junkLength = 512): Uint8Array {
  const line = "X-Scanner-Note: d\u00e9j\u00e0 vu, this line is not part of the PDF\r\n";
  const junk = Buffer.from(line.repeat(Math.ceil(junkLength / line.length)), "latin1").subarray(0, junkLength);
  return Buffer.concat([junk, bytes]);
}

/**
 * Inserts `insert` right after the PDF header and its binary comment line (the first two lines),
 * without touching the xref table, so every xref offset and `startxref` is wrong by `insert.length`.
 *
 * @throws Error when the input has fewer than two lines.
 */
export function insertAfterHeader(bytes: Uint8Array, insert: Uint8Array): Uint8Array {
  const first = bytes.indexOf(0x0a);
  const second = first < 0 ? -1 : bytes.indexOf(0x0a, first + 1);
  if (second < 0) throw new Error("insertAfterHeader: no two-line header found");
  return Buffer.concat([bytes.subarray(0, second + 1), insert, bytes.subarray(second + 1)]);
}

/**
 * A valid 15-byte `%PDF-x.y` header and binary comment, then `length` seeded random bytes: a PDF
 * signature with nothing parseable after it (reason `corrupt`).
 *
 * @param version - header version, default "1.7".
 * @param length - random bytes after the header; default 6000.
 * @param seed - PRNG seed; default 4812.
 */
export function garbageAfterHeader(version = "1.7", length = 6000, seed = 4812): Uint8Array {
  return Buffer.concat([Buffer.from(`%PDF-${version}\n%\u00e2\u00e3\u00cf\u00d3\n`, "latin1"), seededBytes(seed, length)]);
}

/**
 * `length` seeded random bytes whose first two bytes are 5a 13, which starts no known file
 * signature (reason `unsupported_type`).
 */
export function randomBytes(length = 8192, seed = 77): Uint8Array {
  const out = seededBytes(seed, length);
  out.set([0x5a, 0x13]);
  return out;
}
