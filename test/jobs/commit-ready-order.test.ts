/**
 * "Commit `ready`, then delete the source" (seed 000: "Сначала в базе фиксируется новое
 * состояние, потом удаляется файл … исходник … удаляют только после перехода в ready";
 * audit 000 T2). The real processing step against the emulator and a real SQLite file,
 * with a store whose `processing → ready` commit fails: the source must survive, so the
 * retried try can redo the work from it.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { createApp, type App } from "../../bot/app.ts";
import { loadConfig } from "../../bot/config.ts";
import type { JobStore } from "../../bot/jobs/store.ts";
import { createLogger } from "../../bot/log.ts";
import { Finisher } from "../../bot/worker/finisher.ts";
import { generatedName } from "../../bot/worker/paths.ts";
import { ProcessStep } from "../../bot/worker/process-step.ts";
import { SourceKeeper } from "../../bot/worker/source.ts";
import { startEmulator, type Emulator } from "../emulator/index.ts";
import { copyRunner } from "../support/copy-runner.ts";

let em: Emulator | null = null;
let app: App | null = null;
let dir = "";
afterEach(async () => {
  await app?.close(2000);
  await em?.close();
  rmSync(dir, { recursive: true, force: true });
  app = null;
  em = null;
});

/** The store with `processing → ready` failing the way a locked or full database fails. */
function readyCommitFails(store: JobStore): JobStore & { readyTries: number } {
  const w = new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === "readyTries") return tries;
      if (prop === "transition") {
        return async (...args: Parameters<JobStore["transition"]>) => {
          if (args[1] === "processing" && args[2] === "ready") {
            tries++;
            throw new Error("SQLITE_FULL: database or disk is full");
          }
          return target.transition(...args);
        };
      }
      const v = Reflect.get(target, prop, receiver);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  let tries = 0;
  return w as JobStore & { readyTries: number };
}

test("a failing `ready` commit leaves the source and the job in processing (retried later)", async () => {
  em = await startEmulator({ rateLimits: false });
  dir = mkdtempSync(join(tmpdir(), "docket-commit-order-"));
  const config = loadConfig({ BOT_TOKEN: em.token, BOT_API_MODE: "cloud", BOT_API_ROOT: em.apiRoot, DATA_DIR: join(dir, "data"), HTTP_PORT: "0", LEASE_TTL: "30s" });
  const log = createLogger({ level: "silent" });
  const runner = copyRunner();
  // The engine is never started: this test is the only worker.
  app = await createApp({ config, log, runner });
  const { store } = app.services;
  const u = em.user({ language_code: "en" });
  const now = Date.now();
  const { job } = await store.accept(
    { updateId: 1, chatId: u.chatId, userId: u.id, messageId: 1, source: "document", fileId: "F1", fileUniqueId: "U1", declaredName: "a.bin", declaredMime: null, declaredSize: 3000, languageCode: "en" },
    now,
  );
  expect((await store.claimDownload("t2", now, 30_000, { total: 1 << 30, multiplier: 1, modeLimit: 1 << 20 }))?.id).toBe(job.id);
  const bytes = new Uint8Array(3000).fill(9);
  const source = join(app.paths.downloads, generatedName(job.id));
  writeFileSync(source, bytes);
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  const claim = await store.handOver(job.id, "t2", now, 30_000, { localPath: source, sha256, realSize: 3000, reservedBytes: 3000 });
  expect(claim?.found).toBe("fetched");

  const wrapped = readyCommitFails(store);
  const services = { ...app.services, store: wrapped };
  const noRefetch = new SourceKeeper(services, app.paths, () => Promise.reject(new Error("the source is on disk: no refetch here")), "t2");
  const step = new ProcessStep(services, app.paths, runner, new Finisher(services, app.paths), "t2", noRefetch);
  await step.run(claim!, new AbortController());

  expect(runner.calls).toBe(1);
  expect(wrapped.readyTries).toBe(1);
  const row = await store.get(job.id);
  // The failed commit counts as a crashed try: retry later, same state, lease released.
  expect([row?.status, row?.leaseOwner, row?.resultExpiresAt]).toEqual(["processing", null, null]);
  expect(existsSync(source)).toBe(true);
  expect(readdirSync(app.paths.downloads)).toEqual([source.split("/").at(-1)]);
}, 20_000);
