/**
 * BR-04 (b) when the configuration forbids deleting a webhook (DELETE_WEBHOOK_ON_START=false):
 * the real `bun bot/main.ts` exits non-zero with "another process is polling with this token",
 * leaves the webhook alone and does not loop on getUpdates (field-cases.md BR-04; audit 000 T3).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "vitest";
import { ANOTHER_POLLER } from "../../bot/intake/poll-conflicts.ts";
import { REPO_ROOT, botEnv } from "../../scripts/demo/bot-process.ts";
import { startEmulator } from "../emulator/index.ts";
import { rawCall } from "../emulator/raw-call.ts";

test("a webhook is set and DELETE_WEBHOOK_ON_START=false: exit 1 naming another poller, webhook kept", async () => {
  const em = await startEmulator({ rateLimits: false, allowHttpWebhook: true });
  const dir = mkdtempSync(join(tmpdir(), "docket-conflict-exit-"));
  try {
    expect((await rawCall(em, "setWebhook", { url: "http://127.0.0.1:9/hook" })).body.ok).toBe(true);
    // async spawn: the emulator serves from this process
    const p = Bun.spawn(["bun", "--no-env-file", "bot/main.ts"], { cwd: REPO_ROOT, env: botEnv(em, dir, { DELETE_WEBHOOK_ON_START: "false", LOG_LEVEL: "info" }), stdout: "pipe", stderr: "pipe" });
    const killer = setTimeout(() => p.kill("SIGKILL"), 25_000);
    const code = await p.exited;
    clearTimeout(killer);
    const out = await new Response(p.stdout).text();
    expect(code).toBe(1);
    const fatal = out
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { level: number; msg: string; err?: { message?: string } })
      .find((l) => l.level === 60);
    expect(fatal?.msg).toBe("long polling stopped");
    expect(fatal?.err?.message).toContain(ANOTHER_POLLER);
    expect(em.count("deleteWebhook")).toBe(0);
    expect(em.count("getUpdates")).toBe(1);
    expect((await rawCall(em, "getWebhookInfo")).body.result).toMatchObject({ url: "http://127.0.0.1:9/hook" });
  } finally {
    await em.close();
    rmSync(dir, { recursive: true, force: true });
  }
}, 30_000);
