/**
 * Test-only: the PDF standard security handler, revision 2 (40-bit RC4), enough to make
 * password-protected and owner-password-only PDFs without qpdf (field case BR-09).
 * Source: PDF 1.7 (ISO 32000-1) §7.6.3.3 Algorithms 2, 3, 4 and §7.6.2 Algorithm 1.
 */
import { createHash } from "node:crypto";
import type { RawPdfEncryption } from "../../../processors/pdf/raw-pdf.ts";

/** The 32-byte padding string of §7.6.3.3. */
const PAD = Buffer.from("28bf4e5e4e758a4164004e56fffa01082e2e00b6d0683e802f0ca9fe6453697a", "hex");

/** RC4 keystream applied to data (encrypt = decrypt). */
export function rc4(key: Buffer, data: Buffer): Buffer {
  const s = Array.from({ length: 256 }, (_, i) => i);
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + s[i]! + key[i % key.length]!) & 255;
    [s[i], s[j]] = [s[j]!, s[i]!];
  }
  const out = Buffer.alloc(data.length);
  for (let n = 0, i = 0, j = 0; n < data.length; n++) {
    i = (i + 1) & 255;
    j = (j + s[i]!) & 255;
    [s[i], s[j]] = [s[j]!, s[i]!];
    out[n] = data[n]! ^ s[(s[i]! + s[j]!) & 255]!;
  }
  return out;
}

const md5 = (...parts: Buffer[]): Buffer => createHash("md5").update(Buffer.concat(parts)).digest();
const padded = (pw: string): Buffer => Buffer.concat([Buffer.from(pw, "latin1"), PAD]).subarray(0, 32);

/**
 * Encryption hooks for buildRawPdf.
 * @param userPassword "" for an owner-password-only file (opens without a prompt)
 * @param ownerPassword the owner password
 */
export function rc4Encryption(userPassword: string, ownerPassword: string): RawPdfEncryption {
  const id = Buffer.from("docket-test-id-1", "latin1");
  const p = -4; // all permissions bits set except reserved low bits
  const pBytes = Buffer.alloc(4);
  pBytes.writeInt32LE(p);
  const o = rc4(md5(padded(ownerPassword)).subarray(0, 5), padded(userPassword));
  const key = md5(padded(userPassword), o, pBytes, id).subarray(0, 5);
  const u = rc4(key, PAD);
  return {
    dictionary: `<< /Filter /Standard /V 1 /R 2 /Length 40 /O <${o.toString("hex")}> /U <${u.toString("hex")}> /P ${p} >>`,
    id: id.toString("latin1"),
    encryptStream(objNum: number, data: string): string {
      const salt = Buffer.from([objNum & 255, (objNum >> 8) & 255, (objNum >> 16) & 255, 0, 0]);
      const objKey = md5(key, salt).subarray(0, 10);
      return rc4(objKey, Buffer.from(data, "latin1")).toString("latin1");
    },
  };
}
