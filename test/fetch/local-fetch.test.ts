/**
 * Local-mode fetcher (field case BR-03): absolute file_path from a local Bot API
 * server, read from disk, confined to LOCAL_BOT_API_DIR, permission and
 * disappearance handled with clear reasons.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, watch, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Api } from "grammy";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { failureOf } from "./failure-of.ts";
import { localFetcher } from "../../bot/fetch/local.ts";
import { asUser, NOBODY, reachablePath, reachableRepoRoot } from "../support/unprivileged";
import { createLogger } from "../../bot/log.ts";

let dir: string;
let root: string;
let docs: string;
const log = createLogger({ write: () => {} });

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "docket-local-"));
  chmodSync(dir, 0o755);
  root = join(dir, "bot-api");
  docs = join(root, "123:TOKEN", "documents");
  mkdirSync(docs, { recursive: true, mode: 0o755 });
  chmodSync(root, 0o755);
  chmodSync(join(root, "123:TOKEN"), 0o755);
  chmodSync(docs, 0o755);
  mkdirSync(join(dir, "downloads"), { mode: 0o777 });
  chmodSync(join(dir, "downloads"), 0o777);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A fake getFile answering the given paths in turn (the last one repeats). */
function apiAnswering(...paths: string[]): Api & { calls: number } {
  return apiSized(undefined, ...paths);
}

/** {@link apiAnswering} whose answers carry `file_size` (a local server always sends it). */
function apiSized(fileSize: number | undefined, ...paths: string[]): Api & { calls: number } {
  const api = {
    calls: 0,
    async getFile() {
      const p = paths[Math.min(api.calls, paths.length - 1)]!;
      api.calls++;
      return { file_id: "F", file_unique_id: "U", file_path: p, ...(fileSize !== undefined ? { file_size: fileSize } : {}) };
    },
  };
  return api as unknown as Api & { calls: number };
}


