/**
 * The documents the bot sent, read from the emulator's call log: one entry per document whether it went
 * alone (sendDocument) or in an album (sendMediaGroup), so tests do not depend on how results were grouped.
 */
import type { ApiCall } from "../emulator/index.ts";

/** One document of one call. */
export interface SentDocument {
  readonly method: "sendDocument" | "sendMediaGroup";
  readonly chatId: number | undefined;
  /** True when the bytes were uploaded (a file part), false for a file_id string. */
  readonly upload: boolean;
  /** The uploaded part's file name (uploads only). */
  readonly fileName?: string;
  /** The file_id sent (re-sends only). */
  readonly fileId?: string;
  readonly caption?: string;
  /** The call's status (200, 429, …) and time (epoch ms). */
  readonly status: number;
  readonly at: number;
}

/** Every document of every sendDocument / sendMediaGroup call in `calls`, in order. */
export function sentDocuments(calls: readonly ApiCall[]): SentDocument[] {
  const out: SentDocument[] = [];
  for (const c of calls) {
    const base = { chatId: c.chatId, status: c.status, at: c.at };
    if (c.method === "sendDocument") out.push({ method: "sendDocument", ...base, ...one(c.params.document), ...(typeof c.params.caption === "string" ? { caption: c.params.caption } : {}) });
    if (c.method === "sendMediaGroup" && Array.isArray(c.params.media)) {
      for (const m of c.params.media as Array<{ media: unknown; caption?: string }>) out.push({ method: "sendMediaGroup", ...base, ...one(m.media), ...(m.caption !== undefined ? { caption: m.caption } : {}) });
    }
  }
  return out;
}

function one(media: unknown): { upload: boolean; fileName?: string; fileId?: string } {
  if (typeof media === "string") return { upload: false, fileId: media };
  return { upload: true, fileName: String((media as { file_name?: unknown } | undefined)?.file_name ?? "") };
}
