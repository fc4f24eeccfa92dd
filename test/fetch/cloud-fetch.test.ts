/**
 * Cloud-mode fetcher against the emulator over real HTTP (seed 000 "Ссылка, которая не будет ждать",
 * resume rule for `accepted`; audit 000 M2, M3, T6):
 * - a file gets its final name only after its size matches every size Telegram gave (the message's
 *   `file_size` and getFile's), so a short body never looks finished;
 * - a body that stalls or trickles ends the try as a retryable `download_failed`, bounded by
 *   DOWNLOAD_IDLE_TIMEOUT and the whole-try deadline; the step's own abort is passed through unclassified.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, rmSync, watch, type FSWatcher } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Api } from "grammy";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { cloudFetcher } from "../../bot/fetch/cloud.ts";
import { FetchError } from "../../bot/fetch/errors.ts";
import { failureOf } from "./failure-of.ts";
import type { FetchRequest } from "../../bot/fetch/types.ts";
import type { Emulator } from "../emulator/index.ts";
import { useEmulator } from "../emulator/use-emulator.ts";

let em: Emulator;
let api: Api;
let dir: string;
let watcher: FSWatcher;
/** Every name that appeared in the downloads dir (inotify events), in order. */
let seen: string[];

useEmulator((e, a) => {
  em = e;
  api = a;
});
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "docket-cloud-fetch-"));
  seen = [];
  watcher = watch(dir, (_event, name) => {
    if (name) seen.push(String(name));
  });
});
afterEach(() => {
  watcher.close();
  rmSync(dir, { recursive: true, force: true });
});

const bytes = (n: number, seed = 3) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 255);
const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

/** Sends `data` as a user document (file_size as given: a number bigger than the bytes is a lie) and returns its file_id. */
async function userFile(data: Uint8Array, fileSize?: number | null): Promise<string> {
  const s = await em.user().sendDocument({ bytes: data, file_name: "f.bin", ...(fileSize !== undefined ? { file_size: fileSize } : {}) });
  return s.file_id!;
}

function request(fileId: string, over: Partial<FetchRequest> = {}): FetchRequest {
  return { jobId: 7, fileId, declaredSize: null, destPath: join(dir, "7-00000000000000aa"), limit: 20 << 20, ...over };
}


/** Lets inotify events of the last operation arrive. */
const settle = () => Bun.sleep(50);

/** The cloud fetcher of the emulator's bot on one request. */
const fetchFile = (req: FetchRequest) => cloudFetcher(api, em.apiRoot, em.token)(req);

/** After a failed try: the watcher saw the .part name and never the final one, and the dir is empty. */
async function expectNoFinalName(): Promise<void> {
  await settle();
  expect(seen).toContain("7-00000000000000aa.part"); // the watcher works: the .part came and went
  expect(seen.every((n) => n.endsWith(".part"))).toBe(true);
  expect(readdirSync(dir)).toEqual([]);
}

