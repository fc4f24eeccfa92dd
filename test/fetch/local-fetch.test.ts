/**
 * Local-mode fetcher (field case BR-03; issue 16; issue 11 hostile inputs): the absolute file_path
 * of a local Bot API server is the job's source in place — confined to LOCAL_BOT_API_DIR, a regular
 * file (fstat on an O_NONBLOCK open), its size checked before the first byte, read once while
 * hashed, nothing written; permission, disappearance, special files, changes while read and stalled
 * filesystem calls end with clear reasons. Real files on disk; getFile is a stub here (the emulator
 * runs these cases end to end in test/e2e/local-*.test.ts).
 */
import { appendFileSync, chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, truncateSync, utimesSync, watch, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Api } from "grammy";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { failureOf } from "./failure-of.ts";
import { localFetcher } from "../../bot/fetch/local.ts";
import { asUser, NOBODY, reachablePath, reachableRepoRoot } from "../support/unprivileged";
import { createLogger } from "../../bot/log.ts";
import { holdFsThreads } from "../support/fs-threads.ts";

let dir: string;
let root: string;
let docs: string;
let downloads: string;
let logs: string[];
let log: ReturnType<typeof createLogger>;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "docket-local-"));
  chmodSync(dir, 0o755);
  root = join(dir, "bot-api");
  docs = join(root, "123:TOKEN", "documents");
  mkdirSync(docs, { recursive: true, mode: 0o755 });
  chmodSync(root, 0o755);
  chmodSync(join(root, "123:TOKEN"), 0o755);
  chmodSync(docs, 0o755);
  downloads = join(dir, "downloads");
  mkdirSync(downloads, { mode: 0o777 });
  chmodSync(downloads, 0o777);
  logs = [];
  log = createLogger({ write: (l) => void logs.push(l) });
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

/**
 * The fetcher run on `src` by test/support/local-fetch-probe.ts as "nobody" (the checkout read through a path nobody
 * can reach); its `{ ok, failure, logs }`, or null (with a printed line) when no such path can be made (not root).
 */
function asNobody(src: string, dest: string): { ok: boolean; failure: { reason: string; retryable: boolean }; logs: string[] } | null {
  if (reachableRepoRoot() === null) {
    console.warn("[local-fetch] skipped: the checkout is not reachable by nobody and cannot be bind-mounted (not root)");
    return null;
  }
  const r = Bun.spawnSync([...asUser(NOBODY), "bun", reachablePath("test/support/local-fetch-probe.ts"), root, src, join(downloads, dest)], { cwd: reachableRepoRoot()! });
  return JSON.parse(r.stdout.toString().trim().split("\n").pop()!);
}

const sha = (s: string | Uint8Array) => new Bun.CryptoHasher("sha256").update(s).digest("hex");
const req = (over: Record<string, unknown> = {}) => ({ jobId: 1, fileId: "F", declaredSize: null, destPath: join(downloads, "1-00"), limit: 100, ...over });

