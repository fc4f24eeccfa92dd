/**
 * Chat commands end to end (issue 4 §8, §11): /status, /jobs, /resend (stored
 * file_id, no download, no processing), /delete (files erased now, row kept as
 * expired), /cancel (a running processor is stopped, files removed, `failed` /
 * `cancelled`), per-user fairness limits, and same-SHA-256 reuse.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import type { ProcessRunner } from "../../bot/worker/types.ts";
import { ProcessingError } from "../../processors/types.ts";
import { copyRunner } from "../support/copy-runner.ts";
import { startStack, type Stack } from "../support/stack.ts";

let stack: Stack | null = null;
afterEach(async () => {
  await stack?.stop();
  stack = null;
});
const bytes = (n: number, seed = 7) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 255);

async function ready(s: Stack, u: ReturnType<Stack["em"]["user"]>, data: Uint8Array, name: string) {
  const sent = await u.sendDocument({ bytes: data, file_name: name });
  return s.waitJob((await s.jobFor(u.chatId, sent.message_id)).id);
}

describe("commands", () => {
  test("/status N and /jobs describe this chat's jobs only", async () => {
    stack = await startStack({ runner: copyRunner() });
    const u = stack.em.user({ language_code: "en" });
    const other = stack.em.user({ language_code: "en" });
    const job = await ready(stack, u, bytes(100), "report.bin");
    await u.sendText(`/status ${job.id}`);
    await u.waitFor((m) => m.some((x) => x.text === `#${job.id} · report.bin · ready`));
    await u.sendText("/jobs");
    await u.waitFor((m) => m.some((x) => x.text?.startsWith("Your latest jobs:\n#")));
    await other.sendText(`/status ${job.id}`);
    await other.waitFor((m) => m.some((x) => x.text === `Job #${job.id} was not found in this chat.`));
    await u.sendText("/status x");
    await u.waitFor((m) => m.some((x) => x.text === "Give a job number, e.g. /status 12"));
  });

  test("/resend N sends the stored file_id: no getFile, no processing", async () => {
    const runner = copyRunner();
    stack = await startStack({ runner });
    const u = stack.em.user({ language_code: "ru" });
    const job = await ready(stack, u, bytes(100), "a.bin");
    const getFiles = stack.em.count("getFile");
    const docsBefore = u.messages().filter((m) => m.document).length;
    await u.sendText(`/resend ${job.id}`);
    await u.waitFor((m) => m.filter((x) => x.document).length === docsBefore + 1);
    const last = stack.em.calls.filter((c) => c.method === "sendDocument").at(-1)!;
    expect(typeof last.params.document).toBe("string");
    expect(stack.em.count("getFile")).toBe(getFiles);
    expect(runner.calls).toBe(1);
  });

  test("/delete N erases source and result now and keeps the row as expired", async () => {
    stack = await startStack({ runner: copyRunner() });
    const u = stack.em.user({ language_code: "en" });
    const job = await ready(stack, u, bytes(100), "d.bin");
    const resultsDir = join(stack.config.dataDir, "results");
    expect(readdirSync(resultsDir).some((n) => n.startsWith(`${job.id}-`))).toBe(true);
    await u.sendText(`/delete ${job.id}`);
    await u.waitFor((m) => m.some((x) => x.text === `Job #${job.id}: source and result deleted.`));
    expect((await stack.app.services.store.get(job.id))?.status).toBe("expired");
    expect(readdirSync(resultsDir).some((n) => n.startsWith(`${job.id}-`))).toBe(false);
    await u.sendText(`/resend ${job.id}`);
    await u.waitFor((m) => m.some((x) => x.text === `Job #${job.id} is “expired”, there is nothing to send.`));
  });

  test("/cancel N stops a running processor, removes files, ends failed/cancelled", async () => {
    let aborted = false;
    const hanging: ProcessRunner = (_input, _options, limits) =>
      new Promise((_, reject) => {
        const stop = () => {
          aborted = true;
          reject(new ProcessingError("cancelled", {}, "aborted"));
        };
        if (limits.signal?.aborted) stop();
        limits.signal?.addEventListener("abort", stop);
      });
    stack = await startStack({ runner: hanging });
    const u = stack.em.user({ language_code: "en" });
    const sent = await u.sendDocument({ bytes: bytes(5000), file_name: "slow.bin" });
    const { id } = await stack.jobFor(u.chatId, sent.message_id);
    await stack.waitJob(id, ["processing"]);
    await u.sendText(`/cancel ${id}`);
    await u.waitFor((m) => m.some((x) => x.text === `Job #${id} cancelled.`));
    const job = await stack.waitJob(id, ["failed"]);
    expect(job.reason).toBe("cancelled");
    expect(aborted).toBe(true);
    for (const dir of ["downloads", "work", "results"]) {
      expect(readdirSync(join(stack.config.dataDir, dir)).filter((n) => n.startsWith(`${id}-`))).toEqual([]);
    }
    await u.sendText(`/cancel ${id}`);
    await u.waitFor((m) => m.some((x) => x.text === `Job #${id} has already ended (failed); nothing to cancel.`));
    // Counted once as ended: the aborted processor's own failure finds the job already failed.
    const metrics = await stack.app.services.metrics.registry.metrics();
    expect(metrics).toContain('docket_jobs_ended_total{status="failed",reason="cancelled"} 1');
    expect(metrics).not.toContain('reason="processing_crashed"');
  });

  test("/cancel right after the move to processing (before the work dir exists): no file left behind, the chat's last word is 'cancelled'", async () => {
    const runner = copyRunner();
    stack = await startStack({ runner });
    const s = stack;
    const { store } = s.app.services;
    // Land the cancel in the narrowest window: just after `processing` was committed — by the download's
    // hand-over (a processing slot is free) or by a processing claim — before the step has its job.
    const handOver = store.handOver.bind(store);
    store.handOver = async (...args) => {
      const claim = await handOver(...args);
      if (claim) await s.app.engine.cancel(claim.job.id);
      return claim;
    };
    const claimProcess = store.claimProcess.bind(store);
    store.claimProcess = async (...args) => {
      const claim = await claimProcess(...args);
      if (claim) await s.app.engine.cancel(claim.job.id);
      return claim;
    };
    const u = s.em.user({ language_code: "en" });
    const sent = await u.sendDocument({ bytes: bytes(4000, 21), file_name: "race.bin" });
    const { id } = await s.jobFor(u.chatId, sent.message_id);
    const job = await s.waitJob(id, ["failed"]);
    expect(job.reason).toBe("cancelled");
    const leftovers = () => ["downloads", "work", "results"].flatMap((d) => readdirSync(join(s.config.dataDir, d)).filter((n) => n.startsWith(`${id}-`)));
    await expect.poll(leftovers).toEqual([]);
    await expect.poll(() => s.logs.some((l) => l.includes(`"job":${id},`) && l.includes('"msg":"processing stopped"'))).toBe(true); // the step has returned
    expect(leftovers()).toEqual([]);
    expect(s.em.calls.filter((c) => c.method === "sendDocument" && c.ok)).toEqual([]);
    const status = await u.waitFor((m) => m.some((x) => x.text === `Job #${id} failed: Cancelled.`));
    await Bun.sleep(1500); // a late "processing…" edit would land within the chat's 1 s interval
    expect(u.messages().find((x) => x.message_id === status.find((m) => m.text?.startsWith(`Job #${id} failed`))!.message_id)!.text).toBe(`Job #${id} failed: Cancelled.`);
  });

  test("per-user limit on jobs in flight is answered clearly, not queued silently", async () => {
    const hanging: ProcessRunner = (_i, _o, limits) => new Promise((_, reject) => limits.signal?.addEventListener("abort", () => reject(new Error("stop"))));
    stack = await startStack({ runner: hanging, env: { USER_MAX_JOBS_IN_FLIGHT: "2" } });
    const u = stack.em.user({ language_code: "en" });
    await u.sendDocument({ bytes: bytes(100, 1), file_name: "1.bin" });
    await u.sendDocument({ bytes: bytes(100, 2), file_name: "2.bin" });
    await u.sendDocument({ bytes: bytes(100, 3), file_name: "3.bin" });
    await u.waitFor((m) => m.some((x) => x.text === "You already have 2 files in progress (limit 2). Send this one when some of them are done."), 10_000);
    expect(await stack.app.services.store.listByChat(u.chatId, 10)).toHaveLength(2);
  });

  test("same SHA-256 as a live result in the chat: reused without processing or upload (seed 000)", async () => {
    const runner = copyRunner();
    stack = await startStack({ runner });
    const u = stack.em.user({ language_code: "en" });
    const data = bytes(3000, 9);
    const first = await ready(stack, u, data, "one.bin");
    // Another upload of the same bytes: Telegram would give it a fresh file_id (and, e.g. after an edit
    // of metadata, another file_unique_id). The emulator issues the fresh file_id on a re-send.
    const again = await u.sendDocument({ bytes: data, file_name: "one again.bin" });
    await u.waitFor((m) => m.some((x) => x.text?.includes("already processed")));
    const uploadsBefore = stack.em.calls.filter((c) => c.method === "sendDocument" && typeof c.params.document !== "string").length;
    const { job } = await stack.app.services.store.accept(
      { updateId: again.update_id, chatId: u.chatId, userId: u.id, messageId: again.message_id, source: "document", fileId: again.file_id!, fileUniqueId: "another-unique-id", declaredName: "copy.bin", declaredMime: null, declaredSize: data.length, languageCode: "en" },
      Date.now(),
    );
    stack.app.engine.wake();
    const second = await stack.waitJob(job.id);
    expect(second.status).toBe("ready");
    expect(second.sha256).toBe(first.sha256);
    expect(runner.calls).toBe(1);
    expect(second.resultExpiresAt).toBe(first.resultExpiresAt);
    const uploadsAfter = stack.em.calls.filter((c) => c.method === "sendDocument" && typeof c.params.document !== "string").length;
    expect(uploadsAfter).toBe(uploadsBefore);
    // Each result is recorded with the file_id of the document Telegram sent for this job.
    const docs = (await u.waitFor((m) => m.filter((x) => x.document).length >= 2)).filter((x) => x.document);
    const ids = (await stack.app.services.store.results(second.id)).map((r) => r.telegramFileId);
    expect(ids).toEqual([docs.at(-1)!.document!.file_id]);
    expect(docs.at(-1)!.document!.file_unique_id).toBe(docs[0]!.document!.file_unique_id);
  });
});

describe("same-SHA-256 reuse when the re-send fails (never 'Done' without the document)", () => {
  /** A finished job, then a second job of the same bytes in the same chat (another file_unique_id). */
  async function twinSetup(s: Stack) {
    const u = s.em.user({ language_code: "en" });
    const data = bytes(3000, 11);
    const first = await ready(s, u, data, "one.bin");
    await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done`)));
    const docsBefore = u.messages().filter((m) => m.document).length;
    return {
      u,
      first,
      docsBefore,
      second: async () => {
        const { job } = await s.app.services.store.accept(
          { updateId: 900_001, chatId: u.chatId, userId: u.id, messageId: first.messageId, source: "document", fileId: first.fileId, fileUniqueId: "another-unique-id", declaredName: "copy.bin", declaredMime: null, declaredSize: data.length, languageCode: "en" },
          Date.now(),
        );
        s.app.engine.wake();
        return s.waitJob(job.id);
      },
    };
  }

  test("the stored file_id is refused (400): the file is processed and uploaded instead, then 'Done'", async () => {
    const runner = copyRunner();
    stack = await startStack({ runner });
    const t = await twinSetup(stack);
    stack.em.failNext("sendDocument", { error_code: 400, description: "Bad Request: wrong file identifier/HTTP URL specified" }, { chatId: t.u.chatId });
    const second = await t.second();
    expect(second.status).toBe("ready");
    expect(runner.calls).toBe(2); // processed again, not answered from the refused file_id
    const msgs = await t.u.waitFor((m) => m.filter((x) => x.document).length > t.docsBefore);
    expect(msgs.filter((x) => x.document).length).toBe(t.docsBefore + 1);
    expect((await stack.app.services.store.results(second.id)).every((r) => r.telegramFileId)).toBe(true);
  });

  test("the re-send is refused for good (403): failed/delivery_failed, no result recorded as sent, never 'Done'", async () => {
    const runner = copyRunner();
    stack = await startStack({ runner });
    const t = await twinSetup(stack);
    stack.em.failNext("sendDocument", { error_code: 403, description: "Forbidden: bot was blocked by the user" }, { chatId: t.u.chatId });
    const second = await t.second();
    expect([second.status, second.reason]).toEqual(["failed", "delivery_failed"]);
    expect((await stack.app.services.store.results(second.id)).filter((r) => r.telegramFileId)).toEqual([]);
    await Bun.sleep(300); // the final status message would have been sent by now
    expect(t.u.messages().filter((m) => m.text?.startsWith(`Done, job #${second.id}`))).toEqual([]);
    expect(t.u.messages().some((m) => m.text?.startsWith(`Done, job #${t.first.id}`))).toBe(true); // the filter does match a real "Done"
    expect(t.u.messages().filter((x) => x.document).length).toBe(t.docsBefore);
  });

  test("the re-send meets 429 four times: each holds the chat (no call to it during the hold), the same file_id goes again, ready in 1 attempt", async () => {
    const runner = copyRunner();
    stack = await startStack({ runner });
    const t = await twinSetup(stack);
    // The outbox's client has no auto-retry: it sees every 429 itself, holds the chat for retry_after
    // and sends the same document again after the hold (a 429 is never an attempt).
    stack.em.failNext("sendDocument", { error_code: 429, description: "Too Many Requests: retry after 1", retry_after: 1 }, { chatId: t.u.chatId, times: 4 });
    const since = stack.em.calls.length;
    const second = await t.second();
    expect([second.status, second.attempts]).toEqual(["ready", 1]);
    expect(runner.calls).toBe(1); // answered from the twin, not processed
    const msgs = await t.u.waitFor((m) => m.filter((x) => x.document).length > t.docsBefore);
    expect(msgs.filter((x) => x.document).length).toBe(t.docsBefore + 1);
    const chatCalls = stack.em.calls.slice(since).filter((c) => c.chatId === t.u.chatId);
    const held = chatCalls.filter((c) => c.status === 429);
    expect(held.map((c) => c.method)).toEqual(["sendDocument", "sendDocument", "sendDocument", "sendDocument"]);
    for (const h of held) expect(chatCalls.filter((c) => c.at > h.at && c.at < h.at + 1000).map((c) => c.method)).toEqual([]);
    expect(stack.logs.filter((l) => l.includes('"chat hold after 429"'))).toHaveLength(4);
    // Every 429 began a new hold (the previous one was over): counted once each.
    const holds = Number(/docket_chat_holds_total (\d+)/.exec(await stack.app.services.metrics.registry.metrics())?.[1]);
    expect(holds).toBe(4);
  }, 30_000);
});

