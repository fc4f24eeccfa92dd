/**
 * Local mode as it runs on a host (issue 16 "tested as it runs"; issue 9 item 7, the permission
 * model): the emulated `--local` server writes its files as its own system user (0640, dirs 0750),
 * `fs.protected_hardlinks` is on, and the real bot process runs as another unprivileged user that
 * reads them only through the server's group.
 * - In the group: the server's file is the job's source, read in place; docket writes nothing to
 *   downloads/, and the job ends `ready`. (A hard link is refused there, and a copy would show up in
 *   downloads/: both ways the old fallback is caught.)
 * - Without the group: `/readyz` (`botApiDir`) and one journal line say so as soon as the bot runs,
 *   before any file; a job ends `file_not_readable`, with one operator line naming the blocked
 *   directory, its owner and the fix, and the user's message; once the operator adds the group, the
 *   re-sent file goes through and the check is ok.
 * - One run as root keeps the privileged path covered.
 */
import { createHash } from "node:crypto";
import { readFileSync, readdirSync, statSync, watch, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { makePdf } from "../../scripts/samples/index.ts";
import { startServiceStack, type ServiceStack } from "../support/service-stack.ts";
import { serviceAccounts } from "../support/service-users.ts";

const accounts = serviceAccounts("local mode as a service (test/e2e/local-service.test.ts)");
let stack: ServiceStack | null = null;
afterEach(async () => {
  await stack?.close();
  stack = null;
});

/** Debian's default, and what makes link() to the server's file fail for the bot: switched on if a host has it off. */
function protectedHardlinksOn(): void {
  const p = "/proc/sys/fs/protected_hardlinks";
  if (readFileSync(p, "utf8").trim() !== "1") writeFileSync(p, "1");
  expect(readFileSync(p, "utf8").trim()).toBe("1");
}

/** Names created in `dir` while `fn` runs (fs.watch; events may lag, so the directory is listed too). */
async function writtenDuring(dir: string, fn: () => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  const w = watch(dir, (_e, name) => void (name && seen.push(String(name))));
  try {
    await fn();
  } finally {
    w.close();
  }
  return [...seen, ...readdirSync(dir)];
}

/** A TCP port on 127.0.0.1 that was free a moment ago (for the bot's HTTP_PORT). */
async function freePort(): Promise<number> {
  const free = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  const port = free.port!;
  await free.stop(true);
  return port;
}

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

describe.skipIf(!accounts)("local mode as a service: the bot's own user reads the server's files in place", () => {
  test("in the server's group: no copy, no link; the job reads the server's file and ends ready", async () => {
    protectedHardlinksOn();
    const s = (stack = await startServiceStack({ accounts }));
    const u = s.em.user({ language_code: "en" });
    const pdf = await makePdf({ pages: [1, 2, 3].map((n) => [`In place ${n}: a text layer long enough to need no OCR`]) });
    let job;
    const written = await writtenDuring(join(s.dataDir, "downloads"), async () => {
      const sent = await u.sendDocument({ bytes: pdf, file_name: "in-place.pdf" });
      job = await s.waitJob((await s.jobFor(u.chatId, sent.message_id)).id);
    });
    expect(written).toEqual([]);
    expect(job!).toMatchObject({ status: "ready", real_size: pdf.byteLength, sha256: sha(pdf) });
    // The source is the server's own file, still there, still the server's, unchanged.
    const source = job!.local_path!;
    expect(source.startsWith(`${s.botApiDir}/${s.em.token}/documents/file_`)).toBe(true);
    const st = statSync(source);
    expect([st.uid, st.gid, st.mode & 0o777, st.nlink]).toEqual([accounts!.server.uid, accounts!.server.gid, 0o640, 1]);
    expect(sha(readFileSync(source))).toBe(sha(pdf));
    const done = await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${job!.id}: PDF, 3 pages`)));
    expect(done.filter((x) => x.document).map((x) => x.document!.file_name)).toEqual(["in-place.txt", "in-place-page1.jpg"]);
    // This host really refuses the bot a hard link to the server's file (the old code then copied it).
    const ln = Bun.spawnSync(["setpriv", `--reuid=${accounts!.bot.uid}`, `--regid=${accounts!.bot.gid}`, `--groups=${accounts!.server.gid}`, "ln", source, join(s.dataDir, "downloads", "probe")]);
    expect(ln.exitCode).not.toBe(0);
    expect(ln.stderr.toString()).toContain("Operation not permitted");
    expect(await s.stop()).toBe(0);
  });

  test("without the server's group: /readyz and one journal line say so at start; file_not_readable, one operator line with the cause and the fix; with the group the re-sent file goes through", async () => {
    const port = await freePort();
    const s = (stack = await startServiceStack({ accounts, inServerGroup: false, env: { HTTP_PORT: String(port) } }));
    // Before any file: readiness names the directory the bot's user may not enter, its owner and the group to add.
    const blocked = `the bot's user (uid ${accounts!.bot.uid}, groups []) may not enter LOCAL_BOT_API_DIR ${s.botApiDir} (owner ${accounts!.server.uid}:${accounts!.server.gid}, mode 750); add the bot's user to group ${accounts!.server.gid} (SupplementaryGroups= in docket.service; install.sh sets it up) or grant an ACL, then restart docket (docs/local-mode.md, Permissions)`;
    const readyz = async () => (await (await fetch(`http://127.0.0.1:${port}/readyz`)).json()) as { checks: Record<string, { ok: boolean; detail: string }> };
    await expect.poll(async () => (await readyz().catch(() => null))?.checks.botApiDir).toEqual({ ok: false, detail: blocked });
    const failing = () => s.logs.filter((l) => l.includes('"msg":"readiness check botApiDir failing'));
    await expect.poll(() => failing().length).toBe(1);
    expect(JSON.parse(failing()[0]!)).toMatchObject({ level: 50, check: "botApiDir", msg: `readiness check botApiDir failing: ${blocked}` });
    const u = s.em.user({ language_code: "en" });
    const pdf = await makePdf({ pages: [["No group: a text layer long enough to need no OCR"]] });
    const first = await u.sendDocument({ bytes: pdf, file_name: "no-group.pdf" });
    const job = await s.waitJob((await s.jobFor(u.chatId, first.message_id)).id);
    expect([job.status, job.reason]).toEqual(["failed", "file_not_readable"]);
    const msgs = await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Job #${job.id} failed`)));
    expect(msgs.find((x) => x.text?.startsWith(`Job #${job.id} failed`))!.text).toBe(
      `Job #${job.id} failed: The bot can’t read this file from its Bot API server. The operator can see why in the log; please try again later.`,
    );
    const lines = s.logs.filter((l) => l.includes("cannot read the local Bot API file"));
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!);
    // The bot cannot even enter the server's --dir (0750, the server's): that is the block, and its group the fix.
    expect(line).toMatchObject({ code: "EACCES", blocked_at: s.botApiDir, owner_uid: accounts!.server.uid, owner_gid: accounts!.server.gid, mode: "750", uid: accounts!.bot.uid, groups: [] });
    expect(line.msg).toContain(`add the bot's user to group ${accounts!.server.gid} (SupplementaryGroups= in docket.service`);
    expect(line.level).toBe(50);

    // The operator adds the group (SupplementaryGroups=) and restarts; the user sends the file again.
    await s.restart(true);
    const again = await u.sendDocument({ bytes: pdf, file_name: "no-group.pdf" });
    const rearmed = await s.waitJob(job.id, ["ready"]);
    expect(rearmed.local_path!.startsWith(s.botApiDir)).toBe(true);
    expect(again.message_id).toBeGreaterThan(first.message_id);
    expect((await readyz()).checks.botApiDir).toEqual({ ok: true, detail: `the bot's user may enter ${s.botApiDir}` });
    expect(failing()).toHaveLength(1);
    expect(await s.stop()).toBe(0);
  });

  test("as root (the one privileged run): the same in-place read, nothing in downloads/; /healthz checks the server's disk too", async () => {
    const port = await freePort();
    const s = (stack = await startServiceStack({ accounts: null, env: { HTTP_PORT: String(port) } }));
    const u = s.em.user({ language_code: "en" });
    const pdf = await makePdf({ pages: [["Root run: a text layer long enough to need no OCR"]] });
    let job;
    const written = await writtenDuring(join(s.dataDir, "downloads"), async () => {
      const sent = await u.sendDocument({ bytes: pdf, file_name: "root.pdf" });
      job = await s.waitJob((await s.jobFor(u.chatId, sent.message_id)).id);
    });
    expect(written).toEqual([]);
    expect(job!).toMatchObject({ status: "ready", sha256: sha(pdf) });
    expect(job!.local_path!.startsWith(s.botApiDir)).toBe(true);
    expect(statSync(job!.local_path!).nlink).toBe(1);
    // The server's dir is on the data disk here: the disk check counts its DOWNLOAD_BUDGET (4 GB) on top.
    const health = await (await fetch(`http://127.0.0.1:${port}/healthz`)).json();
    expect(health.checks.disk.detail).toContain(`; the Bot API server's files (${s.botApiDir}) are on the same disk: 4096 MB more`);
    expect(await s.stop()).toBe(0);
  });
});
