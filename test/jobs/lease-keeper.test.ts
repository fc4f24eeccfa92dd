/**
 * The lease keeper (seed 000: "записывает в неё срок lease_until … и периодически продлевает
 * его, пока работает"; audit 000 T1). On the real stack: with LEASE_TTL 1 s a 3.5 s processing
 * step keeps its lease (one try, one runner call, ready); a stolen lease stops the step at the
 * next renewal, and the loser commits nothing and sends nothing. Alone, on a real SQLite file
 * with fake timers: failing renewals are retried and stop the step once the lease has expired.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { openDb, type OpenDb } from "../../bot/db/open.ts";
import { SqliteJobStore } from "../../bot/jobs/sqlite-store.ts";
import type { JobStore } from "../../bot/jobs/store.ts";
import { createLogger } from "../../bot/log.ts";
import { keepLease, LeaseKeepers } from "../../bot/worker/lease-keeper.ts";
import type { ProcessRunner } from "../../bot/worker/types.ts";
import { copyRunner } from "../support/copy-runner.ts";
import { startStack, type Stack } from "../support/stack.ts";

/** How long the slow runner works, ms: several lease TTLs. */
const STEP_MS = 3500;

/** A copying runner that first works for STEP_MS, and stops early (throws) when its signal aborts, as the real runner does. */
function slowRunner(): ProcessRunner & { calls: number; aborted: number } {
  const copy = copyRunner();
  const run = (async (input, options, limits) => {
    run.calls++;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, STEP_MS);
      limits.signal?.addEventListener(
        "abort",
        () => {
          clearTimeout(timer);
          run.aborted++;
          reject(new Error("aborted"));
        },
        { once: true },
      );
    });
    return copy(input, options, limits);
  }) as ProcessRunner & { calls: number; aborted: number };
  run.calls = 0;
  run.aborted = 0;
  return run;
}

let stack: Stack | null = null;
afterEach(async () => {
  await stack?.stop();
  stack = null;
});

test("LEASE_TTL 1 s, a 3.5 s step: the lease is renewed, one try, ready", async () => {
  const runner = slowRunner();
  // Two process workers: a lapsed lease would be taken by the idle one.
  stack = await startStack({ runner, env: { LEASE_TTL: "1s", PROCESS_CONCURRENCY: "2" } });
  const u = stack.em.user({ language_code: "en" });
  const sent = await u.sendDocument({ bytes: new Uint8Array(3000).fill(1), file_name: "slow.bin" });
  const job = await stack.waitJob((await stack.jobFor(u.chatId, sent.message_id)).id, ["ready", "failed"], 20_000);
  expect([job.status, job.attempts, runner.calls, runner.aborted]).toEqual(["ready", 1, 1, 0]);
  expect(stack.logs.some((l) => l.includes("lease lost"))).toBe(false);
}, 30_000);

test("a stolen lease: the step is aborted at the next renewal; the loser neither sends nor commits", async () => {
  const runner = slowRunner();
  stack = await startStack({ runner, env: { LEASE_TTL: "1s", PROCESS_CONCURRENCY: "2" } });
  const u = stack.em.user({ language_code: "en" });
  const sent = await u.sendDocument({ bytes: new Uint8Array(3000).fill(2), file_name: "stolen.bin" });
  const id = (await stack.jobFor(u.chatId, sent.message_id)).id;
  await stack.waitJob(id, ["processing"], 10_000);
  await expect.poll(() => runner.calls, { timeout: 5000 }).toBe(1);
  // Another process takes the job over (its lease is long and live, so nobody here may claim it).
  stack.app.db!.sqlite.run("UPDATE file_jobs SET lease_owner = 'thief', lease_until = '2099-01-01T00:00:00.000Z' WHERE id = ?", [id]);
  await expect.poll(() => runner.aborted, { timeout: STEP_MS }).toBe(1);
  // Give a loser that ignored the loss time to finish its step, send and commit.
  await Bun.sleep(STEP_MS);
  const row = await stack.app.services.store.get(id);
  expect([row?.status, row?.leaseOwner, row?.resultExpiresAt]).toEqual(["processing", "thief", null]);
  expect(runner.calls).toBe(1);
  expect(stack.em.count("sendDocument")).toBe(0);
  expect(stack.logs.some((l) => l.includes("lease lost; stopping this step"))).toBe(true);
}, 30_000);