describe("repeats after ready (seed 000: a repeat is a harmless skip)", () => {
  test("a redelivered update (same update_id) after ready: answered the first time, so no second reply and no result again", async () => {
    stack = await startStack({ runner: copyRunner() });
    const u = stack.em.user({ language_code: "en" });
    const sent = await u.sendDocument({ bytes: bytes(2000, 5), file_name: "r.bin" });
    const job = await stack.waitJob((await stack.jobFor(u.chatId, sent.message_id)).id);
    await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${job.id}`)));
    const uploads = () => stack!.em.calls.filter((c) => c.method === "sendDocument" && c.ok).length;
    const before = uploads();
    const messages = u.messages().length;
    stack.em.redeliver(sent.update_id); // the bot stopped before confirming it
    await expect.poll(() => stack!.logs.some((l) => l.includes("redelivered update: answered when it was first handled"))).toBe(true);
    await Bun.sleep(300);
    expect(u.messages().filter((x) => x.document)).toHaveLength(1);
    expect(u.messages()).toHaveLength(messages);
    expect(uploads()).toBe(before);
  });

  test("a ready result past RESULT_TTL not yet swept: /status says expired, /resend has nothing, the re-sent file runs again", async () => {
    stack = await startStack({ runner: copyRunner(), env: { RESULT_TTL: "2s", JANITOR_INTERVAL: "1h" } });
    const u = stack.em.user({ language_code: "en" });
    const data = bytes(2500, 3);
    const job = await ready(stack, u, data, "ttl.bin");
    await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${job.id}`)));
    await Bun.sleep(Date.parse(job.resultExpiresAt!) - Date.now() + 50);
    expect((await stack.app.services.store.get(job.id))?.status).toBe("ready"); // no janitor pass yet
    await u.sendText(`/status ${job.id}`);
    await u.waitFor((m) => m.some((x) => x.text === `#${job.id} · ttl.bin · expired`));
    await u.sendText(`/resend ${job.id}`);
    await u.waitFor((m) => m.some((x) => x.text === `Job #${job.id} is “expired”, there is nothing to send.`));
    const again = await u.sendDocument({ bytes: data, file_name: "ttl.bin" });
    const { store } = stack.app.services;
    await expect.poll(async () => (await store.get(job.id))?.updateId, { timeout: 5000 }).toBe(again.update_id); // re-armed
    const rerun = await stack.waitJob(job.id);
    expect(rerun.status).toBe("ready");
    const docs = (await u.waitFor((m) => m.filter((x) => x.document).length >= 2)).filter((x) => x.document);
    expect(docs).toHaveLength(2); // the result was made and sent again
  }, 30_000);
});

