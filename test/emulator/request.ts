/**
 * Reads Bot API request parameters from the query string, an urlencoded body, a JSON body or a
 * multipart body (botapi-facts.md §3 "Envelope": parameters via query string, urlencoded, JSON or multipart).
 */
import { ApiError, E } from "./api-error.ts";
import { boundaryOf, parseMultipart, type FilePart } from "./multipart.ts";

/** Parameters and file parts of one request. */
export interface ParsedRequest {
  /** Strings for query/urlencoded/multipart fields, typed values for JSON. Body values override the query string. */
  params: Record<string, unknown>;
  /** Multipart file parts by part name. */
  files: Map<string, FilePart>;
}

/**
 * Reads the body, refusing more than `maxBytes` with 413 "Request Entity Too Large" without buffering the rest.
 * @throws ApiError 413 when the declared or streamed size passes maxBytes.
 */
async function readCapped(req: Request, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(req.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > maxBytes) throw new ApiError(413, E.entityTooLarge);
  if (!req.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = req.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new ApiError(413, E.entityTooLarge);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/**
 * Parses a request's parameters.
 * @param maxBodyBytes cap on the body (upload limit + room for parameters).
 * @throws ApiError 413 for oversized bodies, 400 for unparsable JSON or multipart.
 */
export async function parseRequest(req: Request, maxBodyBytes: number): Promise<ParsedRequest> {
  const url = new URL(req.url);
  const params: Record<string, unknown> = {};
  for (const [k, v] of url.searchParams) params[k] = v;
  const files = new Map<string, FilePart>();
  if (req.method !== "POST") return { params, files };
  const type = (req.headers.get("content-type") ?? "").toLowerCase();
  const body = await readCapped(req, maxBodyBytes);
  if (body.byteLength === 0) return { params, files };
  if (type.startsWith("application/json")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(new TextDecoder().decode(body));
    } catch {
      throw new ApiError(400, "Bad Request: can't parse JSON object");
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      throw new ApiError(400, "Bad Request: can't parse JSON object");
    }
    Object.assign(params, parsed);
  } else if (type.startsWith("multipart/form-data")) {
    const boundary = boundaryOf(req.headers.get("content-type") ?? "");
    if (!boundary) throw new ApiError(400, "Bad Request: can't parse multipart/form-data: no boundary");
    const mp = parseMultipart(body, boundary);
    Object.assign(params, mp.fields);
    for (const [k, f] of mp.files) files.set(k, f);
  } else if (type.startsWith("application/x-www-form-urlencoded") || type === "") {
    for (const [k, v] of new URLSearchParams(new TextDecoder().decode(body))) params[k] = v;
  }
  return { params, files };
}

/**
 * Copy of params for the call log: a value `attach://<id>` naming a file part, or a file part named like a
 * parameter, becomes `{ file_name, size }` (bytes never enter the log). An album's `media` (JSON text or an
 * array) is logged parsed, each item's `attach://<id>` resolved the same way.
 */
export function paramsForLog(p: ParsedRequest): Record<string, unknown> {
  const out: Record<string, unknown> = { ...p.params };
  const referenced = new Set<string>();
  const resolve = (v: unknown): unknown => {
    if (typeof v !== "string" || !v.startsWith("attach://")) return v;
    referenced.add(v.slice(9));
    const f = p.files.get(v.slice(9));
    return f ? { file_name: f.filename, size: f.bytes.byteLength } : v;
  };
  for (const [k, v] of Object.entries(out)) out[k] = resolve(v);
  if (out.media !== undefined) {
    let media: unknown = out.media;
    if (typeof media === "string") {
      try {
        media = JSON.parse(media);
      } catch {
        // unparsable: logged as sent (the handler answers the error)
      }
    }
    if (Array.isArray(media)) out.media = media.map((m) => (m && typeof m === "object" && "media" in m ? { ...m, media: resolve((m as { media: unknown }).media) } : m));
  }
  for (const [name, f] of p.files) {
    if (!(name in out) && !referenced.has(name)) out[name] = { file_name: f.filename, size: f.bytes.byteLength };
  }
  return out;
}
