/**
 * The processor pool (processors/pool/, issue 12) with real children: warm reuse, a refusal
 * crossing the IPC channel, each isolation limit enforced by killing the child (wall clock,
 * memory cap, cancel) with the job's reason code, crashes failing only their job, replacement
 * (after N jobs, RSS after a job above the threshold, after any kill or crash, after an idle
 * time), start-up failures, stdout/stderr floods, a tool the child started dying with it, the
 * children dying with the bot, and (issue 11 item 6) a minimal environment and nothing but the
 * entry script in argv. Faults come from the test switch (processors/pool/protocol.ts).
 */
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, test } from "vitest";
import { CHILD_ENV_KEYS, ProcessorPool, peakResidentBytes, residentBytes, treeResidentBytes, type PoolEvent, type PoolOptions, type PoolSettings } from "../../processors/pool/index.ts";
import { isRetryableProcessingFailure } from "../../processors/retry-policy.ts";
import { ProcessingError } from "../../processors/types.ts";
import { makePdf } from "../../scripts/samples/index.ts";
import { closeTestPool, testPool } from "../support/pool.ts";
import { fixturesDir, haveFixtures, noteIfNoFixtures, testOptions } from "./support/fixtures.ts";
import { readManifest } from "./support/manifest.ts";
import { cleanupWorkDirs, refused, writeInput } from "./support/run.ts";

noteIfNoFixtures("pool");

const LIMITS = { timeoutMs: 30_000, memoryMb: 1024 };
const BASE: PoolSettings = { size: 1, recycleJobs: 100, recycleRssBytes: 2 ** 40, idleMs: 600_000 };

/** Pools made by {@link makePool}; closed after each test. */
const pools: ProcessorPool[] = [];

afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
  cleanupWorkDirs();
});
afterAll(closeTestPool);

/** A pool with `settings` over {@link BASE}; `events` collects what it reports. */
function makePool(settings: Partial<PoolSettings> = {}, extra: Omit<PoolOptions, "settings" | "onEvent"> = {}): { pool: ProcessorPool; events: PoolEvent[] } {
  const events: PoolEvent[] = [];
  const pool = new ProcessorPool({ settings: { ...BASE, ...settings }, onEvent: (e) => events.push(e), ...extra });
  pools.push(pool);
  return { pool, events };
}

/** A work dir with a 2-page text PDF in it. */
function setup(): { dir: string; pdf: string } {
  const { path, dir } = writeInput(makePdf({ pages: [["Pooled page one"], ["Pooled page two"]] }));
  return { dir, pdf: path };
}

/** Run the 2-page PDF and check its result: the child works. */
async function works(pool: ProcessorPool): Promise<void> {
  const { dir, pdf } = setup();
  const { facts, outputs } = await pool.process(pdf, testOptions(dir, "report.pdf"), LIMITS);
  expect(facts.pages).toBe(2);
  expect(readFileSync(outputs.find((o) => o.fileName === "report.txt")!.path, "utf8")).toContain("Pooled page two");
}

/** Pids of the pool's children. */
const pids = (pool: ProcessorPool): number[] => pool.snapshot().map((c) => c.pid);
/** Whether a process exists. */
const alive = (pid: number): boolean => existsSync(`/proc/${pid}`);
/** The pid of the pool's only child once it is idle. */
async function idleChild(pool: ProcessorPool): Promise<number> {
  await expect.poll(() => pool.snapshot().map((c) => c.state)).toEqual(["idle"]);
  return pool.snapshot()[0]!.pid;
}

