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
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { diskCheck, healthApi, startOpsServer } from "../../bot/ops/http.ts";
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
  test("/healthz in local mode: the data disk must hold twice the budget when the server's dir is on it", async () => {
    stack = await startStack({ runner: copyRunner(), emulator: { mode: "local" } });
    const { app, config } = stack;
    // A missing server dir is named (the container creates it; the emulator only at the first getFile).
    const missing = await diskCheck([{ name: "bot-api", path: config.localBotApiDir, need: 1 }]);
    expect(missing).toEqual({ ok: false, detail: `bot-api: ${config.localBotApiDir}: ENOENT` });
    mkdirSync(config.localBotApiDir, { recursive: true });
    const s = statfsSync(config.dataDir);
    // More than half of the free space: enough for docket's own writes, not for the server's files beside them.
    const budget = Math.floor(s.bavail * s.bsize * 0.6);
    const deps = { sqlite: app.db.sqlite, api: healthApi(config.token, config.apiRoot), dataDir: config.dataDir, budget };
    for (const [botApiDir, ok] of [[undefined, true], [config.localBotApiDir, false]] as const) {
      const server = startOpsServer(0, { ...deps, ...(botApiDir ? { botApiDir } : {}) }, app.services.metrics, app.services.log);
      try {
        const body = await (await fetch(`http://127.0.0.1:${server.port}/healthz`)).json();
        expect(body.checks.disk.ok).toBe(ok);
        expect(body.checks.disk.detail).toMatch(botApiDir ? /^data \+ bot-api: \d+ MB free, needs \d+ MB$/ : /^data: \d+ MB free, needs \d+ MB$/);
      } finally {
        await server.stop(true);
      }
    }
  });

  test("a server's dir on another file system is checked on its own", async () => {
    const shm = mkdtempSync(join("/dev/shm", "docket-disk-"));
    const data = mkdtempSync(join(process.env.TMPDIR ?? "/tmp", "docket-disk-"));
    try {
      const c = await diskCheck([
        { name: "data", path: data, need: 1 },
        { name: "bot-api", path: shm, need: Number.MAX_SAFE_INTEGER },
      ]);
      expect(c.ok).toBe(false);
      expect(c.detail).toMatch(/^data: \d+ MB free, needs 0 MB; bot-api: \d+ MB free, needs \d+ MB$/);
    } finally {
      rmSync(shm, { recursive: true, force: true });
      rmSync(data, { recursive: true, force: true });
    }
  });
});