describe("/settings (issue 5 §6)", () => {
  test("choosing 'pages' makes the same PDF processable again, as a ZIP of page images", async () => {
    stack = await startStack();
    const u = stack.em.user({ language_code: "en" });
    const { makePdf } = await import("../../scripts/samples/index.ts");
    const pdf = await makePdf({ pages: [["One"], ["Two"], ["Three"]] });
    const first = await ready(stack, u, pdf, "three.pdf");
    expect(first.variant).toBe("default");
    await u.sendText("/settings");
    // The /settings menu, not the Done message's own action keyboard (issue 15), which also has buttons.
    const isSettings = (x: { reply_markup?: unknown }) =>
      ((x.reply_markup as { inline_keyboard?: Array<Array<{ callback_data?: string }>> } | undefined)?.inline_keyboard ?? []).flat().some((b) => b.callback_data?.startsWith("settings:"));
    const [menu] = (await u.waitFor((m) => m.some(isSettings))).filter(isSettings);
    const buttons = (menu!.reply_markup as { inline_keyboard: Array<Array<{ text: string; callback_data: string }>> }).inline_keyboard.flat();
    expect(buttons.map((b) => b.text)).toEqual(["✅ Text (scanned pages recognized) and a page-1 preview", "Every page as an image (ZIP)", "Searchable PDF: the scan with a text layer you can search and copy"]);
    await u.pressButton(menu!.message_id, "settings:pdf:pages");
    await u.waitFor((m) => (m.find((x) => x.message_id === menu!.message_id)?.reply_markup as { inline_keyboard: Array<Array<{ text: string }>> })?.inline_keyboard[1]?.[0]?.text.startsWith("✅") ?? false);
    const second = await ready(stack, u, pdf, "three.pdf");
    expect(second.id).not.toBe(first.id);
    expect(second.variant).toBe("pages");
    const results = await stack.app.services.store.results(second.id);
    expect(results.map((r) => [r.fileName, r.mime])).toContainEqual([expect.stringMatching(/\.zip$/), "application/zip"]);
    const zip = stack.em.uploaded(results.find((r) => r.mime === "application/zip")!.telegramFileId!)!;
    const { unzipSync } = await import("fflate");
    expect(Object.keys(unzipSync(zip)).length).toBe(3);
    // the same file again with the same setting is the same job
    await u.sendDocument({ bytes: pdf, file_name: "three.pdf" });
    await u.waitFor((m) => m.some((x) => x.text?.includes(`already processed (job #${second.id})`)));
  });
});
