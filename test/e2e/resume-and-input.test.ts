/**
 * Resume rules by state (seed 000) on a real database and data dir, and
 * BR-08 inputs (no file_name / mime_type, octet-stream named "scan", photo sizes).
 */
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { afterEach, describe, expect, test } from "vitest";
import { generatedName, jobIdOf } from "../../bot/worker/paths.ts";
import { makePdf } from "../../scripts/samples/index.ts";
import { copyRunner } from "../support/copy-runner.ts";
import { startStack, type Stack } from "../support/stack.ts";

let stack: Stack | null = null;
afterEach(async () => {
  await stack?.stop();
  stack = null;
});


describe("BR-08 document without file_name or mime_type; photo vs document", () => {
  test("(a) no file_name, no mime_type, PDF bytes: type from content, generated display name, ready", async () => {
    stack = await startStack();
    const u = stack.em.user({ language_code: "en" });
    const sent = await u.sendDocument({ bytes: await makePdf({ pages: [["Hello page 1"], ["Hello page 2"], ["Hello page 3"]] }), file_name: null, mime_type: null });
    const job = await stack.waitJob((await stack.jobFor(u.chatId, sent.message_id)).id);
    expect([job.status, job.declaredName, job.declaredMime]).toEqual(["ready", null, null]);
    expect(JSON.parse(job.facts!).pages).toBe(3);
    // The "Got …" announce goes out in the background and may lag the `ready` row; "Done" edits that
    // message, so once "Done" shows, the announce was sent.
    await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${job.id}`)));
    expect(u.transcript().join("\n")).toContain(`Got “file-${job.id}”`);
  });
  test("(b) application/octet-stream named 'scan' with JPEG bytes: JPEG 800×600, ready", async () => {
    stack = await startStack();
    const u = stack.em.user({ language_code: "en" });
    const jpeg = await sharp({ create: { width: 800, height: 600, channels: 3, background: "#336699" } }).jpeg().toBuffer();
    const sent = await u.sendDocument({ bytes: jpeg, file_name: "scan", mime_type: "application/octet-stream" });
    const job = await stack.waitJob((await stack.jobFor(u.chatId, sent.message_id)).id);
    expect(job.status).toBe("ready");
    expect(JSON.parse(job.facts!)).toMatchObject({ type: "image/jpeg", width: 800, height: 600 });
  });
  test("(c) a photo with sizes 90×67, 320×240, 1280×960: only the largest is downloaded", async () => {
    stack = await startStack();
    const u = stack.em.user({ language_code: "en" });
    const big = await sharp({ create: { width: 1280, height: 960, channels: 3, background: "#aa3300" } }).jpeg().toBuffer();
    const sent = await u.sendPhoto({ bytes: big, sizes: [[90, 67], [320, 240], [1280, 960]] });
    const job = await stack.waitJob((await stack.jobFor(u.chatId, sent.message_id)).id);
    expect(job.status).toBe("ready");
    const getFiles = stack.em.calls.filter((c) => c.method === "getFile");
    expect(getFiles).toHaveLength(1);
    expect(getFiles[0]!.params.file_id).toBe(sent.file_id);
    expect(JSON.parse(job.facts!)).toMatchObject({ width: 1280, height: 960 });
    const done = (await u.waitFor((m) => m.some((x) => x.text?.startsWith("Done")))).find((x) => x.text?.startsWith("Done"))!;
    expect(done.text).toContain("JPEG image 1280×960");
    expect(done.text).toContain("Sent as a photo, so Telegram compressed it");
  });
});

describe("budget release order (seed 000: the budget is freed once the temp files are gone)", () => {
  test("at ready: the reservation is released only after downloads/ and work/ hold nothing of the job", async () => {
    stack = await startStack({ runner: copyRunner() });
    const { store } = stack.app.services;
    const { downloads, work } = stack.app.paths;
    const seen: Array<{ id: number; reserved: number; leftovers: string[]; by: string }> = [];
    const note = async (ids: readonly number[], by: string) => {
      for (const id of ids) {
        const leftovers = [...readdirSync(downloads), ...readdirSync(work)].filter((n) => jobIdOf(n) === id);
        seen.push({ id, reserved: (await store.get(id))!.reservedBytes, leftovers, by });
      }
    };
    // A release goes alone, or rides on the process's next claim or hand-over (bot/worker/releases.ts).
    const release = store.releaseReservation.bind(store);
    store.releaseReservation = async (id: number) => (await note([id], "alone"), release(id));
    const claim = store.claimDownload.bind(store);
    store.claimDownload = async (owner, now, ttl, budget, ids = []) => (await note(ids, "claimDownload"), claim(owner, now, ttl, budget, ids));
    const handOver = store.handOver.bind(store);
    store.handOver = async (id, owner, now, ttl, source, ids = []) => (await note(ids, "handOver"), handOver(id, owner, now, ttl, source, ids));
    const u = stack.em.user();
    const sent = await u.sendDocument({ bytes: new Uint8Array(4000).fill(6), file_name: "b.bin" });
    const job = await stack.waitJob((await stack.jobFor(u.chatId, sent.message_id)).id);
    expect(job.status).toBe("ready");
    await expect.poll(async () => (await store.get(job.id))!.reservedBytes).toBe(0);
    const mine = seen.filter((x) => x.id === job.id);
    expect(mine.length).toBeGreaterThan(0);
    expect(mine[0]!.reserved).toBeGreaterThan(0); // still reserved when ready was committed
    expect(mine[0]!.leftovers).toEqual([]); // and released only with the files gone
    // Released once: carried by the download loop's next claim, or alone a tick later.
    expect(mine).toHaveLength(1);
    expect(["claimDownload", "alone"]).toContain(mine[0]!.by);
  });
});

describe("resume by state (seed 000)", () => {
  test("a job whose every try died before finishing (crash loop) ends failed/attempts_exhausted, not claimed forever", async () => {
    stack = await startStack({ runner: copyRunner(), noPolling: true });
    const u = stack.em.user({ language_code: "en" });
    const sent = await u.sendDocument({ bytes: new Uint8Array(300).fill(1), file_name: "loop.bin" });
    const { store } = stack.app.services;
    const t0 = Date.now() - 60_000;
    // No timer runs between these calls (bun:sqlite is synchronous), so the engine cannot claim in between.
    const { job } = await store.accept({ updateId: sent.update_id, chatId: u.chatId, userId: u.id, messageId: sent.message_id, source: "document", fileId: sent.file_id!, fileUniqueId: sent.file_unique_id!, declaredName: "loop.bin", declaredMime: null, declaredSize: 300, languageCode: "en" }, t0);
    const budget = { total: 1 << 30, multiplier: 1, modeLimit: 1 << 20 };
    // Three tries start (MAX_ATTEMPTS=3) and each dies with its lease: SIGKILL, OOM, a crash.
    for (let i = 0; i < 3; i++) expect((await store.claimDownload(`dead-${i}`, t0 + i * 10_000, 1000, budget))?.attempts).toBe(i + 1);
    stack.app.engine.wake();
    const done = await stack.waitJob(job.id);
    expect([done.status, done.reason]).toEqual(["failed", "attempts_exhausted"]);
    expect(stack.em.count("getFile")).toBe(0); // the fourth claim did not start a fourth try
    const msgs = await u.waitFor((m) => m.some((x) => x.text?.includes("could not be processed after several attempts")));
    expect(msgs.some((x) => x.text?.startsWith(`Job #${job.id}`) || x.text?.includes(`#${job.id}`))).toBe(true);
    expect(stack.logs.some((l) => l.includes("3 tries started in accepted and none finished"))).toBe(true);
  });

  test("processing with a dead lease: old intermediates discarded, redone from the source, ready", async () => {
    const runner = copyRunner();
    stack = await startStack({ runner, noPolling: true, env: { LEASE_TTL: "1s" } });
    const { store } = stack.app.services;
    const paths = stack.app.paths;
    const now = Date.now();
    const u = stack.em.user({ language_code: "en" });
    // A job a dead worker left in `processing`: source on disk, a half-written work dir, lease expired.
    const { job } = await store.accept({ updateId: 1, chatId: u.chatId, userId: u.id, messageId: 1, source: "document", fileId: "dead", fileUniqueId: "U-dead", declaredName: "x.bin", declaredMime: null, declaredSize: 4, languageCode: "en" }, now);
    await store.claimDownload("dead-worker", now - 5000, 1000, { total: 1 << 30, multiplier: 1, modeLimit: 1 << 20 });
    const src = join(paths.downloads, generatedName(job.id));
    writeFileSync(src, "data");
    const sha = new Bun.CryptoHasher("sha256").update("data").digest("hex");
    await store.transition(job.id, "accepted", "fetched", "dead-worker", now - 5000, { localPath: src, sha256: sha, realSize: 4, keepLease: true });
    await store.transition(job.id, "fetched", "processing", "dead-worker", now - 5000, { keepLease: true });
    const stale = join(paths.work, generatedName(job.id));
    mkdirSync(stale);
    writeFileSync(join(stale, "half.out"), "partial");
    stack.app.engine.wake();
    const done = await stack.waitJob(job.id);
    expect([done.status, done.lastError]).toEqual(["ready", null]);
    expect(runner.calls).toBe(1);
    // Files go right after the `ready` commit (seed 000 order), so they may lag the row by a tick.
    await expect.poll(() => readdirSync(paths.work)).toEqual([]); // stale intermediates gone, and this try's too
    await expect.poll(() => readdirSync(paths.downloads)).toEqual([]); // source deleted after ready
  });

  test("fetched whose source changed on disk: the SHA-256 mismatch is caught, the file is downloaded again from the file_id, only the good bytes are processed", async () => {
    const runner = copyRunner();
    stack = await startStack({ runner, noPolling: true });
    const u = stack.em.user();
    const good = new Uint8Array(3000).fill(6);
    const sent = await u.sendDocument({ bytes: good, file_name: "x.bin" });
    const { store } = stack.app.services;
    const now = Date.now();
    const { job } = await store.accept({ updateId: sent.update_id, chatId: u.chatId, userId: u.id, messageId: sent.message_id, source: "document", fileId: sent.file_id!, fileUniqueId: sent.file_unique_id!, declaredName: "x.bin", declaredMime: null, declaredSize: 3000, languageCode: "en" }, now);
    await store.claimDownload("w0", now - 5000, 1000, { total: 1 << 30, multiplier: 1, modeLimit: 1 << 20 });
    const src = join(stack.app.paths.downloads, generatedName(job.id));
    writeFileSync(src, new Uint8Array(3000).fill(7)); // same size, other bytes
    const goodSha = createHash("sha256").update(good).digest("hex");
    await store.transition(job.id, "accepted", "fetched", "w0", now - 5000, { localPath: src, sha256: goodSha, realSize: 3000 });
    stack.app.engine.wake();
    const done = await stack.waitJob(job.id);
    expect(done.status).toBe("ready");
    expect([done.sha256, runner.calls]).toEqual([goodSha, 1]);
    expect(done.localPath).not.toBe(src);
    expect(JSON.parse(done.facts!).sha256).toBe(goodSha); // the copy runner processed the fresh, good bytes
    expect(stack.logs.some((l) => l.includes("SHA-256 differs from the recorded one"))).toBe(true);
  });

  test("accepted with a leftover .part: deleted, new getFile, downloaded again", async () => {
    stack = await startStack({ runner: copyRunner(), noPolling: true });
    const u = stack.em.user();
    const sent = await u.sendDocument({ bytes: new Uint8Array(3000).fill(5), file_name: "p.bin" });
    const { store } = stack.app.services;
    const now = Date.now();
    const { job } = await store.accept({ updateId: sent.update_id, chatId: u.chatId, userId: u.id, messageId: sent.message_id, source: "document", fileId: sent.file_id!, fileUniqueId: sent.file_unique_id!, declaredName: "p.bin", declaredMime: null, declaredSize: 3000, languageCode: "en" }, now);
    await store.claimDownload("dead", now - 10_000, 1000, { total: 1 << 30, multiplier: 1, modeLimit: 1 << 20 });
    const part = join(stack.app.paths.downloads, `${generatedName(job.id)}.part`);
    writeFileSync(part, "half");
    stack.app.engine.wake();
    const done = await stack.waitJob(job.id);
    expect(done.status).toBe("ready");
    expect(done.realSize).toBe(3000);
    expect(stack.em.count("getFile")).toBe(1);
    const { downloads } = stack.app.paths;
    await expect.poll(() => readdirSync(downloads)).toEqual([]);
  });
});