describe("jobs on warm children", () => {
  test("a PDF is processed on a warm child, and the next job reuses the same child", async () => {
    const { pool } = makePool();
    await works(pool);
    const pid = await idleChild(pool);
    await works(pool);
    expect(await idleChild(pool)).toBe(pid);
    expect(pool.snapshot()[0]!.jobs).toBe(2);
  });

  test("a processor refusal crosses the IPC channel with reason and params", async () => {
    const { dir } = setup();
    const zero = join(dir, "zero.pdf");
    writeFileSync(zero, makePdf({ pages: [] }));
    const err = await refused(testPool().process(zero, testOptions(dir), LIMITS));
    expect([err.reason, err.params]).toEqual(["empty", { what: "pdf" }]);
  });

  test.skipIf(!haveFixtures)("shared fixture: password-protected PDF → encrypted through the pool", async () => {
    const { dir } = setup();
    const err = await refused(testPool().process(join(fixturesDir, "pdf_password_protected.pdf"), testOptions(dir, "memo.pdf"), LIMITS));
    expect(err.reason).toBe("encrypted");
  });

  test("progress events of a PDF reach the caller: the last is every page done", async () => {
    const { dir } = setup();
    const { path } = writeInput(makePdf({ pages: [["one"], ["two"], ["three"]] }));
    const seen: [number, number][] = [];
    await testPool().process(path, testOptions(dir, "three.pdf"), { ...LIMITS, onProgress: (d, t) => seen.push([d, t]) });
    expect(seen.at(-1)).toEqual([3, 3]);
  });

  test("jobs beyond the pool size wait for a child and all succeed; never more children than the size", async () => {
    const { pool } = makePool({ size: 2 });
    let most = 0;
    const watch = setInterval(() => (most = Math.max(most, pool.snapshot().length)), 10);
    try {
      await Promise.all(Array.from({ length: 5 }, () => works(pool)));
    } finally {
      clearInterval(watch);
    }
    expect(most).toBe(2);
    expect(pool.snapshot().reduce((n, c) => n + c.jobs, 0)).toBe(5);
  });

  test("an unknown job type is processing_crashed, and the child stays", async () => {
    const { pool } = makePool();
    await works(pool);
    const pid = await idleChild(pool);
    const err = await refused(pool.run("no-such-type" as "process", { inputPath: "/nonexistent", options: testOptions("/tmp") }, LIMITS));
    expect([err.reason, err.message]).toEqual(["processing_crashed", 'processor threw: Error: no handler for job type "no-such-type"']);
    expect(await idleChild(pool)).toBe(pid);
  });
});

describe("job types from the pool's `modules` (how other work joins the pool)", () => {
  const ECHO = join(import.meta.dirname, "support/echo-job.ts");

  test("a module's job type runs in the warm child: its value, its progress with the stage, its refusal", async () => {
    const { pool } = makePool({}, { modules: [ECHO] });
    const seen: unknown[] = [];
    const r = await pool.run("test-echo", { text: "hello", steps: 3 }, { ...LIMITS, onProgress: (e) => seen.push(e) });
    expect(r).toEqual({ text: "HELLO", pid: await idleChild(pool) });
    expect(seen.at(-1)).toEqual({ done: 3, total: 3, stage: "echo" });
    const err = await refused(pool.run("test-echo", { text: "x", steps: 0, refuse: true }, LIMITS));
    expect([err.reason, err.params, err.message]).toEqual(["corrupt", { ext: "bin", label: "test", size: "none" }, "refused on request"]);
    await works(pool); // the built-in types are still there
  });

  test("a module that cannot be loaded is a start-up failure naming it", async () => {
    const { pool } = makePool({}, { modules: ["/nonexistent/docket-job.ts"] });
    const err = await refused(works(pool));
    expect(err.reason).toBe("processing_crashed");
    expect(err.message).toMatch(/^processor child exited during start-up \(exit code 5\): cannot load job module \/nonexistent\/docket-job\.ts: /);
  });
});

