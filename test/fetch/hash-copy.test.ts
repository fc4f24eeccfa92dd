/**
 * `writeStreamed` (bot/fetch/hash-copy.ts) when the download stops half-way: a write may still be in
 * flight when the `.part` stream is destroyed (a /cancel or /delete aborts the body, a limit check
 * throws), and a write may fail (a full disk). Each must end the download with its own error and the
 * `.part` gone — never as an uncaught ERR_STREAM_DESTROYED / ENOSPC that takes the whole bot down
 * (seen as Vitest's "Unhandled Error" after hostile-2's /cancel and /delete tests).
 *
 * Each case runs in its own bun process, as the bot does: the process must exit by itself (exit 0,
 * every pending write's callback run) and print what writeStreamed answered; an uncaught stream error
 * would kill it instead (exit 1, the error on stderr).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";

const module = resolve(import.meta.dirname, "../../bot/fetch/hash-copy.ts");

/** The child: one scenario, then it prints `{ error, code, left }` and lets the event loop run dry. */
const script = `
import { existsSync, readdirSync, statSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { writeStreamed, WriteAborted, partPath } from ${JSON.stringify(module)};
const [dir, scenario] = process.argv.slice(2);
const dest = join(dir, "7-00000000000000aa");
const chunk = new Uint8Array(4096).fill(7);
/** Until the first chunk is on disk: the stream is open, so the next write goes out at once. */
async function onDisk(bytes) {
  while (!existsSync(partPath(dest)) || statSync(partPath(dest)).size < bytes) await new Promise((r) => setTimeout(r, 2));
}
async function* source() {
  if (scenario === "full") {
    // one chunk per turn of the event loop, so each write's failure comes between two chunks
    for (;;) {
      yield chunk;
      await new Promise((r) => setImmediate(r));
    }
  }
  yield chunk;
  await onDisk(chunk.length);
  yield chunk; // written (in flight) — and the very next step destroys the stream
  if (scenario === "abort") throw new DOMException("The operation was aborted.", "AbortError");
  yield chunk;
  yield chunk;
}
const checks = scenario === "limit" ? { check: (total) => { if (total > 2 * chunk.length) throw new WriteAborted("over the limit"); } } : {};
if (scenario === "full") symlinkSync("/dev/full", partPath(dest)); // every write fails with ENOSPC
let out;
try {
  const r = await writeStreamed(source(), dest, checks);
  out = { error: null, size: r.size };
} catch (err) {
  out = { error: err.name, code: err.code ?? null, message: err.message };
}
out.left = readdirSync(dir);
console.log(JSON.stringify(out));
`;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "docket-hash-copy-"));
  writeFileSync(join(dir, "child.mjs"), script);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Runs one scenario in its own process; its exit code, its one printed answer and its stderr. */
function run(scenario: "abort" | "limit" | "full") {
  const work = join(dir, "work");
  const proc = Bun.spawnSync([process.execPath, join(dir, "child.mjs"), work, scenario], { stdout: "pipe", stderr: "pipe", cwd: dir, timeout: 30_000, env: { ...process.env, NODE_OPTIONS: "" } });
  return { exit: proc.exitCode, answer: proc.stdout.toString().trim(), stderr: proc.stderr.toString() };
}

describe("writeStreamed stopped with a write in flight", () => {
  beforeEach(() => {
    Bun.spawnSync(["mkdir", join(dir, "work")]);
  });

  test("the body aborts (/cancel, /delete) right after a write: the abort is the error, no .part left, the process lives on", () => {
    const r = run("abort");
    expect([r.exit, r.answer], r.stderr).toEqual([0, JSON.stringify({ error: "AbortError", code: 20, message: "The operation was aborted.", left: [] })]);
    expect(r.stderr).not.toContain("ERR_STREAM_DESTROYED");
  });

  test("a limit check throws right after a write: WriteAborted is the error, no .part left, the process lives on", () => {
    const r = run("limit");
    expect([r.exit, r.answer], r.stderr).toEqual([0, JSON.stringify({ error: "Error", code: null, message: "over the limit", left: [] })]);
    expect(r.stderr).not.toContain("ERR_STREAM_DESTROYED");
  });

  test("every write fails (ENOSPC): the write error is the download's error, no .part left, the process lives on", () => {
    const r = run("full");
    expect(r.exit, r.stderr).toBe(0);
    expect(JSON.parse(r.answer)).toMatchObject({ code: "ENOSPC", left: [] });
  });
});