describe("BR-03 local server: absolute file_path, read in place", () => {
  test("(a) readable: the server's file itself is the source (resolved path, size, SHA-256), nothing written", async () => {
    const src = join(docs, "file_0.pdf");
    writeFileSync(src, "%PDF-1.4 hello", { mode: 0o640 });
    const seen: string[] = [];
    const w = watch(downloads, (_e, name) => void (name && seen.push(String(name))));
    try {
      const f = await localFetcher(apiAnswering(src), root, log)(req({ declaredSize: 14 }));
      expect(f).toEqual({ path: src, size: 14, sha256: sha("%PDF-1.4 hello") });
    } finally {
      w.close();
    }
    expect(seen).toEqual([]);
    expect(readdirSync(downloads)).toEqual([]);
  });

  test("(a') a symlink that stays inside the dir is followed: the source is the resolved file", async () => {
    const src = join(docs, "file_1.pdf");
    writeFileSync(src, "%PDF-1.4 inside");
    symlinkSync(src, join(docs, "file_1_link.pdf"));
    const f = await localFetcher(apiAnswering(join(docs, "file_1_link.pdf")), root, log)(req());
    expect(f.path).toBe(src);
  });

  test("(b) not readable by the bot's user (0640, other owner): file_not_readable, one line naming the path, its owner and the fix", async () => {
    const src = join(docs, "file_1.pdf");
    writeFileSync(src, "%PDF-1.4 secret", { mode: 0o640 });
    chmodSync(src, 0o640);
    // Run the fetcher as "nobody" (not the owner, not in its group) — what a bot outside the server's group sees.
    const out = asNobody(src, "2-00");
    if (!out) return;
    expect(out.ok).toBe(false);
    expect(out.failure.reason).toBe("file_not_readable");
    expect(out.failure.retryable).toBe(false);
    const lines = out.logs.filter((l: string) => l.includes("cannot read the local Bot API file"));
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!);
    expect(line).toMatchObject({ path: src, code: "EACCES", blocked_at: src, owner_uid: 0, owner_gid: 0, mode: "640", uid: 65534 });
    expect(line.msg).toBe(`cannot read the local Bot API file: EACCES at ${src} (owner 0:0, mode 640); add the bot's user to group 0 (SupplementaryGroups= in docket.service; install.sh sets it up) or grant an ACL, then restart docket (docs/local-mode.md, Permissions)`);
  });

  test("(b') a directory on the way the bot may not enter is named as the block", async () => {
    const src = join(docs, "file_1.pdf");
    writeFileSync(src, "%PDF-1.4 secret", { mode: 0o644 });
    chmodSync(join(root, "123:TOKEN"), 0o750);
    const out = asNobody(src, "2-00");
    if (!out) return;
    expect(out.failure.reason).toBe("file_not_readable");
    const line = JSON.parse(out.logs.find((l: string) => l.includes("cannot read the local Bot API file"))!);
    expect([line.blocked_at, line.mode]).toEqual([join(root, "123:TOKEN"), "750"]);
  });

  test("(c) a path outside the configured root, or a symlink out of it, is never read", async () => {
    const outside = join(dir, "outside.pdf");
    writeFileSync(outside, "%PDF-1.4 x");
    symlinkSync(outside, join(docs, "file_7.pdf"));
    // Not join(): it would normalize the ".." away.
    const traversal = `${root}/123:TOKEN/documents/../../../outside.pdf`;
    // A plain path elsewhere is a configuration fault (the server's --dir is another directory); one that leads out
    // from inside the dir is something in the server's dir that should not be there. Each gets its own line.
    const misconfigured = `file_path resolves outside LOCAL_BOT_API_DIR (${root}): the server's --dir is not LOCAL_BOT_API_DIR as this host sees it; set LOCAL_BOT_API_DIR to the server's --dir, bind-mounted at the same absolute path in its container (DOCKET_BOT_API_DIR in compose.env), then restart docket (docs/local-mode.md)`;
    const ledOut = `file_path resolves outside LOCAL_BOT_API_DIR (${root}) through a symlink, ".." or a file swapped in; refusing to read it. Find out what wrote it into the server's dir and remove it`;
    for (const [p, line] of [[outside, misconfigured], [traversal, ledOut], ["/etc/hostname", misconfigured], [join(docs, "file_7.pdf"), ledOut]] as const) {
      logs.length = 0;
      const f = await failureOf(localFetcher(apiAnswering(p), root, log)(req()));
      expect(f.reason).toBe("file_not_readable");
      const lines = logs.filter((l) => l.includes("file_path resolves outside LOCAL_BOT_API_DIR"));
      expect(lines).toHaveLength(1);
      expect([p, JSON.parse(lines[0]!).msg]).toEqual([p, line]);
    }
    expect(readdirSync(downloads)).toEqual([]);
  });

  test("(d) deleted before the read: one new getFile, then failed when still missing", async () => {
    const gone = join(docs, "file_9.pdf");
    const api = apiAnswering(gone);
    const f = await failureOf(localFetcher(api, root, log)(req()));
    expect(f).toMatchObject({ reason: "file_not_readable", retryable: false, detail: "local file missing after a second getFile" });
    expect(api.calls).toBe(2);
  });

  test("(d') deleted, and the second getFile gives a fresh copy: fetched from the new path", async () => {
    const fresh = join(docs, "file_10.pdf");
    writeFileSync(fresh, "%PDF-1.4 again");
    const api = apiAnswering(join(docs, "file_9.pdf"), fresh);
    const f = await localFetcher(api, root, log)(req());
    expect([f.path, f.size]).toEqual([fresh, 14]);
    expect(api.calls).toBe(2);
  });

  test("a relative file_path means the server is not --local: a clear, final failure", async () => {
    const f = await failureOf(localFetcher(apiAnswering("documents/file_0.pdf"), root, log)(req()));
    expect(f.reason).toBe("download_failed");
    expect(f.retryable).toBe(false);
    expect(f.detail).toContain("--local");
  });

  test("real size over the limit or different from the declared size fails before the first byte is read", async () => {
    const src = join(docs, "file_2.pdf");
    writeFileSync(src, "0123456789");
    const progress: number[] = [];
    const over = await failureOf(localFetcher(apiAnswering(src), root, log)(req({ limit: 5, onProgress: (n: number) => progress.push(n) })));
    expect(over.reason).toBe("too_big");
    const lie = await failureOf(localFetcher(apiAnswering(src), root, log)(req({ declaredSize: 9, onProgress: (n: number) => progress.push(n) })));
    expect(lie.reason).toBe("size_mismatch");
    expect(progress).toEqual([]);
  });

  test("a message without file_size: the real size is still checked against getFile's file_size (M2)", async () => {
    const src = join(docs, "file_3.pdf");
    writeFileSync(src, "0123456789");
    const f = await failureOf(localFetcher(apiSized(9, src), root, log)(req()));
    expect(f).toMatchObject({ reason: "size_mismatch", params: { size_bytes: 10, declared_bytes: 9 } });
  });
});

