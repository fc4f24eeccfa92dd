/**
 * multipart/form-data parser with the tolerance of TDLib's HttpReader (botapi-facts.md §7):
 * header names case-insensitive, optional spaces (grammY writes `content-disposition:form-data;name="x"`),
 * values quoted or unquoted (unquoted cut at `;`), a part with `filename=` is a file, otherwise a parameter.
 */
import { ApiError, E } from "./api-error.ts";

/** A file part of a multipart body. */
export interface FilePart {
  /** Part name (the `name=` value; grammY uses a random id referenced as `attach://<id>`). */
  name: string;
  /** `filename=` value (may be empty). */
  filename: string;
  bytes: Uint8Array;
}

/** Parsed multipart body. */
export interface MultipartBody {
  fields: Record<string, string>;
  files: Map<string, FilePart>;
}

/** Max file parts per request (TD HttpReader: "too much files attached"). */
export const MAX_FILE_PARTS = 50;
/** Max total bytes of non-file parameters (TD HttpReader: 1 MiB, "too much parameters"). */
const MAX_FIELDS_BYTES = 1 << 20;

const dec = new TextDecoder();

/** Extracts the boundary from a Content-Type header; undefined if absent. */
export function boundaryOf(contentType: string): string | undefined {
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return m ? (m[1] ?? m[2]) : undefined;
}

/** Reads `key=value` from a header value: quoted value, or unquoted cut at `;`. */
function headerParam(value: string, key: string): string | undefined {
  const re = new RegExp(`(?:^|;)\\s*${key}\\s*=\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|([^;]*))`, "i");
  const m = re.exec(value);
  if (!m) return undefined;
  return m[1] !== undefined ? m[1].replace(/\\(.)/g, "$1") : (m[2] ?? "").trim();
}

/**
 * Parses a whole multipart body.
 * @throws ApiError 400 on a malformed body, 413 "Request Entity Too Large: too much files attached" over 50 files,
 *   413 "Request Entity Too Large: too much parameters" over 1 MiB of fields.
 */
export function parseMultipart(body: Uint8Array, boundary: string): MultipartBody {
  const buf = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const delim = Buffer.from(`--${boundary}`);
  const fields: Record<string, string> = {};
  const files = new Map<string, FilePart>();
  let fieldBytes = 0;
  let pos = buf.indexOf(delim);
  if (pos < 0) throw new ApiError(400, "Bad Request: can't parse multipart/form-data: boundary not found");
  for (;;) {
    pos += delim.length;
    // "--" after a delimiter ends the body.
    if (buf[pos] === 0x2d && buf[pos + 1] === 0x2d) break;
    if (buf[pos] === 0x0d && buf[pos + 1] === 0x0a) pos += 2;
    const headEnd = buf.indexOf("\r\n\r\n", pos);
    if (headEnd < 0) throw new ApiError(400, "Bad Request: can't parse multipart/form-data: unterminated part headers");
    const headers = new Map<string, string>();
    for (const line of dec.decode(buf.subarray(pos, headEnd)).split("\r\n")) {
      const colon = line.indexOf(":");
      if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    const next = buf.indexOf(Buffer.from(`\r\n--${boundary}`), headEnd + 4);
    if (next < 0) throw new ApiError(400, "Bad Request: can't parse multipart/form-data: unterminated part");
    const content = body.subarray(headEnd + 4, next);
    const disposition = headers.get("content-disposition") ?? "";
    if (!/^form-data\s*;/i.test(disposition)) {
      throw new ApiError(400, "Bad Request: can't parse multipart/form-data: wrong content-disposition");
    }
    const name = headerParam(disposition, "name") ?? "";
    const filename = headerParam(disposition, "filename");
    if (filename !== undefined) {
      if (files.size >= MAX_FILE_PARTS) throw new ApiError(413, `${E.entityTooLarge}: too much files attached`);
      files.set(name, { name, filename, bytes: new Uint8Array(content) });
    } else {
      fieldBytes += content.byteLength;
      if (fieldBytes > MAX_FIELDS_BYTES) throw new ApiError(413, `${E.entityTooLarge}: too much parameters`);
      fields[name] = dec.decode(content);
    }
    pos = next + 2;
  }
  return { fields, files };
}