describe("waiting jobs and fairness", () => {
  test("a job waiting for the byte budget stays accepted and is told its queue position", async () => {
    const hold: { release?: () => void } = {};
    const gate = new Promise<void>((r) => (hold.release = r));
    const base = copyRunner();
    // Processing of the first job waits, so its budget stays reserved and the next job must wait.
    const runner = (async (i: string, o: Parameters<typeof base>[1], l: Parameters<typeof base>[2]) => {
      await gate;
      return base(i, o, l);
    }) as typeof base;
    stack = await startStack({ runner, env: { DOWNLOAD_BUDGET: "10000", BUDGET_MULTIPLIER: "2", BUDGET_MIN_RESERVATION: "0" } });
    const u = stack.em.user({ language_code: "en" });
    const a = await u.sendDocument({ bytes: new Uint8Array(4000).fill(1), file_name: "a.bin" }); // reserves 8000
    const b = await u.sendDocument({ bytes: new Uint8Array(4000).fill(2), file_name: "b.bin" }); // 16000 > 10000: waits
    const jobA = (await stack.jobFor(u.chatId, a.message_id)).id;
    const jobB = (await stack.jobFor(u.chatId, b.message_id)).id;
    // A is held in processing with its reservation; only then is B's wait meaningful.
    await stack.waitJob(jobA, ["processing"]);
    expect(await stack.app.services.store.budgetInUse()).toBe(8000);
    await Bun.sleep(500); // the download pool had its chances (A's end of download woke it): B still waits
    expect((await stack.app.services.store.get(jobB))?.status).toBe("accepted");
    expect(await stack.app.services.store.budgetInUse()).toBe(8000);
    await stack.app.positions.refresh();
    await u.waitFor((m) => m.some((x) => x.text === `Job #${jobB}: queued for download, position 1.`), 10_000);
    hold.release!();
    expect((await stack.waitJob(jobB)).status).toBe("ready");
  });

  test("per-user bytes per day: over the limit is answered clearly and creates no job", async () => {
    stack = await startStack({ runner: copyRunner(), env: { USER_MAX_BYTES_PER_DAY: "5000" } });
    const u = stack.em.user({ language_code: "en" });
    const first = await u.sendDocument({ bytes: new Uint8Array(6000).fill(1), file_name: "big.bin" });
    await stack.waitJob((await stack.jobFor(u.chatId, first.message_id)).id);
    await u.sendDocument({ bytes: new Uint8Array(100).fill(2), file_name: "small.bin" });
    await u.waitFor((m) => m.some((x) => x.text === "In the last 24 hours you sent 0.1 MB of the allowed 0.1 MB. Please try later."), 10_000);
    expect(await stack.app.services.store.listByChat(u.chatId, 10)).toHaveLength(1);
  });
});

