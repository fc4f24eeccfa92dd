/**
 * The byte budget counts what docket writes (issue 16): in local mode the source is the server's file,
 * read in place and never docket's to delete, so it is not reserved; the work and result bytes are.
 * The same 10 MiB file with BUDGET_MULTIPLIER 2.5 reserves 25 MiB in cloud mode (source + 1.5 × for
 * work and results) and 15 MiB in local mode, from the claim to the end. The bot runs in this
 * process (root); a processing runner that waits holds the job while the row is read.
 * The free-space check covers the server's dir too: DOWNLOAD_BUDGET on each file system, twice
 * that when the server's dir is on the data disk.
 */
import { mkdirSync, mkdtempSync, rmSync, statfsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { diskCheck } from "../../bot/ops/readiness.ts";
import type { ProcessRunner } from "../../bot/worker/types.ts";
import { copyRunner } from "../support/copy-runner.ts";
import { startStack, type Stack } from "../support/stack.ts";

const MiB = 1 << 20;
let stack: Stack | null = null;
afterEach(async () => {
  await stack?.stop();
  stack = null;
});

/** A copying runner that first waits until `open()` is called. */
function gatedRunner(): { runner: ProcessRunner; open: () => void } {
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const copy = copyRunner();
  return { runner: async (...args) => (await gate, copy(...args)), open };
}

describe("the byte budget counts what docket writes", () => {
  for (const [mode, reserved] of [["cloud", 25 * MiB], ["local", 15 * MiB]] as const) {
    test(`${mode} mode: a 10 MiB file reserves ${reserved / MiB} MiB while processing, 0 after ready`, async () => {
      const gate = gatedRunner();
      stack = await startStack({
        runner: gate.runner,
        emulator: { mode },
        env: { BUDGET_MULTIPLIER: "2.5", BUDGET_MIN_RESERVATION: "1MB", DOWNLOAD_BUDGET: "100MB", DOWNLOAD_LIMIT_CLOUD: "20MB" },
      });
      const u = stack.em.user({ language_code: "en" });
      const sent = await u.sendDocument({ bytes: new Uint8Array(10 * MiB).fill(3), file_name: "ten.bin" });
      const job = await stack.waitJob((await stack.jobFor(u.chatId, sent.message_id)).id, ["processing"]);
      expect(job.reservedBytes).toBe(reserved);
      gate.open();
      expect((await stack.waitJob(job.id)).status).toBe("ready");
      await expect.poll(async () => (await stack!.app.services.store.get(job.id))!.reservedBytes).toBe(0);
    });
  }
});

describe("the free-space check covers the server's dir", () => {
  const reservedNone = async () => 0;
  test("the server's dir on the data disk: that disk must hold twice the budget", async () => {
    const root = mkdtempSync(join(tmpdir(), "docket-disk-"));
    const botApi = join(root, "bot-api");
    mkdirSync(botApi);
    try {
      const s = statfsSync(root);
      // More than half of the free space: enough for docket's own writes, not for the server's files beside them.
      const budget = Math.floor(s.bavail * s.bsize * 0.6);
      const alone = await diskCheck(root, budget, reservedNone).run(new AbortController().signal);
      expect(alone.ok).toBe(true);
      const both = await diskCheck(root, budget, reservedNone, botApi).run(new AbortController().signal);
      expect(both.ok).toBe(false);
      expect(both.detail).toMatch(new RegExp(`the Bot API server's files \\(${botApi}\\) are on the same disk: \\d+ MB more: needs ${Math.floor((2 * budget) / MiB)} MB free; free disk space or lower DOWNLOAD_BUDGET$`));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test("the server's dir on another file system is checked on its own; a missing one is left to the botApiDir check (one cause, one line)", async () => {
    const shm = mkdtempSync(join("/dev/shm", "docket-disk-"));
    const data = mkdtempSync(join(tmpdir(), "docket-disk-"));
    try {
      const c = await diskCheck(data, Number.MAX_SAFE_INTEGER / 4, async () => Number.MAX_SAFE_INTEGER, shm).run(new AbortController().signal);
      expect(c.ok).toBe(false);
      expect(c.detail).toMatch(new RegExp(`MB free on ${shm} \\(the Bot API server's files\\): needs \\d+ MB free; free disk space or lower DOWNLOAD_BUDGET$`));
      // A missing server dir is the botApiDir check's finding (and its alert, bot_api_dir); the disk check
      // judges the data's disk alone and says why it did not look at the other, never a bare ENOENT.
      const missing = await diskCheck(data, 1, reservedNone, join(shm, "none")).run(new AbortController().signal);
      expect(missing).toEqual({ ok: true, detail: expect.stringMatching(new RegExp(`MB free on ${data}, budget 0 MB \\(0 MB reserved\\); the Bot API server's files \\(${shm}/none\\) could not be looked at \\(see the botApiDir check\\)$`)) });
      const full = await diskCheck(data, Number.MAX_SAFE_INTEGER / 4, reservedNone, join(shm, "none")).run(new AbortController().signal);
      expect([full.ok, full.detail.endsWith("; free disk space or lower DOWNLOAD_BUDGET")]).toEqual([false, true]);
    } finally {
      rmSync(shm, { recursive: true, force: true });
      rmSync(data, { recursive: true, force: true });
    }
  });
});
