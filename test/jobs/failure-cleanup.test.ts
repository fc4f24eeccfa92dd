/**
 * The failure cleanup removes files only while the row is still the failed row it committed (issue 11
 * item 5): between `failed` being committed and its cleanup, a re-sent file may re-arm the job and a new
 * try may claim it and download; that try's files and reservation must survive the old cleanup.
 * Real store, real data dirs, the real Finisher.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { Finisher } from "../../bot/worker/finisher.ts";
import { generatedName } from "../../bot/worker/paths.ts";
import { copyRunner } from "../support/copy-runner.ts";
import { startStack, type Stack } from "../support/stack.ts";

let stack: Stack | null = null;
afterEach(async () => {
  await stack?.stop();
  stack = null;
});

const budget = { total: 1 << 30, multiplier: 2, modeLimit: 1 << 20 };
const doc = (n: number) => ({ updateId: 10 + n, chatId: 5, userId: 5, messageId: n, source: "document" as const, fileId: `f${n}`, fileUniqueId: `U-${n}`, declaredName: "x.bin", declaredMime: null, declaredSize: 1000, languageCode: "en" });

test("a job re-armed and downloading again before its failure's cleanup keeps the new try's files and reservation", async () => {
  stack = await startStack({ runner: copyRunner(), noPolling: true });
  const { store } = stack.app.services;
  const paths = stack.app.paths;
  const now = Date.now();
  const { job } = await store.accept(doc(1), now);
  await store.claimDownload("test/old", now, 600_000, budget);
  const oldSource = join(paths.downloads, generatedName(job.id));
  writeFileSync(oldSource, "old try");
  expect(await store.fail(job.id, "accepted", "test/old", "download_failed", {}, "getFile: 502", now)).toBe(true);
  const committed = (await store.get(job.id))!;

  // Before the cleanup runs: a re-sent file re-arms the job and a new try claims it and writes its download.
  expect(await store.rearm(job.id, "failed", { fileId: "f1-again", updateId: 99, messageId: 9, languageCode: "en" }, now + 1)).toBe(true);
  const claimed = (await store.claimDownload("test/new", now + 2, 600_000, budget))!;
  expect(claimed.reservedBytes).toBe(2000);
  const newPart = join(paths.downloads, `${generatedName(job.id)}.part`);
  writeFileSync(newPart, "new try");

  const finisher = new Finisher(stack.app.services, paths);
  expect(await finisher.cleanupFailed(committed)).toBe(false);
  expect(existsSync(newPart)).toBe(true);
  expect(existsSync(oldSource)).toBe(true); // listed with the new try's files: nothing of this job is touched
  expect((await store.get(job.id))?.reservedBytes).toBe(2000);
  expect(stack.logs.some((l) => l.includes("the job lives again (a re-sent file) before its failure was cleaned up"))).toBe(true);
});

test("the failed row unchanged: its files go and its reservation is released", async () => {
  stack = await startStack({ runner: copyRunner(), noPolling: true });
  const { store } = stack.app.services;
  const paths = stack.app.paths;
  const now = Date.now();
  const { job } = await store.accept(doc(2), now);
  await store.claimDownload("test/old", now, 600_000, budget);
  const source = join(paths.downloads, generatedName(job.id));
  writeFileSync(source, "old try");
  await store.fail(job.id, "accepted", "test/old", "download_failed", {}, "getFile: 502", now);
  const finisher = new Finisher(stack.app.services, paths);
  expect(await finisher.cleanupFailed((await store.get(job.id))!)).toBe(true);
  expect(existsSync(source)).toBe(false);
  expect((await store.get(job.id))?.reservedBytes).toBe(0);
});