describe("a restarted bot continues the job's status message", () => {
  test("after a crash mid-processing, the new process edits the same status message to Done (adopted by the outbox)", async () => {
    // First process: the processor never finishes (as if the process died during it).
    const stuck: import("../../bot/worker/types.ts").ProcessRunner = (_i, _o, l) => new Promise((_, reject) => l.signal?.addEventListener("abort", () => reject(new Error("killed"))));
    const first = await startStack({ runner: stuck, env: { LEASE_TTL: "1s" } });
    const u = first.em.user({ language_code: "en" });
    const sent = await u.sendDocument({ bytes: new Uint8Array(2048).fill(4), file_name: "r.bin" });
    const { id } = await first.jobFor(u.chatId, sent.message_id);
    await first.waitJob(id, ["processing"]);
    await u.waitFor((m) => m.some((x) => x.text?.includes(`job #${id}`)));
    const statusId = (await first.app.services.store.get(id))!.statusMessageId!;
    expect(statusId).toBeGreaterThan(0);
    await first.stop({ keep: true });
    // Second process, same database and chat: the lease expires, the job resumes by state.
    stack = await startStack({ resume: first, runner: copyRunner(), env: { LEASE_TTL: "1s" } });
    const done = await stack.waitJob(id);
    expect(done.status).toBe("ready");
    const msgs = await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${id}`)), 10_000);
    expect(msgs.find((x) => x.text?.startsWith(`Done, job #${id}`))!.message_id).toBe(statusId);
    expect(msgs.filter((x) => !x.document).map((x) => x.message_id)).toEqual([statusId]); // no second status message
  });
});
