/**
 * install.sh checks the host like a product before it changes anything (issue 9 item 12): the
 * architecture, memory, OS, Bun against engines.bun, the ports it needs; and it sizes the bot
 * unit's ceilings from the pool settings and the host's memory (item 9).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fakeToken, prepareVerifyRoot, repoRoot, runCmd, testTempDir, writeExecutable } from "./helpers";
import { treeWithoutLog, useInstallHarness } from "./install-harness";
import { toolPath, toolReady } from "../support/tools";

const h = useInstallHarness();
const install = h.install;

describe("install.sh checks the host like a product (issue 9 item 12)", () => {
  /** A directory of executables put first on PATH for one run (stand-ins for uname, bun). */
  function pathWith(stubs: Record<string, string>): string {
    const dir = testTempDir("bin");
    for (const [name, body] of Object.entries(stubs)) writeExecutable(join(dir, name), `#!/bin/sh\n${body}\n`);
    return `${dir}:${process.env.PATH}`;
  }

  it.each<[string, { PATH?: "uname" | "bun"; meminfo?: string; osRelease?: string }, string]>([
    ["an architecture Bun and the server image are not built for", { PATH: "uname" }, "architecture riscv64 is not supported: docket runs on amd64 (x86_64) and arm64 (aarch64)"],
    ["too little memory", { meminfo: "MemTotal:  786432 kB\n" }, "this host has 768 MB of memory; docket needs at least 1024 MB"],
    ["an OS without apt", { osRelease: 'ID=arch\nVERSION_ID="rolling"\n' }, "os arch rolling is not Debian or Ubuntu, and install.sh installs packages with apt-get"],
    ["a Bun older than engines.bun", { PATH: "bun" }, 'Bun 1.3.0 does not satisfy engines.bun ">=1.4.0" of package.json: install the tested version: npm install -g bun@1.4.5'],
  ])("refuses %s before changing anything, naming the cause and the fix", async (_what, setup, message) => {
    const root = testTempDir("host");
    const env: Record<string, string> = { BOT_TOKEN: fakeToken() };
    if (setup.meminfo) {
      mkdirSync(join(root, "proc"));
      writeFileSync(join(root, "proc/meminfo"), setup.meminfo);
    }
    if (setup.osRelease) {
      mkdirSync(join(root, "etc"));
      writeFileSync(join(root, "etc/os-release"), setup.osRelease);
    }
    if (setup.PATH === "uname") env.PATH = pathWith({ uname: 'if [ "$1" = -m ]; then echo riscv64; else exec /usr/bin/uname "$@"; fi' });
    if (setup.PATH === "bun") env.PATH = pathWith({ bun: 'if [ "$1" = --version ]; then echo 1.3.0; exit 0; fi; exit 1' });
    const before = treeWithoutLog(root);
    const r = await install(["--root", root, "--no-start", "--download-budget", "16MB"], env);
    expect(r.stderr).toContain(message);
    expect(r.status).toBe(1);
    expect(existsSync(join(root, "etc/docket/docket.env"))).toBe(false);
    // Only the install log (and its directories) records the refusal.
    expect(treeWithoutLog(root).filter((l) => !/^d \d+ var(\/log(\/docket)?)?$/.test(l))).toEqual(before);
  });

  it("pins the Bun version the release was tested with, inside engines.bun, and installs exactly that one", async () => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { packageManager: string; engines: { bun: string } };
    const pin = /^bun@(\d+\.\d+\.\d+)$/.exec(pkg.packageManager)?.[1];
    expect(pin).toBeDefined();
    expect(Bun.semver.satisfies(pin!, pkg.engines.bun)).toBe(true);
    // With packages: npm installs the pinned version when this host's Bun is another one.
    const root = testTempDir("bunpin");
    const npm = join(testTempDir("bin"), "npm");
    writeExecutable(npm, `#!/bin/sh\nprintf 'npm %s\\n' "$*" >> '${h.recLog}'\n`);
    writeFileSync(h.recLog, "");
    const r = await install(["--root", root, "--no-start", "--download-budget", "16MB"], {
      BOT_TOKEN: fakeToken(), APT_GET: "/bin/true", NPM: npm, PATH: pathWith({ bun: 'if [ "$1" = --version ]; then echo 1.4.0; fi; exit 0' }),
    });
    expect(readFileSync(h.recLog, "utf8")).toContain(`npm install -g bun@${pin}\n`);
    expect(r.stderr).toContain(`warning: Bun 1.4.0 is not the version this release was tested with (${pin}, package.json packageManager)`);
  });

  it.skipIf(!toolReady("ss"))("refuses a port another program holds, naming the flag that moves it (a dry run names it too)", async () => {
    const taken = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      const root = testTempDir("port");
      const args = ["--root", root, "--no-start", "--http-port", String(taken.port), "--download-budget", "16MB"];
      const dry = await install(["--dry-run", ...args], { BOT_TOKEN: fakeToken(), SS: "ss" });
      expect(dry.status).toBe(1);
      expect(dry.stderr).toMatch(new RegExp(`port ${taken.port} \\(the bot's /healthz and /metrics\\) is in use by \\S+ \\(pid ${process.pid}\\): choose another with --http-port PORT`));
      const real = await install(args, { BOT_TOKEN: fakeToken(), SS: "ss" });
      expect(real.status).toBe(1);
      expect(real.stderr).toContain("choose another with --http-port PORT");
      expect(existsSync(join(root, "etc/docket/docket.env"))).toBe(false);
    } finally {
      taken.stop(true);
    }
  });

  it("sizes MemoryHigh/MemoryMax/TasksMax of docket.service from the pool and caps them by the host's memory", async () => {
    const root = testTempDir("sizing");
    mkdirSync(join(root, "etc/docket"), { recursive: true });
    writeFileSync(join(root, "etc/docket/docket.env"), "PROCESS_CONCURRENCY=3\nPROCESS_MEMORY_MB=512\nOCR_CONCURRENCY=1\n");
    const r = await install(["--root", root, "--no-start", "--download-budget", "16MB"], { BOT_TOKEN: fakeToken() });
    expect(r.status).toBe(0);
    const cores = Number(runCmd(["nproc"]).stdout.trim());
    const dropin = () => readFileSync(join(root, "etc/systemd/system/docket.service.d/30-resources.conf"), "utf8");
    // 128 MB for the bot + 3 × (512 + one Tesseract's 256 MB OCR allowance); MemoryMax a quarter above;
    // threads: (32 + 4·cores) + 2 × 3 × (24 + 4·cores + 4 per Tesseract).
    expect(dropin()).toContain(`MemoryHigh=2432M\nMemoryMax=3040M\nTasksMax=${32 + 4 * cores + 2 * 3 * (24 + 4 * cores + 4)}\n`);
    expect(r.stdout + r.stderr).toContain("worst case of the bot with PROCESS_CONCURRENCY=3 × (PROCESS_MEMORY_MB=512 + OCR_CONCURRENCY=1 × 256 MB): 2432 MB");
    // A 2 GB host cannot give 2 × 1024 MB: MemoryMax is what is left after the OS, with a warning.
    mkdirSync(join(root, "proc"));
    writeFileSync(join(root, "proc/meminfo"), "MemTotal:  2097152 kB\n");
    writeFileSync(join(root, "etc/docket/docket.env"), readFileSync(join(root, "etc/docket/docket.env"), "utf8").replace("PROCESS_CONCURRENCY=3\nPROCESS_MEMORY_MB=512\nOCR_CONCURRENCY=1\n", "PROCESS_CONCURRENCY=2\nPROCESS_MEMORY_MB=1024\n"));
    const small = await install(["--root", root, "--no-start"]);
    expect(small.status).toBe(0);
    // OCR_CONCURRENCY unset: one Tesseract per core, as bot/config.ts defaults it.
    const wanted = Math.floor(((128 + 2 * (1024 + cores * 256)) * 5) / 4);
    expect(small.stderr).toContain(`PROCESS_CONCURRENCY=2 × (PROCESS_MEMORY_MB=1024 + OCR_CONCURRENCY=${cores} × 256 MB) needs MemoryMax=${wanted}M, more than this host can give docket (1536M after the OS and the containers): MemoryMax=1536M; lower PROCESS_MEMORY_MB, PROCESS_CONCURRENCY or OCR_CONCURRENCY`);
    expect(dropin()).toContain("MemoryHigh=1382M\nMemoryMax=1536M\n");
    if (toolPath("systemd-analyze")) {
      prepareVerifyRoot(root);
      const v = runCmd(["systemd-analyze", "verify", `--root=${root}`, "docket.service"]);
      expect(v.stderr + v.stdout).toBe("");
    }
  });
});
