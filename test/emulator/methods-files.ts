/**
 * File methods: sendDocument, sendPhoto (multipart upload, `attach://<id>`, or a file_id string; local mode
 * also `file:///abs/path`) and getFile (botapi-facts.md §1, §7; TBA `get_input_file`, `process_send_document_query`).
 */
import { fileURLToPath } from "node:url";
import { ApiError, badRequest, E } from "./api-error.ts";
import type { Core, Ctx, Handler } from "./core.ts";
import { formatText } from "./entities.ts";
import { CLOUD_UPLOAD_LIMIT, LOCAL_UPLOAD_LIMIT, type StoredFile } from "./file-store.ts";
import { addBotMessage, readReplyMarkup, readReplyTo } from "./message-parts.ts";
import { mimeFromName } from "./mime.ts";
import type { FilePart } from "./multipart.ts";
import { photoSizes } from "./photo-sizes.ts";
import type { PhotoSizeInfo } from "./types.ts";

/** Photo sizes that belong together, keyed by each size's file_unique_id (to re-send a photo by file_id). */
const photoSets = new WeakMap<Core, Map<string, Array<{ file: StoredFile; width: number; height: number }>>>();

/** Upload limit of the mode (cloud 50 MiB, local 2000 MiB). */
export function uploadLimit(core: Core): number {
  return core.mode === "local" ? LOCAL_UPLOAD_LIMIT : CLOUD_UPLOAD_LIMIT;
}

type Input = { kind: "upload"; part: FilePart } | { kind: "path"; path: string } | { kind: "id"; file: StoredFile };

/**
 * Resolves the `field` argument: absent → a file part named like the field; `attach://<id>` → that part;
 * `file:/…` (local mode) → a file on disk; any other string → a file_id.
 * @returns undefined when there is no file at all (caller answers "there is no <field> in the request").
 * @throws ApiError 400 "wrong file identifier/HTTP URL specified", 400 "file must be non-empty", 413 over the limit.
 */
function readInput(c: Ctx, field: string, kind: "document" | "photo"): Input | undefined {
  const v = c.args.raw[field];
  let part: FilePart | undefined;
  if (v === undefined || v === null || v === "") part = c.files.get(field);
  else if (typeof v === "string" && v.startsWith("attach://")) part = c.files.get(v.slice(9));
  else if (typeof v === "string") {
    if (c.core.mode === "local" && v.startsWith("file:/")) {
      return { kind: "path", path: v.startsWith("file://") ? fileURLToPath(v) : v.slice(5) };
    }
    const file = c.core.files.byId(v.trim());
    if (!file) throw badRequest(E.wrongFileIdentifier);
    if (file.kind !== kind) {
      throw badRequest(`can't use file of type ${file.kind === "photo" ? "Photo" : "Document"} as ${kind === "photo" ? "Photo" : "Document"}`);
    }
    return { kind: "id", file };
  } else throw badRequest(E.wrongFileIdentifier);
  if (!part) return undefined;
  if (part.bytes.byteLength === 0) throw badRequest(E.fileEmpty);
  if (part.bytes.byteLength > uploadLimit(c.core)) throw new ApiError(413, E.entityTooLarge);
  return { kind: "upload", part };
}

/**
 * Reads what every send-media method needs: chat (403 if blocked), the file (400 "there is no <field> in the
 * request" when absent), caption (≤ 1024), reply_markup and reply target.
 */
function mediaRequest(c: Ctx, field: "document" | "photo") {
  const chat = c.core.chatFor(c, true);
  const input = readInput(c, field, field);
  if (!input) throw badRequest(field === "photo" ? E.noPhoto : E.noDocument);
  const ft = formatText(c.args.str("caption"), c.args.str("parse_mode"), c.args.json("caption_entities"), "caption");
  return { chat, input, ft, markup: readReplyMarkup(c), replyTo: readReplyTo(c, chat) };
}

