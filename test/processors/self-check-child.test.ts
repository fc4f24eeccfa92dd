/** BR-11 at start-up: the pdf.js self-check runs in a child process and reports the installed version. */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { expect, test } from "vitest";
import { pdfSelfCheckInChild } from "../../processors/isolate.ts";

test("pdfSelfCheckInChild: ok with the installed pdf.js version", async () => {
  const version = JSON.parse(readFileSync(resolve(import.meta.dirname, "../../node_modules/pdfjs-dist/package.json"), "utf8")).version;
  expect(await pdfSelfCheckInChild()).toMatchObject({ ok: true, version, pageWorker: "thread" });
});

test("pdfSelfCheckInChild: a child that cannot answer in time is a failure naming why", async () => {
  const r = await pdfSelfCheckInChild(1);
  expect(r.ok).toBe(false);
  expect(r.ok ? "" : r.missing).toMatch(/^self-check child gave no answer/);
});
