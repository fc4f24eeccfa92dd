/**
 * Local mode under the unit's sandbox (issue 16 "tested as it runs"): the real bot process, as the
 * unprivileged bot user in the server's group, inside a mount namespace laid out like
 * `systemd/docket.service` (ProtectSystem=strict, PrivateTmp, each ReadWritePaths= and
 * ReadOnlyPaths= entry its own bind mount, read from the unit file). There a hard link from the
 * Bot API dir into downloads/ fails with EXDEV even for root, and nothing outside the data dirs is
 * writable — the job still reads the server's file in place and ends `ready`, with no copy.
 */
import { mkdtempSync, readdirSync, rmSync, watch } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterEach, describe, expect, test } from "vitest";
import { makePdf } from "../../scripts/samples/index.ts";
import { startServiceStack, type ServiceStack } from "../support/service-stack.ts";
import { serviceAccounts } from "../support/service-users.ts";
import { toolReady } from "../support/tools.ts";
import { inUnitSandbox, unitPaths } from "../support/unit-sandbox.ts";

const accounts = toolReady("unshare") ? serviceAccounts("local mode in the unit's sandbox (test/e2e/local-sandbox.test.ts)") : null;
let stack: ServiceStack | null = null;
afterEach(async () => {
  await stack?.close();
  stack = null;
});

describe.skipIf(!accounts)("local mode inside the unit's mount sandbox", () => {
  test("the sandbox is the unit's: link() into downloads/ is EXDEV even as root, only the ReadWritePaths= are writable", async () => {
    const paths = unitPaths();
    expect(paths.readWrite.length).toBeGreaterThan(0);
    expect(paths.readOnly).toContain("/var/lib/docket/bot-api");
    const root = mkdtempSync(join(tmpdir(), "docket-sandbox-probe-"));
    const stage = mkdtempSync(join("/dev/shm", "docket-sandbox-stage-"));
    try {
      const data = join(root, "var/lib/docket");
      for (const p of [...paths.readWrite, ...paths.readOnly]) Bun.spawnSync(["mkdir", "-p", join(root, p)]);
      Bun.spawnSync(["sh", "-c", `echo x > ${join(data, "bot-api/file_0.pdf")}`]);
      const script = [
        `ln ${data}/bot-api/file_0.pdf ${data}/downloads/linked 2>&1 || true`,
        `touch ${data}/not-a-data-dir 2>&1 || true`,
        `touch ${data}/bot-api/written 2>&1 || true`,
        `touch /tmp/private-tmp && echo "tmp ok"`,
        ...paths.readWrite.map((p) => `touch ${join(root, p)}/w && echo "rw ${p}"`),
      ].join("\n");
      const r = Bun.spawnSync(inUnitSandbox(["sh", "-c", script], root, stage), { stderr: "pipe" });
      const out = r.stdout.toString();
      expect(r.exitCode, r.stderr.toString()).toBe(0);
      expect(out).toContain("Invalid cross-device link");
      expect(out.match(/Read-only file system/g)).toHaveLength(2);
      expect(out).toContain("tmp ok");
      for (const p of paths.readWrite) expect(out).toContain(`rw ${p}`);
    } finally {
      rmSync(root, { recursive: true, force: true });
      rmSync(stage, { recursive: true, force: true });
    }
  });

  test("as the bot's user in the sandbox: the server's file is read in place, nothing is written to downloads/, ready", async () => {
    const s = (stack = await startServiceStack({ accounts, sandbox: true }));
    const u = s.em.user({ language_code: "en" });
    const pdf = await makePdf({ pages: [1, 2].map((n) => [`Sandboxed ${n}: a text layer long enough to need no OCR`]) });
    const seen: string[] = [];
    const w = watch(join(s.dataDir, "downloads"), (_e, name) => void (name && seen.push(String(name))));
    let job;
    try {
      const sent = await u.sendDocument({ bytes: pdf, file_name: "sandboxed.pdf" });
      job = await s.waitJob((await s.jobFor(u.chatId, sent.message_id)).id);
    } finally {
      w.close();
    }
    expect([...seen, ...readdirSync(join(s.dataDir, "downloads"))]).toEqual([]);
    expect([job!.status, job!.reason], s.logs.filter((l) => /"level":(40|50|60)/.test(l)).join("\n")).toEqual(["ready", null]);
    expect(job!.local_path!.startsWith(`${s.botApiDir}/`)).toBe(true);
    await u.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${job!.id}: PDF, 2 pages`)));
    expect(await s.stop()).toBe(0);
  });
});
