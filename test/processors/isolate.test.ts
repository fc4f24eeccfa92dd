/**
 * runIsolated with real child processes: success, a refusal passing through, and each
 * failure mode made real by the child's test fault switch (DOCKET_CHILD_FAULT via
 * `testFault`): hang → processing_timeout, allocate → too_much_memory (memory cap),
 * exit/abort → processing_crashed, abort signal → cancelled. After each failure the next
 * attempt still succeeds (one file's failure fails that attempt only).
 */
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { runIsolated, residentBytes } from "../../processors/isolate.ts";
import { isRetryableProcessingFailure } from "../../processors/retry-policy.ts";
import { ProcessingError } from "../../processors/types.ts";
import { makePdf } from "../../scripts/samples/index.ts";
import { fixturesDir, haveFixtures, noteIfNoFixtures, testOptions } from "./support/fixtures.ts";
import { readManifest } from "./support/manifest.ts";
import { cleanupWorkDirs, refused, writeInput } from "./support/run.ts";

noteIfNoFixtures("isolate");

afterEach(cleanupWorkDirs);

/** A work dir with a 2-page text PDF in it. */
function setup(): { dir: string; pdf: string } {
  const { path, dir } = writeInput(makePdf({ pages: [["Isolated page one"], ["Isolated page two"]] }));
  return { dir, pdf: path };
}

const LIMITS = { timeoutMs: 20_000, memoryMb: 1024 };

describe("runIsolated", () => {
  test("processes a PDF in a child and leaves no result file behind", async () => {
    const { dir, pdf } = setup();
    const { facts, outputs } = await runIsolated(pdf, testOptions(dir, "report.pdf"), LIMITS);
    expect(facts.pages).toBe(2);
    const txt = outputs.find((o) => o.fileName === "report.txt")!;
    expect(readFileSync(txt.path, "utf8")).toContain("Isolated page two");
    expect(readdirSync(dir).filter((f) => f.startsWith(".result"))).toEqual([]);
  });

  test("a processor refusal crosses the process boundary with reason and params", async () => {
    const { dir } = setup();
    const zero = join(dir, "zero.pdf");
    writeFileSync(zero, makePdf({ pages: [] }));
    const err = await refused(runIsolated(zero, testOptions(dir), LIMITS));
    expect(err.reason).toBe("empty");
    expect(err.params).toEqual({ what: "pdf" });
  });

  test.skipIf(!haveFixtures)("shared fixture: password-protected PDF → encrypted through the child", async () => {
    const { dir } = setup();
    const err = await refused(runIsolated(join(fixturesDir, "pdf_password_protected.pdf"), testOptions(dir, "memo.pdf"), LIMITS));
    expect(err.reason).toBe("encrypted");
  });

  test("hang → processing_timeout at the wall clock, then the next attempt works", async () => {
    const { dir, pdf } = setup();
    const t0 = performance.now();
    const err = await refused(runIsolated(pdf, testOptions(dir), { timeoutMs: 1500, memoryMb: 1024, testFault: "hang" }));
    const took = performance.now() - t0;
    expect(err.reason).toBe("processing_timeout");
    expect(err.params).toEqual({ seconds: 2 });
    expect(took).toBeGreaterThanOrEqual(1400);
    expect(took).toBeLessThan(10_000);
    expect((await runIsolated(pdf, testOptions(dir), LIMITS)).facts.pages).toBe(2);
  });

  test("allocating past the memory cap → too_much_memory {limit_mb} 'out of memory cap', final (not retried)", async () => {
    const { dir, pdf } = setup();
    const err = await refused(runIsolated(pdf, testOptions(dir), { timeoutMs: 20_000, memoryMb: 300, testFault: "allocate" }));
    expect(err.reason).toBe("too_much_memory");
    expect(err.params).toEqual({ limit_mb: 300 });
    expect(err.message).toMatch(/out of memory cap \(RSS \d+ MB > 300 MB\)/);
    expect(isRetryableProcessingFailure(err, 1)).toBe(false);
  });

  test("exit without a result → processing_crashed with the exit code", async () => {
    const { dir, pdf } = setup();
    const err = await refused(runIsolated(pdf, testOptions(dir), { ...LIMITS, testFault: "exit" }));
    expect(err.reason).toBe("processing_crashed");
    expect(err.message).toContain("exit code 3");
  });

  test("a crash by signal → processing_crashed naming the signal", async () => {
    const { dir, pdf } = setup();
    const err = await refused(runIsolated(pdf, testOptions(dir), { ...LIMITS, testFault: "abort" }));
    expect(err.reason).toBe("processing_crashed");
    expect(err.message).toContain("SIGABRT");
  });

  test("abort signal kills the child → cancelled; an already-aborted signal never starts one", async () => {
    const { dir, pdf } = setup();
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 300);
    const t0 = performance.now();
    const err = await refused(runIsolated(pdf, testOptions(dir), { ...LIMITS, signal: ac.signal, testFault: "hang" }));
    expect(err.reason).toBe("cancelled");
    expect(performance.now() - t0).toBeLessThan(5000);
    const err2 = await refused(runIsolated(pdf, testOptions(dir), { ...LIMITS, signal: ac.signal }));
    expect(err2.reason).toBe("cancelled");
  });

  test("residentBytes reads this process's RSS and null for a gone pid", async () => {
    expect(await residentBytes(process.pid)).toBeGreaterThan(10 * 2 ** 20);
    expect(await residentBytes(2 ** 22 + 12345)).toBeNull();
  });

  test.skipIf(!haveFixtures)("every MANIFEST.tsv row has its expected outcome through the child too", async () => {
    const rows = readManifest(join(fixturesDir, "MANIFEST.tsv"));
    const failures: string[] = [];
    const queue = [...rows];
    const worker = async (): Promise<void> => {
      for (let row = queue.shift(); row; row = queue.shift()) {
        const { dir } = setup();
        const got = await runIsolated(join(fixturesDir, row.file), testOptions(dir, row.declaredName), LIMITS).then(
          (r) => ({ ok: true as const, facts: r.facts }),
          (e: unknown) => ({ ok: false as const, reason: e instanceof ProcessingError ? e.reason : String(e) }),
        );
        const exp = row.expected;
        if (exp.outcome === "reject") {
          if (got.ok || !exp.reasons.includes(got.reason)) failures.push(`${row.file}: ${JSON.stringify(got)}`);
        } else if (!got.ok) {
          failures.push(`${row.file}: refused ${got.reason}`);
        } else {
          for (const k of ["pages", "width", "height", "frames"] as const) {
            if (exp[k] !== undefined && got.facts[k] !== exp[k]) failures.push(`${row.file}: ${k}=${got.facts[k]}, want ${exp[k]}`);
          }
        }
      }
    };
    await Promise.all([worker(), worker(), worker()]);
    expect(failures).toEqual([]);
    expect(rows.length).toBeGreaterThan(10);
    // A bound, not a delay: ~4 s idle but 35 s on a loaded 2-core machine (a child per row); 60 s is too close.
  }, 180_000);
});