describe("BR-03 local server: absolute file_path", () => {
  test("(a) readable: linked or copied from disk with size and SHA-256", async () => {
    const src = join(docs, "file_0.pdf");
    writeFileSync(src, "%PDF-1.4 hello", { mode: 0o640 });
    const f = await localFetcher(apiAnswering(src), root, log)({ jobId: 1, fileId: "F", declaredSize: 14, destPath: join(dir, "downloads", "1-00"), limit: 100 });
    expect(f.size).toBe(14);
    expect(f.sha256).toBe(new Bun.CryptoHasher("sha256").update("%PDF-1.4 hello").digest("hex"));
    expect(readFileSync(f.path, "utf8")).toBe("%PDF-1.4 hello");
  });

  test("(b) not readable by the bot's user (0640, other owner): failed file_not_readable, log names path and uid", async () => {
    const src = join(docs, "file_1.pdf");
    writeFileSync(src, "%PDF-1.4 secret", { mode: 0o640 });
    chmodSync(src, 0o640);
    // Run the fetcher as "nobody" (not the owner, not in its group) — what a bot outside gid 101 sees.
    // The checkout is read through a path nobody can reach (a private clone dir is bind-mounted).
    if (reachableRepoRoot() === null) return void console.warn("[local-fetch] skipped (b): the checkout is not reachable by nobody and cannot be bind-mounted (not root)");
    const probe = reachablePath("test/support/local-fetch-probe.ts");
    const r = Bun.spawnSync([...asUser(NOBODY), "bun", probe, root, src, join(dir, "downloads", "2-00")], { cwd: reachableRepoRoot()! });
    const out = JSON.parse(r.stdout.toString().trim().split("\n").pop()!);
    expect(out.ok).toBe(false);
    expect(out.failure.reason).toBe("file_not_readable");
    expect(out.failure.retryable).toBe(false);
    const line = out.logs.find((l: string) => l.includes("cannot read the local Bot API file"));
    expect(line).toContain(src);
    expect(JSON.parse(line).uid).toBe(65534);
  });

  test("(c) a path outside the configured root is never read", async () => {
    const outside = join(dir, "outside.pdf");
    writeFileSync(outside, "%PDF-1.4 x");
    const traversal = join(root, "123:TOKEN", "documents", "..", "..", "..", "outside.pdf");
    for (const p of [outside, traversal, "/etc/hostname"]) {
      const f = await failureOf(localFetcher(apiAnswering(p), root, log)({ jobId: 1, fileId: "F", declaredSize: null, destPath: join(dir, "downloads", "3-00"), limit: 100 }));
      expect(f.reason).toBe("file_not_readable");
    }
    expect(existsSync(join(dir, "downloads", "3-00"))).toBe(false);
  });

  test("(d) deleted before the read: one new getFile, then failed when still missing", async () => {
    const gone = join(docs, "file_9.pdf");
    const api = apiAnswering(gone);
    const f = await failureOf(localFetcher(api, root, log)({ jobId: 1, fileId: "F", declaredSize: null, destPath: join(dir, "downloads", "4-00"), limit: 100 }));
    expect(f.reason).toBe("file_not_readable");
    expect(api.calls).toBe(2);
  });

  test("(d') deleted, and the second getFile gives a fresh copy: fetched", async () => {
    const fresh = join(docs, "file_10.pdf");
    writeFileSync(fresh, "%PDF-1.4 again");
    const api = apiAnswering(join(docs, "file_9.pdf"), fresh);
    const f = await localFetcher(api, root, log)({ jobId: 1, fileId: "F", declaredSize: null, destPath: join(dir, "downloads", "5-00"), limit: 100 });
    expect(f.size).toBe(14);
    expect(api.calls).toBe(2);
  });

  test("a relative file_path means the server is not --local: a clear, final failure", async () => {
    const f = await failureOf(localFetcher(apiAnswering("documents/file_0.pdf"), root, log)({ jobId: 1, fileId: "F", declaredSize: null, destPath: join(dir, "downloads", "6-00"), limit: 100 }));
    expect(f.reason).toBe("download_failed");
    expect(f.retryable).toBe(false);
    expect(f.detail).toContain("--local");
  });

  test("real size over the limit or different from the declared size fails before any copy", async () => {
    const src = join(docs, "file_2.pdf");
    writeFileSync(src, "0123456789");
    const over = await failureOf(localFetcher(apiAnswering(src), root, log)({ jobId: 1, fileId: "F", declaredSize: null, destPath: join(dir, "downloads", "7-00"), limit: 5 }));
    expect(over.reason).toBe("too_big");
    const lie = await failureOf(localFetcher(apiAnswering(src), root, log)({ jobId: 1, fileId: "F", declaredSize: 9, destPath: join(dir, "downloads", "8-00"), limit: 100 }));
    expect(lie.reason).toBe("size_mismatch");
  });

  test("a message without file_size: the real size is still checked against getFile's file_size (M2)", async () => {
    const src = join(docs, "file_3.pdf");
    writeFileSync(src, "0123456789");
    const f = await failureOf(localFetcher(apiSized(9, src), root, log)({ jobId: 1, fileId: "F", declaredSize: null, destPath: join(dir, "downloads", "9-00"), limit: 100 }));
    expect(f).toMatchObject({ reason: "size_mismatch", params: { size_bytes: 10, declared_bytes: 9 } });
    expect(readdirSync(join(dir, "downloads"))).toEqual([]);
  });

  test("the source is linked as <dest>.part, hashed, and only then renamed to its final name (M2)", async () => {
    const src = join(docs, "file_4.pdf");
    writeFileSync(src, "%PDF-1.4 linked");
    const seen: string[] = [];
    const w = watch(join(dir, "downloads"), (_e, name) => void (name && seen.push(String(name))));
    try {
      const f = await localFetcher(apiSized(15, src), root, log)({ jobId: 1, fileId: "F", declaredSize: 15, destPath: join(dir, "downloads", "10-00"), limit: 100 });
      expect(f).toEqual({ path: join(dir, "downloads", "10-00"), size: 15, sha256: new Bun.CryptoHasher("sha256").update("%PDF-1.4 linked").digest("hex") });
      // fs.watch events arrive asynchronously (later on a loaded machine): wait for the rename's event.
      await expect.poll(() => seen).toContain("10-00");
    } finally {
      w.close();
    }
    expect(seen[0]).toBe("10-00.part");
    expect(seen).toContain("10-00");
    expect(readdirSync(join(dir, "downloads"))).toEqual(["10-00"]);
  });

  test("across filesystems (no hard link): copied to .part with the same checks", async () => {
    const shm = mkdtempSync(join("/dev/shm", "docket-local-copy-"));
    try {
      const src = join(docs, "file_5.pdf");
      writeFileSync(src, "%PDF-1.4 copied!");
      const f = await localFetcher(apiSized(16, src), root, log)({ jobId: 1, fileId: "F", declaredSize: 16, destPath: join(shm, "11-00"), limit: 100 });
      expect([f.size, readFileSync(f.path, "utf8")]).toEqual([16, "%PDF-1.4 copied!"]);
      expect(readdirSync(shm)).toEqual(["11-00"]);
    } finally {
      rmSync(shm, { recursive: true, force: true });
    }
  });
});
