/**
 * Hostile and broken `file_path`s of a local Bot API server, end to end (issue 11 item 6, issue 16
 * "bad input and faults"): the real bot process, as the unprivileged bot user in the server's group,
 * against the emulator, which puts a FIFO, a device, a socket, a directory, a symlink out of its dir,
 * a removed file or a file of another size where getFile says the file is.
 * - A FIFO, device, socket or directory is `file_not_readable` at once (fstat on an O_NONBLOCK open).
 *   Two FIFOs used to hold both of Bun's filesystem threads: intake, /cancel and shutdown froze.
 * - A symlink out of LOCAL_BOT_API_DIR is `file_not_readable`, never followed.
 * - A file the server removed before the read gets one fresh getFile and the job goes on (seed 000).
 * - A file longer or shorter than announced is `size_mismatch`, with both sizes in the chat.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { makePdf } from "../../scripts/samples/index.ts";
import type { LocalFileFault } from "../emulator/index.ts";
import { startServiceStack, type ServiceStack } from "../support/service-stack.ts";
import { serviceAccounts } from "../support/service-users.ts";

const accounts = serviceAccounts("hostile local files (test/e2e/local-hostile.test.ts)");

/** The chat's "Job #N failed: …" text for job `id` (waits for it). */
async function failureText(u: ReturnType<ServiceStack["em"]["user"]>, id: number): Promise<string> {
  const msgs = await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Job #${id} failed`)));
  return msgs.find((x) => x.text?.startsWith(`Job #${id} failed`))!.text!;
}

/** The operator line of a refused special file. */
const REFUSED = `"msg":"the local Bot API file is not a regular file (FIFO, device or socket); refusing to read it"`;
const NOT_READABLE = "The bot can’t read this file from its Bot API server. The operator can see why in the log; please try again later.";

describe.skipIf(!accounts)("two FIFOs no longer freeze the bot", () => {
  let s: ServiceStack;
  beforeAll(async () => void (s = await startServiceStack({ accounts })));
  afterAll(async () => await s?.close());

  test("two FIFOs are refused without holding a thread: then /cancel of a download in flight, the next file and SIGTERM all work", async () => {
    const u = s.em.user({ language_code: "en" });
    s.em.faultLocalFile({ kind: "fifo" }, 2);
    const a = await u.sendDocument({ bytes: await makePdf({ pages: [["fifo a"]] }), file_name: "a.pdf" });
    const b = await u.sendDocument({ bytes: await makePdf({ pages: [["fifo b"]] }), file_name: "b.pdf" });
    const [ja, jb] = [await s.jobFor(u.chatId, a.message_id), await s.jobFor(u.chatId, b.message_id)];
    // Both FIFOs are refused before the next file is sent (so the two faults go to them): refused, not held open.
    await expect.poll(() => s.logs.filter((l) => l.includes(REFUSED)).length).toBe(2);
    // The next getFile waits (a server still downloading): a download in flight to /cancel.
    const hold = s.em.holdGetFile();
    const c = await u.sendDocument({ bytes: await makePdf({ pages: [["cancel me"]] }), file_name: "c.pdf" });
    const jc = await s.jobFor(u.chatId, c.message_id);
    await hold.arrived;
    await u.sendText(`/cancel ${jc.id}`);
    await u.waitFor((m) => m.some((x) => x.text === `Job #${jc.id} cancelled.`));
    hold.release();
    expect(await s.waitJob(jc.id)).toMatchObject({ status: "failed", reason: "cancelled" });
    for (const j of [ja, jb]) {
      expect(await s.waitJob(j.id)).toMatchObject({ status: "failed", reason: "file_not_readable", attempts: 1 });
      expect(await failureText(u, j.id)).toBe(`Job #${j.id} failed: ${NOT_READABLE}`);
    }
    const d = await u.sendDocument({ bytes: await makePdf({ pages: [["after fifos: a text layer long enough to need no OCR"]] }), file_name: "d.pdf" });
    expect((await s.waitJob((await s.jobFor(u.chatId, d.message_id)).id)).status).toBe("ready");
    expect(await s.stop()).toBe(0);
    expect(s.logs.some((l) => l.includes('"msg":"stopped"'))).toBe(true);
  });
});

