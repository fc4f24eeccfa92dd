/** BR-11 at start-up: the pdf.js self-check runs on a warm pool child and reports the installed version. */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { afterAll, expect, test } from "vitest";
import { closeTestPool, testPool } from "../support/pool.ts";

afterAll(closeTestPool);

test("pool selfCheck: ok with the installed pdf.js version, on its worker thread", async () => {
  const version = JSON.parse(readFileSync(resolve(import.meta.dirname, "../../node_modules/pdfjs-dist/package.json"), "utf8")).version;
  expect(await testPool().selfCheck()).toMatchObject({ ok: true, version, pageWorker: "thread" });
});

test("pool selfCheck: a child that cannot answer in time is a failure naming why, and the pool works on", async () => {
  const r = await testPool().selfCheck(1);
  expect(r.ok).toBe(false);
  expect(r.ok ? "" : r.missing).toBe("the pdf.js self-check in a processor child failed: processor child killed after 1 ms");
  expect((await testPool().selfCheck()).ok).toBe(true);
});
