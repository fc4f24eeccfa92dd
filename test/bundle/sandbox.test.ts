/**
 * The units' sandbox and ceilings (issue 9 item 9), checked against what the bot really does.
 *
 * - `systemd-analyze security --offline=yes`: docket.service at most 2.5, the failure hook
 *   (which runs the operator's script as root) at most 2.5 too.
 * - The system calls of the bot and its processing children, traced (`strace -f -c`) through a
 *   real demo run (emulator, bot, PDFs, images, a refusal), all lie inside the set the unit's
 *   SystemCallFilter= allows: a call outside it would fail with EPERM in production.
 * - The processing children stay in the bot's cgroup (MemoryMax/TasksMax/KillMode reach them):
 *   a child of the processor pool has the parent's cgroup, and the unit delegates nothing.
 */
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot, runCmd, runCmdAsync, testTempDir } from "./helpers";
import { toolReady } from "../support/tools";
import { ProcessorPool } from "../../processors/pool/index.ts";

const haveAnalyze = toolReady("systemd-analyze");
const haveStrace = toolReady("strace");

/** The last value of `key` in a unit file (comments skipped). */
function directive(unit: string, key: string): string[] {
  return readFileSync(join(repoRoot, "systemd", unit), "utf8").split("\n").filter((l) => l.startsWith(`${key}=`)).map((l) => l.slice(key.length + 1));
}

/** The overall exposure systemd-analyze reports for a unit file of systemd/. */
function exposure(unit: string): number {
  const r = runCmd(["systemd-analyze", "security", "--offline=yes", join(repoRoot, "systemd", unit)]);
  const m = /Overall exposure level for \S+: ([\d.]+)/.exec(r.stdout + r.stderr);
  if (!m) throw new Error(`no exposure in: ${r.stdout}${r.stderr}`);
  return Number(m[1]);
}

/** Every system call a SystemCallFilter= group list allows, expanded by systemd-analyze. */
function allowedSyscalls(groups: string[]): Set<string> {
  const out = new Set<string>();
  for (const g of groups) {
    for (const line of runCmd(["systemd-analyze", "syscall-filter", g]).stdout.split("\n")) {
      const name = line.trim();
      if (name && !name.startsWith("#") && !name.startsWith("@") && /^[a-z_0-9]+$/.test(name)) out.add(name);
      if (name.startsWith("@") && name !== g) for (const n of allowedSyscalls([name])) out.add(n);
    }
  }
  return out;
}

describe.skipIf(!haveAnalyze)("systemd-analyze security --offline=yes", () => {
  it("docket.service is at most 2.5 (was 3.2)", () => {
    expect(exposure("docket.service")).toBeLessThanOrEqual(2.5);
  });

  it("the failure hook, which runs the operator's script as root, is at most 2.5 too (was 9.3)", () => {
    expect(exposure("docket-failure@.service")).toBeLessThanOrEqual(2.5);
  });

  it("the alert unit (docket notify as the bot's user) is at most 2.5 too", () => {
    expect(exposure("docket-alert@.service")).toBeLessThanOrEqual(2.5);
  });

  it("every service of the bundle has memory and task ceilings", () => {
    for (const u of ["docket.service", "docket-janitor.service", "docket-backup.service", "docket-backup-verify.service", "docket-failure@.service", "docket-alert@.service", "docket-bot-api.service", "docket-nginx.service"]) {
      expect([u, directive(u, "MemoryMax").length, directive(u, "TasksMax").length]).toEqual([u, 1, 1]);
    }
    expect(directive("docket.service", "MemoryHigh")).toHaveLength(1);
  });
});

describe.skipIf(!haveAnalyze || !haveStrace)("the bot's system calls under the unit's filter", () => {
  it("a demo run (PDFs, images, a refusal) makes no call outside SystemCallFilter=", async () => {
    const filter = directive("docket.service", "SystemCallFilter");
    expect(filter).toEqual(["@system-service"]);
    expect(directive("docket.service", "SystemCallErrorNumber")).toEqual(["EPERM"]);
    // A handful of the committed samples: text and multi-page PDFs, JPEG, PNG, GIF, and bytes docket refuses.
    const dir = testTempDir("syscalls");
    const folder = join(dir, "in");
    mkdirSync(folder);
    const manifest = readFileSync(join(repoRoot, "samples/MANIFEST.tsv"), "utf8").split("\n");
    const pick = manifest.filter((l, i) => i === 0 || /^(pdf_text_3pages\.pdf|pdf_scanned_image_only\.pdf|img_rgb\.jpg|img_16bit\.png|img_animated\.gif|random_bytes\.bin)\t/.test(l));
    expect(pick).toHaveLength(7);
    for (const l of pick.slice(1)) cpSync(join(repoRoot, "samples", l.split("\t")[0]!), join(folder, l.split("\t")[0]!));
    writeFileSync(join(folder, "MANIFEST.tsv"), pick.join("\n") + "\n");
    const summary = join(dir, "syscalls.txt");
    const r = await runCmdAsync(["strace", "-f", "-qq", "-c", "-o", summary, "bun", "scripts/demo.ts", folder], { timeoutMs: 240_000 });
    expect(r.stdout).toMatch(/\d+ files, \d+ right, 0 wrong/);
    expect(r.status).toBe(0);
    const used = readFileSync(summary, "utf8").split("\n").map((l) => l.trim().split(/\s+/).at(-1)!).filter((n) => /^[a-z_0-9]+$/.test(n) && n !== "total" && n !== "syscall");
    expect(used.length).toBeGreaterThan(30);
    const allowed = allowedSyscalls(filter);
    expect(used.filter((n) => !allowed.has(n))).toEqual([]);
  }, 300_000);
});

describe("processing children stay in the bot's cgroup", () => {
  it("a warm processing child has its parent's cgroup; the unit delegates nothing and stops them with it", async () => {
    const pool = new ProcessorPool({ settings: { size: 1, recycleJobs: 100, recycleRssBytes: 2 ** 40, idleMs: 600_000 } });
    try {
      pool.warm();
      await expect.poll(() => pool.snapshot().find((c) => c.state === "idle")?.pid ?? 0).toBeGreaterThan(0);
      const child = pool.snapshot()[0]!.pid;
      expect(readFileSync(`/proc/${child}/cgroup`, "utf8")).toBe(readFileSync("/proc/self/cgroup", "utf8"));
    } finally {
      await pool.close();
    }
    expect(directive("docket.service", "Delegate")).toEqual([]);
    expect(directive("docket.service", "KillMode")).toEqual(["mixed"]);
  });
});