describe("the final name appears only after the size checks (M2)", () => {
  test("a whole file: written as .part, then renamed; size and SHA-256 of the bytes", async () => {
    const data = bytes(150_000);
    const req = request(await userFile(data), { declaredSize: 150_000 });
    const f = await fetchFile(req);
    expect(f).toEqual({ path: req.destPath, size: 150_000, sha256: sha(data) });
    expect(new Uint8Array(await Bun.file(req.destPath).arrayBuffer())).toEqual(data);
    await settle();
    expect(seen[0]).toBe("7-00000000000000aa.part");
    expect(seen).toContain("7-00000000000000aa");
    expect(readdirSync(dir)).toEqual(["7-00000000000000aa"]);
  });

  test("T6: declared 5000 B, 1000 B real: size_mismatch, and the final name never exists, not even briefly", async () => {
    const req = request(await userFile(bytes(1000), 5000), { declaredSize: 5000 });
    const f = await failureOf(fetchFile(req));
    expect(f).toMatchObject({ reason: "size_mismatch", retryable: false, params: { size_bytes: 1000, declared_bytes: 5000 } });
    await expectNoFinalName();
  });

  test("no file_size in the message: the real size is still checked against getFile's file_size", async () => {
    // getFile announces 5000 B (the emulator's user declared it); the job's message had no size (declaredSize null).
    const req = request(await userFile(bytes(1000), 5000), { declaredSize: null });
    const f = await failureOf(fetchFile(req));
    expect(f).toMatchObject({ reason: "size_mismatch", params: { size_bytes: 1000, declared_bytes: 5000 } });
    await expectNoFinalName();
  });

  test("a body that ends early without an error: size_mismatch, no final name", async () => {
    const req = request(await userFile(bytes(200_000)), { declaredSize: 200_000 });
    em.faultFileDownload({ kind: "end", afterBytes: 70_000 });
    const f = await failureOf(fetchFile(req));
    expect(f).toMatchObject({ reason: "size_mismatch", params: { size_bytes: 70_000, declared_bytes: 200_000 } });
    await expectNoFinalName();
  });

  test("a dropped connection: retryable download_failed, nothing left on disk", async () => {
    const req = request(await userFile(bytes(200_000)), { declaredSize: 200_000 });
    em.faultFileDownload({ kind: "reset", afterBytes: 70_000 });
    const f = await failureOf(fetchFile(req));
    expect(f).toMatchObject({ reason: "download_failed", retryable: true });
    expect(f.detail).not.toContain(em.token);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe("time bounds of a try (M3)", () => {
  test("a body that stalls: download_failed (retryable) after DOWNLOAD_IDLE_TIMEOUT, .part removed", async () => {
    const req = request(await userFile(bytes(100_000)), { declaredSize: 100_000, idleTimeoutMs: 300, deadlineMs: 60_000 });
    em.faultFileDownload({ kind: "stall", afterBytes: 1000 });
    const t0 = Date.now();
    const f = await failureOf(fetchFile(req));
    expect(f).toMatchObject({ reason: "download_failed", retryable: true, detail: "download stalled: no data for 300 ms" });
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(readdirSync(dir)).toEqual([]);
   }, 10_000);

  test("a body that trickles (bytes keep coming, each within the idle timeout): the deadline ends it", async () => {
    const req = request(await userFile(bytes(5000)), { declaredSize: 5000, idleTimeoutMs: 2000, deadlineMs: 500 });
    em.faultFileDownload({ kind: "trickle", chunkBytes: 250, everyMs: 100 }); // 2 s for the whole body
    const t0 = Date.now();
    const f = await failureOf(fetchFile(req));
    expect(f).toMatchObject({ reason: "download_failed", retryable: true, detail: "download took longer than its deadline of 500 ms" });
    expect(Date.now() - t0).toBeLessThan(1900);
    expect(readdirSync(dir)).toEqual([]);
  });

  test("a slow body within both bounds completes", async () => {
    const data = bytes(1000);
    const req = request(await userFile(data), { declaredSize: 1000, idleTimeoutMs: 1000, deadlineMs: 5000 });
    em.faultFileDownload({ kind: "trickle", chunkBytes: 250, everyMs: 100 });
    expect((await fetchFile(req)).sha256).toBe(sha(data));
  });

  test("the step's own abort (lease lost, /cancel) is rethrown as is, not classified; .part removed", async () => {
    const ac = new AbortController();
    const req = request(await userFile(bytes(100_000)), { declaredSize: 100_000, signal: ac.signal, idleTimeoutMs: 10_000, deadlineMs: 60_000 });
    em.faultFileDownload({ kind: "stall", afterBytes: 1000 });
    setTimeout(() => ac.abort(new Error("lease lost")), 200);
    const err = await fetchFile(req).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).not.toBeInstanceOf(FetchError);
    expect(ac.signal.aborted).toBe(true);
    expect(readdirSync(dir)).toEqual([]);
  });
});