describe("keepLease alone (fake timers, real SQLite)", () => {
  const T0 = Date.parse("2026-11-30T10:00:00.000Z");
  const TTL = 1000;
  let dir: string;
  let db: OpenDb;
  let store: SqliteJobStore;
  let jobId: number;
  let leaseUntil: string;
  beforeEach(async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"], now: T0 });
    dir = mkdtempSync(join(tmpdir(), "docket-lease-"));
    db = openDb(join(dir, "docket.sqlite"));
    store = new SqliteJobStore(db.db);
    const { job } = await store.accept({ updateId: 1, chatId: 1, userId: 1, messageId: 1, source: "document", fileId: "F", fileUniqueId: "U", declaredName: null, declaredMime: null, declaredSize: 10, languageCode: null }, T0);
    const claimed = await store.claimDownload("w", T0, TTL, { total: 1000, multiplier: 1, modeLimit: 100 });
    jobId = job.id;
    leaseUntil = claimed!.leaseUntil!;
  });
  afterEach(() => {
    vi.useRealTimers();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The real store with `renew` replaced. */
  const withRenew = (renew: JobStore["renew"]): JobStore =>
    new Proxy(store, { get: (t, p, r) => (p === "renew" ? renew : typeof Reflect.get(t, p, r) === "function" ? Reflect.get(t, p, r).bind(t) : Reflect.get(t, p, r)) });
  const silent = createLogger({ write: () => {} });

  test("renewals keep the row's lease ahead of the clock for as long as the step runs", async () => {
    const ac = new AbortController();
    const k = keepLease(store, jobId, "w", leaseUntil, TTL, Date.now, ac, silent);
    await vi.advanceTimersByTimeAsync(10 * TTL);
    expect(Date.parse((await store.get(jobId))!.leaseUntil!)).toBeGreaterThan(Date.now());
    expect(ac.signal.aborted).toBe(false);
    k.stop();
    await vi.advanceTimersByTimeAsync(2 * TTL);
    expect(Date.parse((await store.get(jobId))!.leaseUntil!)).toBeLessThan(Date.now());
  });

  test("a renewal that throws is retried; the step goes on when a retry works", async () => {
    let failures = 1;
    const renew: JobStore["renew"] = (...a) => (failures-- > 0 ? Promise.reject(new Error("SQLITE_BUSY")) : store.renew(...a));
    const ac = new AbortController();
    const k = keepLease(withRenew(renew), jobId, "w", leaseUntil, TTL, Date.now, ac, silent);
    await vi.advanceTimersByTimeAsync(5 * TTL);
    expect(ac.signal.aborted).toBe(false);
    expect(Date.parse((await store.get(jobId))!.leaseUntil!)).toBeGreaterThan(Date.now());
    k.stop();
  });

  test("renewals failing until the confirmed deadline: the step is aborted then, not before, and not in a tight loop", async () => {
    let calls = 0;
    const renew: JobStore["renew"] = () => (calls++, Promise.reject(new Error("disk I/O error")));
    const ac = new AbortController();
    const k = keepLease(withRenew(renew), jobId, "w", leaseUntil, TTL, Date.now, ac, silent);
    await vi.advanceTimersByTimeAsync(TTL - 1);
    expect(ac.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(TTL / 6 + 1);
    expect(ac.signal.aborted).toBe(true);
    expect((ac.signal.reason as Error).message).toBe("lease lost");
    expect(calls).toBeGreaterThanOrEqual(3);
    expect(calls).toBeLessThanOrEqual(8);
    k.stop();
  });

  test("LeaseKeepers.catchUp renews a keeper whose renewal is due (its timer late), only then, and forgets a stopped keeper", async () => {
    let late = 0;
    const clock = () => Date.now() + late;
    const keepers = new LeaseKeepers();
    const ac = new AbortController();
    const k = keepLease(store, jobId, "w", leaseUntil, TTL, clock, ac, silent, keepers);
    await keepers.catchUp(); // not due yet: the claim's lease stands
    expect((await store.get(jobId))!.leaseUntil).toBe(leaseUntil);
    late = 3 * TTL; // the event loop stalled: no timer ran, the row's lease lapsed by this clock
    expect(Date.parse(leaseUntil)).toBeLessThan(clock());
    await keepers.catchUp();
    expect(Date.parse((await store.get(jobId))!.leaseUntil!)).toBe(clock() + TTL);
    expect(ac.signal.aborted).toBe(false);
    k.stop();
    late += 3 * TTL;
    await keepers.catchUp();
    expect(Date.parse((await store.get(jobId))!.leaseUntil!)).toBeLessThan(clock());
  });

  test("a renewal answered after stop() (the step committed and released the lease) aborts nothing", async () => {
    let answer!: (held: boolean) => void;
    const renew: JobStore["renew"] = () => new Promise((r) => (answer = r));
    const ac = new AbortController();
    const k = keepLease(withRenew(renew), jobId, "w", leaseUntil, TTL, Date.now, ac, silent);
    await vi.advanceTimersByTimeAsync(TTL / 2);
    expect(answer).toBeTypeOf("function");
    k.stop();
    answer(false);
    await vi.advanceTimersByTimeAsync(0);
    expect(ac.signal.aborted).toBe(false);
  });
});

test("the event loop stalls past LEASE_TTL during a download: this process's next claim renews its own lease first — no second step of that job, the next job is claimed", async () => {
  // The bot's clock jumps as a stalled event loop sees it: every timer late, the lease lapsed in the row.
  let stalled = 0;
  stack = await startStack({ runner: copyRunner(), now: () => Date.now() + stalled, env: { LEASE_TTL: "5s", DOWNLOAD_CONCURRENCY: "2" } });
  const u = stack.em.user({ language_code: "en" });
  const holdA = stack.em.holdGetFile();
  const holdB = stack.em.holdGetFile();
  const a = await u.sendDocument({ bytes: new Uint8Array(3000).fill(3), file_name: "a.bin" });
  await holdA.arrived; // job A is downloading under this process's lease
  stalled = 3 * 5000;
  const b = await u.sendDocument({ bytes: new Uint8Array(3000).fill(4), file_name: "b.bin" });
  await holdB.arrived; // the idle download loop claimed after the stall
  const getFiles = () => stack!.em.calls.filter((c) => c.method === "getFile").map((c) => c.params.file_id);
  expect(getFiles()).toEqual([a.file_id, b.file_id]);
  holdA.release();
  holdB.release();
  const ja = await stack.waitJob((await stack.jobFor(u.chatId, a.message_id)).id, ["ready", "failed"], 20_000);
  const jb = await stack.waitJob((await stack.jobFor(u.chatId, b.message_id)).id, ["ready", "failed"], 20_000);
  expect([ja.status, ja.attempts, jb.status, jb.attempts], JSON.stringify([ja, jb])).toEqual(["ready", 1, "ready", 1]);
  expect(getFiles()).toEqual([a.file_id, b.file_id]);
  expect(stack.logs.filter((l) => l.includes("lease lost") || l.includes("moved by someone else"))).toEqual([]);
}, 30_000);
