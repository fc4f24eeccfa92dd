/**
 * File methods: sendDocument, sendPhoto, sendMediaGroup (multipart upload, `attach://<id>`, or a file_id string;
 * local mode also `file:///abs/path`) and getFile (botapi-facts.md §1, §7; TBA `get_input_file`,
 * `process_send_document_query`, `process_send_media_group_query`, `get_input_media`; TDLib
 * `check_message_group_message_contents`).
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
function readInput(c: Ctx, field: string, kind: "document" | "photo", value: unknown = c.args.raw[field]): Input | undefined {
  const v = value;
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

/** The stored document a resolved input names (an upload or a local path is registered now). */
async function documentFile(c: Ctx, input: Input): Promise<StoredFile> {
  if (input.kind === "id") return input.file;
  const fileName = input.kind === "upload" ? input.part.filename || "document" : input.path.split("/").pop()!;
  try {
    return await c.core.files.register({
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

/** The Bot API Document object of a stored file (a fresh file_id each time, like Telegram). */
function documentInfo(c: Ctx, file: StoredFile) {
  return {
    ...(file.fileName !== undefined ? { file_name: file.fileName } : {}),
    ...(file.mimeType !== undefined ? { mime_type: file.mimeType } : {}),
    file_id: c.core.files.issueId(file),
    file_unique_id: file.uniqueId,
    file_size: file.knownSize ?? file.realSize,
  };
}

async function sendDocument(c: Ctx): Promise<unknown> {
  const { chat, input, ft, markup, replyTo } = mediaRequest(c, "document");
  c.core.rate(c, "message", chat);
  const document = documentInfo(c, await documentFile(c, input));
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

/** TDLib MAX_GROUPED_MESSAGES: at most 10 messages in one album. */
const MAX_ALBUM = 10;

/** One parsed InputMedia of an album. */
interface AlbumItem {
  type: "document" | "photo";
  input: Input;
  caption: { text: string; entities: ReturnType<typeof formatText>["entities"] } | null;
  /** "message caption is too long" is TDLib's, raised after every item was parsed. */
  captionTooLong: boolean;
}

/** `Can't parse InputMedia: <detail>` (TBA get_input_message_contents; the first letter is lowered on the wire). */
function badMedia(detail: string): ApiError {
  return badRequest(`can't parse InputMedia: ${detail}`);
}

/**
 * One InputMedia of sendMediaGroup, in TBA's order: caption (parse_mode, caption_entities), `type`, then `media`
 * (attach://<part>, a file_id, or local mode file:/). Types "document" and "photo" are emulated; "animation" is
 * refused like TBA; video, audio and live_photo are real but not emulated (501, never a fake success).
 */
function readAlbumItem(c: Ctx, raw: unknown): AlbumItem {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw badMedia("expected an Object");
  const o = raw as Record<string, unknown>;
  let caption: AlbumItem["caption"] = null;
  let captionTooLong = false;
  try {
    const ft = formatText(o.caption === undefined ? undefined : String(o.caption), o.parse_mode === undefined ? undefined : String(o.parse_mode), o.caption_entities, "caption");
    caption = { text: ft.text, entities: ft.entities };
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    if (e.description === `Bad Request: ${E.captionTooLong}`) captionTooLong = true;
    else throw badMedia(e.description.replace(/^Bad Request: /, ""));
  }
  if (o.type === undefined) throw badMedia('Can\'t find field "type"');
  if (typeof o.type !== "string") throw badMedia('Field "type" must be of type String');
  const type = o.type;
  if (type === "animation") throw badMedia('type "animation" can\'t be used in sendMediaGroup');
  if (type === "video" || type === "audio" || type === "live_photo") throw new ApiError(501, `Not Implemented: the emulator has no InputMedia of type "${type}"`);
  if (type !== "document" && type !== "photo") throw badMedia(`type "${type}" is unsupported`);
  const media = o.media;
  const input = typeof media === "string" && media !== "" ? readInput(c, "", type, media) : undefined;
  if (!input) throw badMedia("media not found");
  return { type, input, caption, captionTooLong };
}

/**
 * sendMediaGroup: an album of 1–10 documents or photos (TBA accepts one item too: it is sent without a
 * media_group_id; the docs say 2–10). Errors like the server: "parameter \"media\" is required", "can't parse media
 * JSON object", "expected an Array of InputMedia", "can't parse InputMedia: …", then chat checks, then TDLib's
 * "there are no messages to send", "message caption is too long", "too many messages to send as an album" and
 * "document can't be mixed with other media types". reply_markup is ignored (TBA does). Draws one rate unit per
 * message of the album. Returns the sent Messages.
 */
async function sendMediaGroup(c: Ctx): Promise<unknown> {
  if (!c.args.has("media") || c.args.raw.media === "") throw badRequest('parameter "media" is required');
  const list = c.args.json("media", "media");
  if (!Array.isArray(list)) throw badRequest("expected an Array of InputMedia");
  const items = list.map((m) => readAlbumItem(c, m));
  const chat = c.core.chatFor(c, true);
  const replyTo = readReplyTo(c, chat);
  if (items.length === 0) throw badRequest("there are no messages to send");
  if (items.some((i) => i.captionTooLong)) throw badRequest(E.captionTooLong);
  if (items.length > MAX_ALBUM) throw badRequest("too many messages to send as an album");
  const types = new Set(items.map((i) => i.type));
  if (types.size > 1 && types.has("document")) throw badRequest("document can't be mixed with other media types");
  c.core.rate(c, "message", chat, items.length);
  const groupId = items.length > 1 ? String(c.core.nextMediaGroupId++) : undefined;
  const sent: unknown[] = [];
  for (const item of items) {
    const content =
      item.type === "document"
        ? { document: documentInfo(c, await documentFile(c, item.input)) }
        : { photo: item.input.kind === "id" ? photoInfos(c.core, photoSets.get(c.core)?.get(item.input.file.uniqueId) ?? []) : await registerPhoto(c.core, item.input.kind === "upload" ? item.input.part.bytes : item.input.path, true) };
    const caption = item.caption ? { caption: item.caption.text, caption_entities: item.caption.entities } : {};
    sent.push(addBotMessage(c, chat, { ...content, ...caption, ...(groupId !== undefined ? { media_group_id: groupId } : {}) }, undefined, replyTo));
  }
  return sent;
}

async function getFile(c: Ctx): Promise<unknown> {
  const id = (c.args.str("file_id") ?? "").trim();
  const delay = c.core.opts.getFileDelayMs ?? 0;
  if (delay > 0 && id !== "" && c.core.files.byId(id)) await Bun.sleep(delay);
  if (id !== "" && c.core.files.byId(id)) await c.core.files.passHold();
  return c.core.files.getFile(id, c.core.now()); // after the delay (or hold), like a server answering late
}

/** Handlers by canonical method name. */
export const fileMethods: Record<string, Handler> = { sendDocument, sendPhoto, sendMediaGroup, getFile };