describe.skipIf(!accounts)("hostile file_paths, one after another, as the bot's user", () => {
  let s: ServiceStack;
  beforeAll(async () => void (s = await startServiceStack({ accounts })));
  afterAll(async () => await s?.close());

  /**
   * Send a PDF (about 7 KB) with `fault` queued for its getFile; returns the ended job and the user.
   * Each page carries a full line of text (≥ USABLE_TEXT_CHARS), so the ones that reach processing
   * need no OCR: the subject here is the file on the server's disk, not recognition.
   */
  async function sendWith(fault: LocalFileFault, name: string) {
    const u = s.em.user({ language_code: "en" });
    s.em.faultLocalFile(fault);
    const bytes = await makePdf({ pages: Array.from({ length: 24 }, (_, i) => [`hostile ${name}, page ${i + 1}: a text layer long enough to need no OCR`]) });
    const sent = await u.sendDocument({ bytes, file_name: `${name}.pdf` });
    return { u, bytes, job: await s.waitJob((await s.jobFor(u.chatId, sent.message_id)).id) };
  }

  for (const fault of [{ kind: "device" }, { kind: "socket" }, { kind: "directory" }] as const) {
    test(`a ${fault.kind} at file_path: file_not_readable at once, one operator line`, async () => {
      const before = s.logs.filter((l) => l.includes(REFUSED)).length;
      const { u, job } = await sendWith(fault, fault.kind);
      expect(job).toMatchObject({ status: "failed", reason: "file_not_readable", attempts: 1 });
      expect(await failureText(u, job.id)).toBe(`Job #${job.id} failed: ${NOT_READABLE}`);
      expect(s.logs.filter((l) => l.includes(REFUSED)).length).toBe(before + 1);
    });
  }

  test("a symlink out of LOCAL_BOT_API_DIR: file_not_readable, the target is never read", async () => {
    const outside = join(s.root, "outside.pdf");
    writeFileSync(outside, await makePdf({ pages: [["secret outside"]] }));
    const { u, job } = await sendWith({ kind: "symlink", target: outside }, "symlink");
    expect([job.status, job.reason]).toEqual(["failed", "file_not_readable"]);
    expect(await failureText(u, job.id)).toBe(`Job #${job.id} failed: ${NOT_READABLE}`);
    const line = s.logs.find((l) => l.includes("file_path resolves outside LOCAL_BOT_API_DIR") && l.includes(`"job":${job.id}`));
    expect(line).toContain(outside);
  });

  test("removed by the server before the read: one fresh getFile, then ready (the user is told nothing failed)", async () => {
    const calls = s.em.count("getFile");
    const { u, job } = await sendWith({ kind: "deleted" }, "deleted");
    expect(job).toMatchObject({ status: "ready", attempts: 1 });
    expect(s.em.count("getFile") - calls).toBe(2);
    const texts = u.messages().map((m) => m.text ?? "");
    expect(texts.some((t) => t.includes("failed") || t.includes("retry"))).toBe(false);
  });

  for (const by of [2048, -2048]) {
    test(`${by > 0 ? "longer" : "shorter"} than announced by ${Math.abs(by)} B: size_mismatch, both sizes in the chat`, async () => {
      const { u, job, bytes } = await sendWith({ kind: "resized", by }, `resized${by}`);
      expect([job.status, job.reason]).toEqual(["failed", "size_mismatch"]);
      expect(bytes.byteLength).toBeGreaterThan(4096);
      const kb = (n: number) => `${Math.ceil(n / 1024)} KB`;
      expect(await failureText(u, job.id)).toBe(`Job #${job.id} failed: The downloaded file is ${kb(bytes.byteLength + by)}, not the ${kb(bytes.byteLength)} Telegram announced. Please send it again.`);
    });
  }
});
