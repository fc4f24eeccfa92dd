/**
 * The download step's ownership of files and budget (audit 000 M7, L2), with the real step, the real
 * cloud fetcher, the emulator over HTTP and SQLite on disk; the engine is not started, the test plays
 * two workers:
 * - a worker that lost its lease never removes the new holder's download nor changes its reservation;
 * - a failed try commits its state first and removes its files second (seed 000: "Сначала в базе
 *   фиксируется новое состояние, потом удаляется файл"), then releases the budget of a job nobody holds.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, test } from "vitest";
import { createApp, type App } from "../../bot/app.ts";
import { loadConfig } from "../../bot/config.ts";
import type { FileJob } from "../../bot/db/schema.ts";
import { cloudFetcher } from "../../bot/fetch/cloud.ts";
import { FetchError } from "../../bot/fetch/errors.ts";
import type { Fetcher } from "../../bot/fetch/types.ts";
import type { JobStore } from "../../bot/jobs/store.ts";
import { createLogger } from "../../bot/log.ts";
import { DownloadStep } from "../../bot/worker/download-step.ts";
import { Finisher } from "../../bot/worker/finisher.ts";
import { startEmulator, type ChatUser, type Emulator } from "../emulator/index.ts";
import { copyRunner } from "../support/copy-runner.ts";

const TTL = 30_000;
const SIZE = 200_000;
let em: Emulator;
let app: App;
let dir: string;
let user: ChatUser;

beforeEach(async () => {
  em = await startEmulator({ rateLimits: false });
  dir = mkdtempSync(join(tmpdir(), "docket-download-step-"));
  const config = loadConfig({
    BOT_TOKEN: em.token,
    BOT_API_MODE: "cloud",
    BOT_API_ROOT: em.apiRoot,
    DATA_DIR: join(dir, "data"),
    HTTP_PORT: "0",
    LEASE_TTL: "30s",
    DOWNLOAD_IDLE_TIMEOUT: "800ms",
  });
  app = await createApp({ config, log: createLogger({ level: "silent" }), runner: copyRunner() });
  user = em.user({ language_code: "en" });
});
afterEach(async () => {
  await app.close(2000);
  await em.close();
  rmSync(dir, { recursive: true, force: true });
});

const data = Uint8Array.from({ length: SIZE }, (_, i) => (i * 7 + 1) & 255);

/** A job in `accepted` for a real emulator document of SIZE bytes. */
async function acceptedJob(): Promise<FileJob> {
  const s = await user.sendDocument({ bytes: data, file_name: "scan.bin" });
  const { job } = await app.services.store.accept(
    { updateId: s.update_id, chatId: user.chatId, userId: user.id, messageId: s.message_id, source: "document", fileId: s.file_id!, fileUniqueId: s.file_unique_id!, declaredName: "scan.bin", declaredMime: null, declaredSize: SIZE, languageCode: "en" },
    Date.now(),
  );
  return job;
}

/** Claim as `owner` at `at` (a later `at` takes a job whose lease has expired by then); reservation = SIZE × multiplier. */
async function claim(owner: string, at: number, multiplier: number): Promise<FileJob> {
  const job = await app.services.store.claimDownload(owner, at, TTL, { total: 1 << 30, multiplier, modeLimit: 20 << 20, floor: 0 });
  expect(job?.leaseOwner).toBe(owner);
  return job!;
}

function step(owner: string, fetcher: Fetcher = cloudFetcher(app.services.api, app.services.config.apiRoot, app.services.config.token), services = app.services): DownloadStep {
  return new DownloadStep(services, app.paths, fetcher, new Finisher(services, app.paths), owner, () => {});
}

const parts = () => readdirSync(app.paths.downloads).filter((n) => n.endsWith(".part"));

async function until(what: string, cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

/**
 * Worker A downloads (its body stalls), loses the lease to worker B (claim after A's lease would have
 * expired), B downloads slowly; A's try then ends while B's `.part` is being written.
 */
async function takeover(endA: (ctrl: AbortController) => void) {
  const job = await acceptedJob();
  const a = await claim("wA", Date.now(), 2);
  em.faultFileDownload({ kind: "stall", afterBytes: 1000 });
  const ctrlA = new AbortController();
  const runA = step("wA").run(a, ctrlA);
  await until("A's .part", () => parts().length === 1);
  const b = await claim("wB", Date.now() + 2 * TTL, 3);
  em.faultFileDownload({ kind: "trickle", chunkBytes: 10_000, everyMs: 100 }); // ~2 s for B's body
  const runB = step("wB").run(b, new AbortController());
  await until("B's first bytes", () => em.calls.filter((c) => c.params.fault === "trickle").length === 1);
  await Bun.sleep(150);
  endA(ctrlA);
  await runA;
  return { job, runB };
}

test("M7: A's try fails after losing the lease: B's .part and B's reservation are untouched, B ends fetched", async () => {
  const { job, runB } = await takeover(() => {}); // A's stall ends by DOWNLOAD_IDLE_TIMEOUT
  const row = await app.services.store.get(job.id);
  expect([row!.status, row!.leaseOwner, row!.reservedBytes]).toEqual(["accepted", "wB", SIZE * 3]);
  expect(parts()).toHaveLength(1); // B's, still being written
  await runB;
  const done = await app.services.store.get(job.id);
  expect([done!.status, done!.realSize, done!.sha256]).toEqual(["fetched", SIZE, createHash("sha256").update(data).digest("hex")]);
  expect(existsSync(done!.localPath!)).toBe(true);
}, 20_000);

test("M7: A's step is aborted (lease lost): it removes only its own try's files", async () => {
  const { job, runB } = await takeover((ctrl) => ctrl.abort(new Error("lease lost")));
  expect(parts()).toHaveLength(1);
  expect((await app.services.store.get(job.id))!.reservedBytes).toBe(SIZE * 3);
  await runB;
  expect((await app.services.store.get(job.id))!.status).toBe("fetched");
}, 20_000);

test("L2: a failed try commits `retry later` before its files go, then releases the reservation of the unheld job", async () => {
  const job = await acceptedJob();
  const claimed = await claim("wA", Date.now(), 2);
  let partAtCommit: boolean | null = null;
  let part = "";
  // A fetcher that leaves its `.part` behind when it fails (a crash inside the write, say).
  const leaky: Fetcher = async (req) => {
    part = `${req.destPath}.part`;
    writeFileSync(part, data.subarray(0, 1000));
    throw new FetchError({ reason: "download_failed", retryable: true, detail: "connection reset" });
  };
  const store = new Proxy(app.services.store, {
    get(target, prop, receiver) {
      if (prop === "retryLater") {
        return (...args: Parameters<JobStore["retryLater"]>) => {
          partAtCommit = existsSync(part);
          return target.retryLater(...args);
        };
      }
      const v = Reflect.get(target, prop, receiver);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  await step("wA", leaky, { ...app.services, store }).run(claimed, new AbortController());
  expect(partAtCommit).toBe(true);
  expect(existsSync(part)).toBe(false);
  const row = await app.services.store.get(job.id);
  expect([row!.status, row!.leaseOwner, row!.reservedBytes]).toEqual(["accepted", null, 0]);
  expect(row!.notBefore).not.toBeNull();
}, 20_000);
