/**
 * MIME type guess from a file name's extension, standing in for Telegram's own detection of a document's
 * mime_type (Bot API Document.mime_type). Unknown extensions give application/octet-stream.
 */
import { extname } from "node:path";

const BY_EXT: Record<string, string> = {
  ".pdf": "application/pdf",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".png": "image/png",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".bmp": "image/bmp",
  ".tif": "image/tiff",
  ".tiff": "image/tiff",
  ".heic": "image/heic",
  ".txt": "text/plain",
  ".md": "text/markdown",
  ".csv": "text/csv",
  ".html": "text/html",
  ".json": "application/json",
  ".zip": "application/zip",
  ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
};

/** MIME type for a file name (case-insensitive extension); "application/octet-stream" when unknown. */
export function mimeFromName(name: string | undefined): string {
  return (name && BY_EXT[extname(name).toLowerCase()]) || "application/octet-stream";
}