async function sendDocument(c: Ctx): Promise<unknown> {
  const { chat, input, ft, markup, replyTo } = mediaRequest(c, "document");
  c.core.rate(c, "message", chat);
  let file: StoredFile;
  if (input.kind === "id") file = input.file;
  else {
    const fileName = input.kind === "upload" ? input.part.filename || "document" : input.path.split("/").pop()!;
    try {
      file = await c.core.files.register({
        kind: "document",
        ...(input.kind === "upload" ? { bytes: input.part.bytes } : { path: input.path }),
        fileName,
        mimeType: mimeFromName(fileName),
        fromBot: true,
      });
    } catch (e) {
      if (e instanceof ApiError) throw e;
      throw badRequest(E.wrongFileIdentifier);
    }
  }
  const document = {
    ...(file.fileName !== undefined ? { file_name: file.fileName } : {}),
    ...(file.mimeType !== undefined ? { mime_type: file.mimeType } : {}),
    file_id: c.core.files.issueId(file),
    file_unique_id: file.uniqueId,
    file_size: file.knownSize ?? file.realSize,
  };
  return addBotMessage(c, chat, { document, caption: ft.text, caption_entities: ft.entities }, markup, replyTo);
}

/**
 * Re-encodes image bytes into Telegram-like sizes and registers each as a photo file.
 * @throws ApiError 400 "IMAGE_PROCESS_FAILED" when the bytes are not an image.
 */
export async function registerPhoto(
  core: Core,
  src: Uint8Array | string,
  fromBot: boolean,
  sizes?: Array<[number, number]>,
): Promise<PhotoSizeInfo[]> {
  let encoded;
  try {
    encoded = await photoSizes(src, sizes);
  } catch {
    throw badRequest("IMAGE_PROCESS_FAILED");
  }
  const set: Array<{ file: StoredFile; width: number; height: number }> = [];
  for (const e of encoded) {
    set.push({ file: await core.files.register({ kind: "photo", bytes: e.bytes, fromBot }), width: e.width, height: e.height });
  }
  let sets = photoSets.get(core);
  if (!sets) photoSets.set(core, (sets = new Map()));
  for (const s of set) sets.set(s.file.uniqueId, set);
  return photoInfos(core, set);
}

function photoInfos(core: Core, set: Array<{ file: StoredFile; width: number; height: number }>): PhotoSizeInfo[] {
  return set.map((s) => ({
    file_id: core.files.issueId(s.file),
    file_unique_id: s.file.uniqueId,
    file_size: s.file.realSize,
    width: s.width,
    height: s.height,
  }));
}

async function sendPhoto(c: Ctx): Promise<unknown> {
  const { chat, input, ft, markup, replyTo } = mediaRequest(c, "photo");
  if (input.kind === "upload" && input.part.bytes.byteLength > 10 << 20 && c.core.mode === "cloud") {
    throw badRequest("PHOTO_SAVE_FILE_INVALID");
  }
  c.core.rate(c, "message", chat);
  let photo: PhotoSizeInfo[];
  if (input.kind === "id") {
    const set = photoSets.get(c.core)?.get(input.file.uniqueId);
    photo = photoInfos(c.core, set ?? []);
  } else photo = await registerPhoto(c.core, input.kind === "upload" ? input.part.bytes : input.path, true);
  return addBotMessage(c, chat, { photo, caption: ft.text, caption_entities: ft.entities }, markup, replyTo);
}

async function getFile(c: Ctx): Promise<unknown> {
  const id = (c.args.str("file_id") ?? "").trim();
  const delay = c.core.opts.getFileDelayMs ?? 0;
  if (delay > 0 && id !== "" && c.core.files.byId(id)) await Bun.sleep(delay);
  return c.core.files.getFile(id, c.core.now()); // after the delay, like a server answering late
}

/** Handlers by canonical method name. */
export const fileMethods: Record<string, Handler> = { sendDocument, sendPhoto, getFile };