describe("isolation limits: each enforced by killing the child, the next job on a fresh child", () => {
  test("hang → processing_timeout {seconds} at the wall clock; the child is killed and replaced", async () => {
    const { pool, events } = makePool();
    const { dir, pdf } = setup();
    await works(pool);
    const pid = await idleChild(pool);
    const err = await refused(pool.process(pdf, testOptions(dir), { timeoutMs: 1500, memoryMb: 1024, testFault: "hang" }));
    expect([err.reason, err.params, err.message]).toEqual(["processing_timeout", { seconds: 2 }, "processor child killed after 1500 ms"]);
    expect(isRetryableProcessingFailure(err, 1)).toBe(true);
    expect(alive(pid)).toBe(false);
    expect(events).toContainEqual({ type: "killed", pid, cause: "timeout", jobs: 1 });
    await works(pool);
    expect(await idleChild(pool)).not.toBe(pid);
  });

  test("allocating past the memory cap → too_much_memory {limit_mb} 'out of memory cap', final; next job on a fresh child", async () => {
    const { pool } = makePool();
    const { dir, pdf } = setup();
    const err = await refused(pool.process(pdf, testOptions(dir), { timeoutMs: 30_000, memoryMb: 300, testFault: "allocate" }));
    expect([err.reason, err.params]).toEqual(["too_much_memory", { limit_mb: 300 }]);
    expect(err.message).toMatch(/^processor child killed: out of memory cap \(RSS \d+ MB > 300 MB\)$/);
    expect(isRetryableProcessingFailure(err, 1)).toBe(false);
    await works(pool);
  });

  test("a stage allowance (OCR) adds wall clock and memory only once the child enters the stage; the error names the limit in force", async () => {
    const { pool } = makePool();
    const { dir, pdf } = setup();
    const stageAllowance = { stage: "ocr", timeoutMs: 1500, memoryMb: 200 };
    const t0 = Date.now();
    const slow = await refused(pool.process(pdf, testOptions(dir), { timeoutMs: 1000, memoryMb: 1024, stageAllowance, testFault: "ocr-hang" }));
    expect([slow.reason, slow.params, slow.message]).toEqual(["processing_timeout", { seconds: 3 }, "processor child killed after 2500 ms"]);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2400);
    // Never entering the stage: the base wall clock.
    const plain = await refused(pool.process(pdf, testOptions(dir), { timeoutMs: 1000, memoryMb: 1024, stageAllowance, testFault: "hang" }));
    expect([plain.reason, plain.params]).toEqual(["processing_timeout", { seconds: 1 }]);
    const big = await refused(pool.process(pdf, testOptions(dir), { timeoutMs: 30_000, memoryMb: 300, stageAllowance, testFault: "ocr-allocate" }));
    expect([big.reason, big.params]).toEqual(["too_much_memory", { limit_mb: 500 }]);
    expect(big.message).toMatch(/^processor child killed: out of memory cap \(RSS (\d+) MB > 500 MB\)$/);
    expect(Number(/RSS (\d+)/.exec(big.message)![1])).toBeGreaterThan(500);
    const small = await refused(pool.process(pdf, testOptions(dir), { timeoutMs: 30_000, memoryMb: 300, stageAllowance, testFault: "allocate" }));
    expect([small.reason, small.params]).toEqual(["too_much_memory", { limit_mb: 300 }]);
    await works(pool);
  });

  test("exit without a reply → processing_crashed naming the exit code; the next job succeeds on a fresh child", async () => {
    const { pool, events } = makePool();
    const { dir, pdf } = setup();
    await works(pool);
    const pid = await idleChild(pool);
    const err = await refused(pool.process(pdf, testOptions(dir), { ...LIMITS, testFault: "exit" }));
    expect([err.reason, err.message]).toEqual(["processing_crashed", "processor child died without a result (exit code 3)"]);
    expect(events).toContainEqual({ type: "crashed", pid, how: "exit code 3", busy: true, stderr: "" });
    await works(pool);
    expect(await idleChild(pool)).not.toBe(pid);
  });

  test("a crash by signal → processing_crashed naming the signal", async () => {
    const { pool } = makePool();
    const { dir, pdf } = setup();
    const err = await refused(pool.process(pdf, testOptions(dir), { ...LIMITS, testFault: "abort" }));
    expect(err.reason).toBe("processing_crashed");
    expect(err.message).toMatch(/^processor child died without a result \(signal SIGABRT\)/);
    await works(pool);
  });

  test("a crashed child fails only its own job: the job beside it on the other child succeeds", async () => {
    const { pool } = makePool({ size: 2 });
    const a = setup();
    const b = setup();
    const [crashed, fine] = await Promise.allSettled([
      pool.process(a.pdf, testOptions(a.dir), { ...LIMITS, testFault: "exit" }),
      pool.process(b.pdf, testOptions(b.dir, "fine.pdf"), LIMITS),
    ]);
    expect(crashed.status === "rejected" && (crashed.reason as ProcessingError).reason).toBe("processing_crashed");
    expect(fine.status === "fulfilled" && fine.value.facts.pages).toBe(2);
  });

  test("abort kills the child → cancelled; an aborted job never starts one; a waiting job leaves the queue", async () => {
    const { pool } = makePool();
    const { dir, pdf } = setup();
    const ac = new AbortController();
    const running = pool.process(pdf, testOptions(dir), { ...LIMITS, signal: ac.signal, testFault: "hang" });
    const waiting = new AbortController();
    const queued = pool.process(pdf, testOptions(dir), { ...LIMITS, signal: waiting.signal });
    await expect.poll(() => pool.snapshot().map((c) => c.state)).toEqual(["busy"]);
    const pid = pool.snapshot()[0]!.pid;
    waiting.abort();
    const left = await refused(queued);
    expect([left.reason, left.message]).toEqual(["cancelled", "cancelled while waiting for a processor child"]);
    ac.abort();
    const err = await refused(running);
    expect([err.reason, err.message]).toEqual(["cancelled", "processor child killed: cancelled"]);
    expect(alive(pid)).toBe(false);
    const err2 = await refused(pool.process(pdf, testOptions(dir), { ...LIMITS, signal: ac.signal }));
    expect([err2.reason, err2.message]).toEqual(["cancelled", "aborted before start"]);
    await works(pool);
  });

  test("a tool the child started dies with it (the whole process group is killed)", async () => {
    const { pool } = makePool();
    const { dir, pdf } = setup();
    const job = refused(pool.process(pdf, testOptions(dir), { timeoutMs: 20_000, memoryMb: 1024, testFault: "grandchild" }));
    await expect.poll(() => pool.snapshot()[0]?.state).toBe("busy");
    const pid = pool.snapshot()[0]!.pid;
    const grandchildren = (): number[] =>
      readdirSync(`/proc/${pid}/task`).flatMap((t) => readFileSync(`/proc/${pid}/task/${t}/children`, "utf8").split(" ").filter(Boolean).map(Number));
    await expect.poll(grandchildren).toHaveLength(1);
    const [sleeper] = grandchildren();
    // Between fork and exec the new process still shows the child's own command line.
    await expect.poll(() => readFileSync(`/proc/${sleeper}/cmdline`, "latin1")).toBe("sleep\u0000600\u0000");
    expect((await job).reason).toBe("processing_timeout");
    expect(alive(pid)).toBe(false);
    await expect.poll(() => alive(sleeper!)).toBe(false);
  }, 60_000);

  test("a child flooding stdout and stderr (16 MB each) is drained: its job succeeds and the child stays", async () => {
    const { pool } = makePool();
    const { dir, pdf } = setup();
    await works(pool);
    const pid = await idleChild(pool);
    const { facts } = await pool.process(pdf, testOptions(dir), { ...LIMITS, testFault: "flood" });
    expect(facts.pages).toBe(2);
    expect(await idleChild(pool)).toBe(pid);
  });
});

