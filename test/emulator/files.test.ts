/**
 * Files: grammY multipart uploads, re-send by file_id, getFile + download in cloud mode, link expiry,
 * local mode on disk (botapi-facts.md §1, §7; checklist 6, 7, 12; BR-01, BR-02, BR-03, BR-08).
 */
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Api, InputFile } from "grammy";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FILE_DOWNLOAD, startEmulator, type Emulator } from "./index.ts";
import { apiFailure, rawCall } from "./raw-call.ts";
import { useEmulator } from "./use-emulator.ts";
import { sparseFile } from "../support/files.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "docket-emu-files-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const bytes = (n: number, seed = 1) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);

async function download(em: Emulator, filePath: string): Promise<{ status: number; body: Uint8Array; json?: unknown }> {
  const res = await fetch(`${em.apiRoot}/file/bot${em.token}/${filePath}`);
  const body = new Uint8Array(await res.arrayBuffer());
  return { status: res.status, body, ...(res.status !== 200 ? { json: JSON.parse(new TextDecoder().decode(body)) } : {}) };
}

describe("cloud mode", () => {
  let em: Emulator;
  let api: Api;
  // Links live an hour here; the expiry test below runs its own emulator on a manual clock.
  useEmulator((e, a) => {
    em = e;
    api = a;
  });

  it("takes a grammY multipart upload and keeps the exact bytes; re-sends by file_id without bytes", async () => {
    const u = em.user();
    const data = bytes(300_000);
    const m = await api.sendDocument(u.chatId, new InputFile(data, "scan 1.pdf"), { caption: "<i>done</i>", parse_mode: "HTML" });
    expect(m.document).toMatchObject({ file_name: "scan 1.pdf", mime_type: "application/pdf", file_size: 300_000 });
    expect(m.caption).toBe("done");
    expect(m.caption_entities).toEqual([{ type: "italic", offset: 0, length: 4 }]);
    expect(em.uploaded(m.document!.file_id)).toEqual(data);
    // grammY sent `document=attach://<id>` plus a part `filename=scan 1.pdf` (unquoted): logged as name + size.
    expect(em.calls.at(-1)!.params.document).toEqual({ file_name: "scan 1.pdf", size: 300_000 });
    const again = await api.sendDocument(u.chatId, m.document!.file_id);
    expect(again.document!.file_unique_id).toBe(m.document!.file_unique_id);
    expect(again.document!.file_id).not.toBe(m.document!.file_id);
    expect(em.uploaded(again.document!.file_id)).toEqual(data);
    expect(u.messages().map((x) => x.document?.file_name)).toEqual(["scan 1.pdf", "scan 1.pdf"]);
  });

  it("names a grammY upload without a filename like grammY does (document.dat)", async () => {
    const u = em.user();
    const m = await api.sendDocument(u.chatId, new InputFile(bytes(10)));
    expect(m.document).toMatchObject({ file_name: "document.dat", mime_type: "application/octet-stream", file_size: 10 });
  });

  it("answers the sendDocument errors exactly", async () => {
    const u = em.user();
    expect((await rawCall(em, "sendDocument", { chat_id: u.chatId })).body).toEqual({
      ok: false,
      error_code: 400,
      description: "Bad Request: there is no document in the request",
    });
    expect(await apiFailure(api.sendDocument(u.chatId, "BQACAgIAAxkBAAIbogus"))).toEqual({
      code: 400,
      description: "Bad Request: wrong file identifier/HTTP URL specified",
    });
    expect(await apiFailure(api.sendDocument(u.chatId, new InputFile(new Uint8Array(0), "e.pdf")))).toEqual({
      code: 400,
      description: "Bad Request: file must be non-empty",
    });
    expect(await apiFailure(api.sendDocument(u.chatId, new InputFile(bytes(10), "x.pdf"), { caption: "c".repeat(1025) }))).toEqual({
      code: 400,
      description: "Bad Request: message caption is too long",
    });
  });

  it("parses a standard multipart body (quoted filename, spaced headers) and refuses more than 50 file parts", async () => {
    const u = em.user();
    const form = new FormData();
    form.set("chat_id", String(u.chatId));
    form.set("document", new Blob([bytes(77)]), "quoted name.pdf");
    const res = await fetch(`${em.apiRoot}/bot${em.token}/sendDocument`, { method: "POST", body: form });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { result: { document: { file_name: string; file_size: number } } };
    expect(body.result.document).toMatchObject({ file_name: "quoted name.pdf", file_size: 77 });
    const many = new FormData();
    many.set("chat_id", String(u.chatId));
    for (let i = 0; i < 51; i++) many.set(`f${i}`, new Blob([bytes(3)]), `f${i}.bin`);
    many.set("document", "attach://f0");
    const tooMany = await fetch(`${em.apiRoot}/bot${em.token}/sendDocument`, { method: "POST", body: many });
    expect(tooMany.status).toBe(413);
    expect(await tooMany.json()).toEqual({ ok: false, error_code: 413, description: "Request Entity Too Large: too much files attached" });
  });

  it("refuses an upload over 50 MB with 413 Request Entity Too Large", async () => {
    const u = em.user();
    const f = await apiFailure(api.sendDocument(u.chatId, new InputFile(new Uint8Array((50 << 20) + 1), "big.pdf")));
    expect(f).toEqual({ code: 413, description: "Request Entity Too Large" });
    expect(u.messages()).toEqual([]);
  });

  it("gives user documents content-derived file_unique_ids and fresh file_ids, fields exactly as given (BR-08)", async () => {
    const u = em.user();
    const a = await u.sendDocument({ bytes: bytes(100, 7), file_name: null, mime_type: null });
    const b = await u.sendDocument({ bytes: bytes(100, 7), file_name: "scan", mime_type: "application/octet-stream" });
    expect(a.file_unique_id).toBe(b.file_unique_id);
    expect(a.file_id).not.toBe(b.file_id);
    const ups = await api.getUpdates({ offset: a.update_id, timeout: 0 });
    expect(ups[0]!.message!.document).toEqual({ file_id: a.file_id, file_unique_id: a.file_unique_id, file_size: 100 });
    expect(ups[1]!.message!.document).toEqual({
      file_name: "scan",
      mime_type: "application/octet-stream",
      file_id: b.file_id,
      file_unique_id: b.file_unique_id,
      file_size: 100,
    });
    const c = await u.sendDocument({ bytes: bytes(10, 9), file_size: null });
    const [upC] = await api.getUpdates({ offset: c.update_id, timeout: 0 });
    expect(upC!.message!.document!.file_size).toBeUndefined();
  });

  it("serves getFile with a relative path, then the bytes at /file/bot<token>/<path>", async () => {
    const u = em.user();
    const data = bytes(5000, 3);
    const s = await u.sendDocument({ bytes: data, file_name: "base.pdf" });
    const f = await api.getFile(s.file_id!);
    expect(f).toEqual({ file_id: s.file_id, file_unique_id: s.file_unique_id, file_size: 5000, file_path: expect.stringMatching(/^documents\/file_\d+\.pdf$/) });
    const d = await download(em, f.file_path!);
    expect(d.status).toBe(200);
    expect(d.body).toEqual(data);
    expect((await download(em, "documents/file_999.pdf")).json).toEqual({ ok: false, error_code: 404, description: "Not Found" });
  });

  it("expires links after fileLinkTtlMs, by expireFileLinks(), and fails downloads on demand (BR-02)", async () => {
    // A manual clock: a slow request on a loaded machine cannot age a link past its TTL by accident.
    let t = Date.UTC(2026, 0, 1);
    const em = await startEmulator({ rateLimits: false, fileLinkTtlMs: 300, now: () => t });
    try {
      const api = new Api(em.token, { apiRoot: em.apiRoot });
      const u = em.user();
      const s = await u.sendDocument({ bytes: bytes(64, 4), file_name: "a.pdf" });
      const f1 = await api.getFile(s.file_id!);
      t += 299;
      expect((await api.getFile(s.file_id!)).file_path).toBe(f1.file_path);
      em.failFileDownload(1);
      expect((await download(em, f1.file_path!)).json).toEqual({ ok: false, error_code: 404, description: "Not Found" });
      expect((await download(em, f1.file_path!)).status).toBe(200); // still live at 299 ms
      t += 51;
      expect((await download(em, f1.file_path!)).status).toBe(404); // 350 ms after its getFile
      const f2 = await api.getFile(s.file_id!);
      expect(f2.file_path).not.toBe(f1.file_path);
      expect((await download(em, f2.file_path!)).status).toBe(200);
      em.expireFileLinks();
      expect((await download(em, f2.file_path!)).status).toBe(404);
      const f3 = await api.getFile(s.file_id!);
      expect((await download(em, f3.file_path!)).body).toEqual(bytes(64, 4));
    } finally {
      await em.close();
    }
  });

  it("records every download in calls as method /file with the file_path and never the token (E3)", async () => {
    const u = em.user();
    const s = await u.sendDocument({ bytes: bytes(700, 6), file_name: "rec.pdf" });
    const f = await api.getFile(s.file_id!);
    const before = em.calls.length;
    expect((await download(em, f.file_path!)).status).toBe(200);
    expect((await download(em, "documents/nope.pdf")).status).toBe(404);
    const wrong = await fetch(`${em.apiRoot}/file/bot1:wrong-token-aaaaaaaaaaaaaaaaaa/${f.file_path}`);
    expect(wrong.status).toBe(404);
    await wrong.arrayBuffer();
    const recorded = em.calls.slice(before);
    expect(recorded.map((c) => [c.method, c.params.file_path, c.status, c.ok])).toEqual([
      [FILE_DOWNLOAD, f.file_path, 200, true],
      [FILE_DOWNLOAD, "documents/nope.pdf", 404, false],
      [FILE_DOWNLOAD, f.file_path, 404, false],
    ]);
    expect(em.count("/file")).toBeGreaterThanOrEqual(3);
    expect(JSON.stringify(em.calls)).not.toContain(em.token);
  });

  it("refuses getFile over 20 MiB from the declared size or the real size (BR-01)", async () => {
    const u = em.user();
    const declared = await u.sendDocument({ bytes: bytes(1000), file_name: "big.pdf", file_size: 26214400 });
    expect(await apiFailure(api.getFile(declared.file_id!))).toEqual({ code: 400, description: "Bad Request: file is too big" });
    const sparse = sparseFile(dir, 25 << 20, "big.pdf");
    const real = await u.sendDocument({ path: sparse, file_size: null });
    expect(await apiFailure(api.getFile(real.file_id!))).toEqual({ code: 400, description: "Bad Request: file is too big" });
    const edge = await u.sendDocument({ path: sparseFile(dir, 20 << 20, "edge.pdf") });
    expect((await api.getFile(edge.file_id!)).file_size).toBe(20 << 20);
  });

  it("answers invalid file_id and file_id not specified", async () => {
    expect(await apiFailure(api.getFile("AgADnope"))).toEqual({ code: 400, description: "Bad Request: invalid file_id" });
    expect((await rawCall(em, "getFile", { file_id: "" })).body.description).toBe("Bad Request: file_id not specified");
  });

  it("sends photos as JPEG re-encodes, smallest first; only the largest is needed (BR-08 c)", async () => {
    const u = em.user();
    const png = await sharp({ create: { width: 1600, height: 1200, channels: 3, background: "#3a6" } }).png().toBuffer();
    const s = await u.sendPhoto({ bytes: new Uint8Array(png), sizes: [[90, 67], [320, 240], [1280, 960]] });
    const [up] = await api.getUpdates({ offset: s.update_id, timeout: 0 });
    const photo = up!.message!.photo!;
    expect(photo.map((p) => [p.width, p.height])).toEqual([[90, 67], [320, 240], [1280, 960]]);
    expect(photo.at(-1)!.file_id).toBe(s.file_id);
    const f = await api.getFile(s.file_id!);
    expect(f.file_path).toMatch(/^photos\/file_\d+\.jpg$/);
    const meta = await sharp((await download(em, f.file_path!)).body).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(["jpeg", 1280, 960]);
    // Default sizes: Telegram-like boxes below the real size, plus the real size.
    const d = await u.sendPhoto({ bytes: new Uint8Array(png) });
    const [upD] = await api.getUpdates({ offset: d.update_id, timeout: 0 });
    expect(upD!.message!.photo!.map((p) => p.width)).toEqual([90, 320, 800, 1280, 1600]);
  });

  it("accepts a bot photo upload and re-send by file_id", async () => {
    const u = em.user();
    const jpg = await sharp({ create: { width: 400, height: 300, channels: 3, background: "#c33" } }).jpeg().toBuffer();
    const m = await api.sendPhoto(u.chatId, new InputFile(new Uint8Array(jpg)));
    expect(m.photo!.at(-1)).toMatchObject({ width: 400, height: 300 });
    const again = await api.sendPhoto(u.chatId, m.photo!.at(-1)!.file_id);
    expect(again.photo!.map((p) => p.file_unique_id)).toEqual(m.photo!.map((p) => p.file_unique_id));
    expect(await apiFailure(api.sendPhoto(u.chatId, new InputFile(bytes(50), "x.jpg")))).toEqual({
      code: 400,
      description: "Bad Request: IMAGE_PROCESS_FAILED",
    });
  });
});

