/**
 * PDF Standard Security Handler, revision 2 (40-bit RC4), for writing encrypted sample PDFs.
 * Source: ISO 32000-1 §7.6.3 (Algorithms 1, 2, 3, 4) and §7.6.2 (per-object keys).
 */
import { createHash } from "node:crypto";

/** The 32-byte password padding string (ISO 32000-1 §7.6.3.3, Algorithm 2 step a). */
const PASSWORD_PAD = Uint8Array.from([
  0x28, 0xbf, 0x4e, 0x5e, 0x4e, 0x75, 0x8a, 0x41, 0x64, 0x00, 0x4e, 0x56, 0xff, 0xfa, 0x01, 0x08,
  0x2e, 0x2e, 0x00, 0xb6, 0xd0, 0x68, 0x3e, 0x80, 0x2f, 0x0c, 0xa9, 0xfe, 0x64, 0x53, 0x69, 0x7a,
]);

/**
 * RC4 stream cipher (encrypts and decrypts alike).
 *
 * @param key - 1..256 key bytes (PDF R2 uses 5-byte file keys and 10-byte object keys).
 * @param data - bytes to transform; not modified.
 * @returns a new array of the same length.
 */
export function rc4(key: Uint8Array, data: Uint8Array): Uint8Array {
  const s = new Uint8Array(256);
  for (let i = 0; i < 256; i++) s[i] = i;
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + s[i]! + key[i % key.length]!) & 0xff;
    [s[i], s[j]] = [s[j]!, s[i]!];
  }
  const out = new Uint8Array(data.length);
  for (let n = 0, i = 0, j = 0; n < data.length; n++) {
    i = (i + 1) & 0xff;
    j = (j + s[i]!) & 0xff;
    [s[i], s[j]] = [s[j]!, s[i]!];
    out[n] = data[n]! ^ s[(s[i]! + s[j]!) & 0xff]!;
  }
  return out;
}

function md5(...parts: Uint8Array[]): Uint8Array {
  const hash = createHash("md5");
  for (const part of parts) hash.update(part);
  return new Uint8Array(hash.digest());
}

/** Pads or truncates a password to 32 bytes (Algorithm 2 step a); Latin-1 characters only. */
function padPassword(password: string): Uint8Array {
  const raw = Buffer.from(password, "latin1").subarray(0, 32);
  const out = new Uint8Array(32);
  out.set(raw);
  out.set(PASSWORD_PAD.subarray(0, 32 - raw.length), raw.length);
  return out;
}

/** Passwords and permissions for an RC4 40-bit (R2) encrypted PDF. */
export interface PdfEncryption {
  /** User ("open") password; `""` means the file opens without asking (owner-password-only). */
  readonly userPassword: string;
  /** Owner password (restrictions); defaults to the user password when empty. */
  readonly ownerPassword: string;
  /** `/P` permission bits as a signed 32-bit integer (ISO 32000-1 Table 22); default -4 (all allowed). */
  readonly permissions?: number;
}

/** What the writer needs: the `/Encrypt` dictionary body and a per-object encryptor. */
export interface StandardSecurity {
  /** The `/Encrypt` dictionary text, e.g. `<< /Filter /Standard /V 1 /R 2 ... >>`. */
  readonly dictionary: string;
  /** Encrypts a string or stream belonging to object `num` generation `gen` (§7.6.2 Algorithm 1). */
  encrypt(num: number, gen: number, data: Uint8Array): Uint8Array;
}

/**
 * Builds the R2 security handler for one file.
 *
 * @param options - passwords and permissions.
 * @param firstId - the first element of the trailer `/ID` array (bytes), which enters the key.
 * @returns the dictionary text and an encryptor for object strings/streams.
 */
export function standardSecurityR2(options: PdfEncryption, firstId: Uint8Array): StandardSecurity {
  const permissions = options.permissions ?? -4;
  const userPad = padPassword(options.userPassword);
  // Algorithm 3: O = RC4(MD5(padded owner password)[0..5], padded user password).
  const ownerKey = md5(padPassword(options.ownerPassword || options.userPassword)).subarray(0, 5);
  const o = rc4(ownerKey, userPad);
  // Algorithm 2: file key = MD5(padded user password, O, P as 4 bytes little-endian, ID[0])[0..5].
  const p = new Uint8Array(4);
  new DataView(p.buffer).setInt32(0, permissions, true);
  const fileKey = md5(userPad, o, p, firstId).subarray(0, 5);
  // Algorithm 4: U = RC4(file key, padding string).
  const u = rc4(fileKey, PASSWORD_PAD);
  const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
  return {
    dictionary: `<< /Filter /Standard /V 1 /R 2 /Length 40 /O <${hex(o)}> /U <${hex(u)}> /P ${permissions} >>`,
    encrypt(num, gen, data) {
      const salt = Uint8Array.from([num & 0xff, (num >> 8) & 0xff, (num >> 16) & 0xff, gen & 0xff, (gen >> 8) & 0xff]);
      return rc4(md5(fileKey, salt).subarray(0, fileKey.length + 5), data);
    },
  };
}