describe("issue 11: only regular files, nothing blocks", () => {
  const special: Array<[string, (p: string) => Promise<() => void> | (() => void)]> = [
    ["a FIFO", (p) => (Bun.spawnSync(["mkfifo", p]), () => {})],
    ["a character device", (p) => (Bun.spawnSync(["mknod", p, "c", "1", "3"]), () => {})],
    ["a Unix socket", (p) => {
      const s = Bun.listen({ unix: p, socket: { data() {} } });
      return () => s.stop();
    }],
    ["a directory", (p) => (mkdirSync(p), () => {})],
  ];
  for (const [what, make] of special) {
    // mknod needs root; every other case runs as anyone.
    test.skipIf(what === "a character device" && process.getuid?.() !== 0)(`${what} at file_path: file_not_readable at once, final, one operator line`, async () => {
      const p = join(docs, "file_20.pdf");
      const stop = await make(p);
      try {
        expect(existsSync(p)).toBe(true);
        const f = await failureOf(localFetcher(apiSized(1000, p), root, log)(req({ declaredSize: 1000, limit: 10_000 })));
        expect([f.reason, f.retryable]).toEqual(["file_not_readable", false]);
        expect(logs.filter((l) => l.includes("is not a regular file (FIFO, device or socket)"))).toHaveLength(1);
      } finally {
        stop();
      }
    });
  }

  test("a filesystem call past its deadline: retryable download_failed naming the call, and the fetcher returns", async () => {
    const src = join(docs, "file_21.pdf");
    writeFileSync(src, "%PDF-1.4 later");
    const held = await holdFsThreads();
    let f;
    try {
      f = await failureOf(localFetcher(apiAnswering(src), root, log)(req({ idleTimeoutMs: 300 })));
    } finally {
      await held.release();
    }
    expect(held.held).toBeGreaterThan(0);
    expect([f.reason, f.retryable]).toEqual(["download_failed", true]);
    expect(f.detail).toMatch(/^realpath .* did not return within 300 ms$/);
    expect(logs.filter((l) => l.includes("did not return in time"))).toHaveLength(1);
    // Once the pool is free the same file is read.
    expect((await localFetcher(apiAnswering(src), root, log)(req())).size).toBe(14);
  });
});

describe("issue 16: a file that changes while it is read", () => {
  const SIZE = 8 << 20; // 8 chunks: the change lands after the first one
  const body = () => new Uint8Array(SIZE).fill(7);

  test("shrinks: size_mismatch with the size it shrank to", async () => {
    const src = join(docs, "file_30.pdf");
    writeFileSync(src, body());
    let once = false;
    const f = await failureOf(
      localFetcher(apiSized(SIZE, src), root, log)(req({ declaredSize: SIZE, limit: SIZE * 2, onProgress: () => void (once || ((once = true), truncateSync(src, 1 << 20))) })),
    );
    expect(f).toMatchObject({ reason: "size_mismatch", retryable: false, params: { size_bytes: 1 << 20, declared_bytes: SIZE } });
  });

  test("grows: size_mismatch with the size it grew to, reading stops one byte past the size at open", async () => {
    const src = join(docs, "file_31.pdf");
    writeFileSync(src, body());
    let once = false;
    let last = 0;
    const f = await failureOf(
      localFetcher(apiSized(SIZE, src), root, log)(
        req({ declaredSize: SIZE, limit: SIZE * 4, onProgress: (n: number) => ((last = n), once || ((once = true), appendFileSync(src, new Uint8Array(SIZE)))) }),
      ),
    );
    expect(f).toMatchObject({ reason: "size_mismatch", retryable: false, params: { size_bytes: SIZE * 2, declared_bytes: SIZE } });
    expect(last).toBe(SIZE + 1);
  });

  test("rewritten at the same size (mtime moved): retryable download_failed, so the next try calls getFile again", async () => {
    const src = join(docs, "file_32.pdf");
    writeFileSync(src, body());
    let once = false;
    const f = await failureOf(
      localFetcher(apiSized(SIZE, src), root, log)(req({ declaredSize: SIZE, limit: SIZE, onProgress: () => void (once || ((once = true), utimesSync(src, new Date(), new Date(Date.now() + 5000)))) })),
    );
    expect([f.reason, f.retryable]).toEqual(["download_failed", true]);
    expect(f.detail).toContain("changed while it was read");
  });
});