describe("replacement", () => {
  test("after recycleJobs jobs the child is replaced; the jobs after it run on the new child", async () => {
    const { pool, events } = makePool({ recycleJobs: 2 });
    await works(pool);
    const first = await idleChild(pool);
    await works(pool);
    await expect.poll(() => events.some((e) => e.type === "retired")).toBe(true);
    expect(events.find((e) => e.type === "retired")).toMatchObject({ type: "retired", pid: first, reason: "jobs", jobs: 2 });
    await works(pool);
    const second = await idleChild(pool);
    expect(second).not.toBe(first);
    expect(alive(first)).toBe(false);
  });

  test("RSS after a job above the threshold after a full GC (256 MB held) → replaced; below it the child stays", async () => {
    const { pool, events } = makePool({ recycleRssBytes: 350 * 2 ** 20 });
    await works(pool);
    const first = await idleChild(pool);
    expect(pool.snapshot()[0]!.rssBytes).toBeLessThan(350 * 2 ** 20);
    const { dir, pdf } = setup();
    await pool.process(pdf, testOptions(dir), { ...LIMITS, testFault: "leak" });
    await expect.poll(() => events.filter((e) => e.type === "retired")).toHaveLength(1);
    const retired = events.find((e) => e.type === "retired") as Extract<PoolEvent, { type: "retired" }>;
    expect([retired.pid, retired.reason, retired.jobs]).toEqual([first, "rss", 2]);
    expect(retired.rssBytes).toBeGreaterThan(350 * 2 ** 20);
    await works(pool);
    expect(await idleChild(pool)).not.toBe(first);
  });

  test("an idle child exits after idleMs and is not replaced; the next job starts a new one", async () => {
    const { pool, events } = makePool({ idleMs: 500 });
    await works(pool);
    const pid = await idleChild(pool);
    await expect.poll(() => pool.snapshot()).toEqual([]);
    expect(alive(pid)).toBe(false);
    expect(events.filter((e) => e.type === "retired")).toEqual([{ type: "retired", pid, reason: "idle", jobs: 1, rssBytes: expect.any(Number) }]);
    await works(pool);
    expect(await idleChild(pool)).not.toBe(pid);
  });

  test("a child that dies while idle is replaced at once, before any job asks", async () => {
    const { pool, events } = makePool();
    const { dir, pdf } = setup();
    expect((await pool.process(pdf, testOptions(dir), { ...LIMITS, testFault: "exit-after-reply" })).facts.pages).toBe(2);
    const dead = (events.find((e) => e.type === "started") as Extract<PoolEvent, { type: "started" }>).pid;
    await expect.poll(() => events.some((e) => e.type === "crashed")).toBe(true);
    expect(events.find((e) => e.type === "crashed")).toEqual({ type: "crashed", pid: dead, how: "exit code 0", busy: false, stderr: "" });
    const fresh = await idleChild(pool);
    expect(fresh).not.toBe(dead);
    await works(pool);
    expect(await idleChild(pool)).toBe(fresh);
  });

  test("warm() starts the pool's size at once; close() ends every child", async () => {
    const { pool } = makePool({ size: 2 });
    pool.warm();
    await expect.poll(() => pool.snapshot().map((c) => c.state)).toEqual(["idle", "idle"]);
    const all = pids(pool);
    await pool.close();
    expect(all.filter(alive)).toEqual([]);
    expect(pool.snapshot()).toEqual([]);
    const err = await refused(works(pool));
    expect([err.reason, err.message]).toEqual(["processing_crashed", "processor pool is closed"]);
  });
});