describe("injected download faults (E4; test options only)", () => {
  let em: Emulator;
  let api: Api;
  useEmulator((e, a) => {
    em = e;
    api = a;
  });
  const big = bytes(300_000, 11);
  async function linkFor(): Promise<string> {
    const u = em.user();
    const s = await u.sendDocument({ bytes: big, file_name: "fault.bin" });
    return (await api.getFile(s.file_id!)).file_path!;
  }
  /** Reads the body; returns bytes read and how it ended, or "pending" if nothing happened for `quietMs`. */
  async function readBody(path: string, quietMs = 400): Promise<{ n: number; end: "clean" | "error" | "pending" }> {
    const ac = new AbortController();
    const res = await fetch(`${em.apiRoot}/file/bot${em.token}/${path}`, { signal: ac.signal });
    expect(res.status).toBe(200);
    let n = 0;
    let timer = setTimeout(() => ac.abort(), quietMs);
    try {
      for await (const c of res.body as unknown as AsyncIterable<Uint8Array>) {
        n += c.byteLength;
        clearTimeout(timer);
        timer = setTimeout(() => ac.abort(), quietMs);
      }
      return { n, end: "clean" };
    } catch {
      return { n, end: ac.signal.aborted ? "pending" : "error" };
    } finally {
      clearTimeout(timer);
    }
  }

  it("serves the whole body when no fault is queued", async () => {
    expect(await readBody(await linkFor())).toEqual({ n: big.byteLength, end: "clean" });
  });
  it("stall: sends afterBytes, then keeps the connection open without data", async () => {
    const path = await linkFor();
    em.faultFileDownload({ kind: "stall", afterBytes: 1000 });
    expect(await readBody(path)).toEqual({ n: 1000, end: "pending" });
    expect(em.calls.at(-1)!.params.fault).toBe("stall");
    expect(await readBody(path)).toEqual({ n: big.byteLength, end: "clean" }); // used once
  });
  it("reset: drops the connection after afterBytes (a network error, not a clean end)", async () => {
    const path = await linkFor();
    em.faultFileDownload({ kind: "reset", afterBytes: 70_000 }, 2);
    expect(await readBody(path)).toEqual({ n: 70_000, end: "error" });
    expect(await readBody(path)).toEqual({ n: 70_000, end: "error" });
    expect(await readBody(path)).toEqual({ n: big.byteLength, end: "clean" });
  });
  it("end: a short body that ends cleanly", async () => {
    const path = await linkFor();
    em.faultFileDownload({ kind: "end", afterBytes: 1234 });
    expect(await readBody(path)).toEqual({ n: 1234, end: "clean" });
  });
  it("trickle: the whole body, chunkBytes every everyMs", async () => {
    const u = em.user();
    const s = await u.sendDocument({ bytes: bytes(500, 12), file_name: "slow.bin" });
    const path = (await api.getFile(s.file_id!)).file_path!;
    em.faultFileDownload({ kind: "trickle", chunkBytes: 100, everyMs: 60 });
    const t0 = Date.now();
    expect(await readBody(path)).toEqual({ n: 500, end: "clean" });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(4 * 60 - 10);
  });
});

describe("local mode", () => {
  let em: Emulator;
  let api: Api;
  let root: string;
  useEmulator(
    (e, a) => {
      em = e;
      api = a;
    },
    () => ({ mode: "local", localDir: (root = join(dir, "tba")), rateLimits: false, getFileDelayMs: 150 }),
  );

  it("answers getFile with an absolute path under <dir>/<token>/documents, file 0640 in 0750 dirs (BR-03)", async () => {
    const u = em.user();
    const data = bytes(4096, 5);
    const s = await u.sendDocument({ bytes: data, file_name: "base.pdf" });
    const t0 = Date.now();
    const f = await api.getFile(s.file_id!);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    expect(f.file_path).toMatch(new RegExp(`^${root}/${em.token}/documents/file_\\d+\\.pdf$`));
    expect(new Uint8Array(await Bun.file(f.file_path!).arrayBuffer())).toEqual(data);
    expect((await stat(f.file_path!)).mode & 0o777).toBe(0o640);
    expect((await stat(join(root, em.token, "documents"))).mode & 0o777).toBe(0o750);
    expect((await stat(join(root, em.token))).mode & 0o777).toBe(0o750);
    // The same file keeps its path while it exists; once deleted, getFile writes it again under a new name.
    expect((await api.getFile(s.file_id!)).file_path).toBe(f.file_path);
    await rm(f.file_path!);
    const f2 = await api.getFile(s.file_id!);
    expect(f2.file_path).not.toBe(f.file_path);
    expect((await stat(f2.file_path!)).size).toBe(4096);
  });

  it("has no 20 MiB getFile limit and never serves /file/", async () => {
    const u = em.user();
    const s = await u.sendDocument({ path: sparseFile(dir, 25 << 20, "local-big.pdf") });
    const f = await api.getFile(s.file_id!);
    expect(f.file_size).toBe(25 << 20);
    expect((await stat(f.file_path!)).size).toBe(25 << 20);
    const res = await fetch(`${em.apiRoot}/file/bot${em.token}/${f.file_path}`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ ok: false, error_code: 404, description: "Not Found" });
    // The request is recorded (BR-03: "no URL /file/bot<token>//var/… is ever requested" can be asserted), token redacted.
    const last = em.calls.at(-1)!;
    expect([last.method, last.status]).toEqual([FILE_DOWNLOAD, 404]);
    expect(last.params.file_path).toBe(f.file_path!.split(em.token).join("<token>"));
    expect(JSON.stringify(em.calls)).not.toContain(em.token);
  });

  it("accepts a file:// upload in local mode", async () => {
    const u = em.user();
    const p = join(dir, "report.pdf");
    await writeFile(p, bytes(2000, 8));
    const m = await api.sendDocument(u.chatId, `file://${p}`);
    expect(m.document).toMatchObject({ file_name: "report.pdf", file_size: 2000 });
    expect(em.uploaded(m.document!.file_id)).toBeUndefined(); // not held in memory: it was read from disk
  });
});