describe("start-up failures", () => {
  test("a child that exits at start fails one waiting job each (processing_crashed naming why), never loops", async () => {
    const { pool, events } = makePool({}, { startFault: "exit-start" });
    const err = await refused(works(pool));
    expect([err.reason, err.message]).toEqual(["processing_crashed", "processor child exited during start-up (exit code 4)"]);
    expect(events).toEqual([{ type: "start_failed", detail: "processor child exited during start-up (exit code 4)" }]);
    expect(pool.snapshot()).toEqual([]);
  });

  test("a child that hangs at start is killed after the start-up timeout and fails the job", async () => {
    const { pool } = makePool({}, { startFault: "hang-start", startupTimeoutMs: 1000 });
    const err = await refused(works(pool));
    expect([err.reason, err.message]).toEqual(["processing_crashed", "processor child did not become ready within 1000 ms"]);
  });
});

describe("hardening (issue 11 item 6): environment and argv", () => {
  test("a child's environment is the allowlist only: no token, no webhook secret, nothing else of the bot's", async () => {
    const saved = { ...process.env };
    Object.assign(process.env, { BOT_TOKEN: "123456789:AAEchildEnvMustNotSeeThisToken_x", WEBHOOK_SECRET: "hook-secret-for-env-test", DATA_DIR: "/var/lib/docket" });
    try {
      const { pool } = makePool();
      await works(pool);
      const pid = await idleChild(pool);
      const environ = readFileSync(`/proc/${pid}/environ`, "utf8");
      const keys = environ.split("\0").filter(Boolean).map((kv) => kv.slice(0, kv.indexOf("=")));
      // Bun adds the IPC channel's own two variables (its file descriptor and serialization).
      expect(keys.filter((k) => !CHILD_ENV_KEYS.includes(k)).sort()).toEqual(["NODE_CHANNEL_FD", "NODE_CHANNEL_SERIALIZATION_MODE"]);
      expect(keys).toContain("PATH");
      expect(environ).not.toContain("AAEchildEnvMustNotSeeThisToken");
      expect(environ).not.toContain("hook-secret-for-env-test");
    } finally {
      for (const k of ["BOT_TOKEN", "WEBHOOK_SECRET", "DATA_DIR"]) if (saved[k] === undefined) delete process.env[k];
      Object.assign(process.env, saved);
    }
  });

  test("the request goes over IPC: argv is the entry script only; a 300 000-character name (over E2BIG's 128 KiB) works", async () => {
    const { pool } = makePool();
    const { dir, pdf } = setup();
    const name = `${"Квартальный отчёт ".repeat(16_667).slice(0, 300_000)}.pdf`;
    const { outputs } = await pool.process(pdf, testOptions(dir, name), LIMITS);
    expect(outputs.map((o) => o.fileName)).toEqual([`${Array.from(name).slice(0, 64).join("").trim()}.txt`, `${Array.from(name).slice(0, 64).join("").trim()}-page1.jpg`]);
    const pid = await idleChild(pool);
    const entry = fileURLToPath(new URL("../../processors/pool/child-main.ts", import.meta.url));
    expect(readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean)).toEqual([process.execPath, entry]);
  });
});

test("the children exit when the bot process dies (SIGKILL): none is left behind", async () => {
  const parent = Bun.spawn([process.execPath, join(import.meta.dirname, "support/pool-parent.ts")], { stdout: "pipe", stderr: "inherit" });
  let out = "";
  for await (const chunk of parent.stdout) {
    out += new TextDecoder().decode(chunk);
    if (out.includes("\n")) break;
  }
  const pid = Number(/^child (\d+)$/m.exec(out)?.[1]);
  expect(alive(pid)).toBe(true);
  parent.kill("SIGKILL");
  await parent.exited;
  await expect.poll(() => alive(pid)).toBe(false);
});

test("residentBytes and peakResidentBytes read this process's RSS and its peak, and null for a gone pid", async () => {
  const rss = (await residentBytes(process.pid))!;
  expect(rss).toBeGreaterThan(10 * 2 ** 20);
  expect(await peakResidentBytes(process.pid)).toBeGreaterThanOrEqual(rss);
  expect(await residentBytes(2 ** 22 + 12345)).toBeNull();
  expect(await peakResidentBytes(2 ** 22 + 12345)).toBeNull();
  expect(await treeResidentBytes(2 ** 22 + 12345)).toBeNull();
});

test("treeResidentBytes adds every descendant: a shell, its child and grandchild (all asleep, so their RSS holds still)", async () => {
  const sh = Bun.spawn(["sh", "-c", "sh -c 'sleep 600; :' & sleep 600; :"], { stdio: ["ignore", "ignore", "ignore"], detached: true });
  try {
    const kids = (pid: number): number[] =>
      readdirSync(`/proc/${pid}/task`).flatMap((t) => readFileSync(`/proc/${pid}/task/${t}/children`, "utf8").split(" ").filter(Boolean).map(Number));
    const descendants = (): number[] => kids(sh.pid).flatMap((k) => [k, ...kids(k)]);
    // Asleep, not just there: a child that has forked but not yet exec'd `sleep`, or is still being
    // loaded (state R or D), changes its RSS between two reads. `comm` and the state from /proc/<pid>/stat.
    const asleep = (pid: number): string => {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      return `${stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"))}:${stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)}`;
    };
    await expect.poll(() => [sh.pid, ...descendants()].map(asleep).sort()).toEqual(["sh:S", "sh:S", "sleep:S", "sleep:S"]);
    const tree = [sh.pid, ...descendants()];
    const sum = (await Promise.all(tree.map(residentBytes))).reduce<number>((a, b) => a + b!, 0);
    expect(await treeResidentBytes(sh.pid)).toBe(sum);
    expect(sum).toBeGreaterThan((await residentBytes(sh.pid))!);
  } finally {
    process.kill(-sh.pid, "SIGKILL"); // its own process group: the shells and sleeps it started
  }
});

test.skipIf(!haveFixtures)("every MANIFEST.tsv row has its expected outcome through the pool too", async () => {
  const rows = readManifest(join(fixturesDir, "MANIFEST.tsv"));
  const failures: string[] = [];
  await Promise.all(
    rows.map(async (row) => {
      const { dir } = setup();
      const got = await testPool()
        .process(join(fixturesDir, row.file), testOptions(dir, row.declaredName), LIMITS)
        .then(
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
    }),
  );
  expect(failures).toEqual([]);
  expect(rows.length).toBe(36);
}, 180_000);
