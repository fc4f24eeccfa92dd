/**
 * bench/local/run.ts — a local-mode file from getFile to `fetched`, as the unprivileged bot user, against
 * Bun's own streaming SHA-256 of the same file in the same run (issue 16: goal ≤ 1.2× the hash time and
 * 0 extra bytes written).
 *
 *   sudo bun bench/local/run.ts [--size 1024] [--rounds 5] [--cold]
 *
 * Needs root: it creates the test accounts (test/support/service-users.ts), writes the server's file as
 * the server's user (0640, dirs 0750) and runs every measured process as the bot's user in the server's
 * group (setpriv), with fs.protected_hardlinks as the host has it. `--size` is in MiB (1024 = 1 GiB).
 * `--cold` drops the page cache (sync; drop_caches) before each measurement; the default measures a
 * warm cache, as a file the server has just written is.
 *
 * Rows (medians of `--rounds`, the order rotated each round):
 *   hash    Bun.file().stream() + Bun.CryptoHasher("sha256"), a separate process: the peer
 *   floor   readSync in 1 MiB chunks + CryptoHasher in one loop, a separate process: the plain floor
 *   fetch   docket's local fetcher (getFile over HTTP to the emulator + the in-place read), a separate process
 *   bot     the real bot (`bun bot/main.ts`): one new job per round, the `ms` of its "fetched" journal line
 *           (getFile + read + hash, as the download step times it); the file is already on the server's
 *           disk (another chat sent it first), as after a real server's own download
 *   copy    the fallback before issue 16: getFile, then a streamed copy into downloads/ hashed on the way
 *   sha256sum  coreutils sha256sum of the server's file: the native hashing peer
 *   cp      coreutils cp of the server's file into downloads/: the native copying peer
 * "disk bytes" is what the measured process made the kernel write to storage (/proc/<pid>/io write_bytes;
 * getrusage's ru_oublock for the coreutils peers): for the bot, during its download step (its SQLite
 * commit included). "in downloads/" is what the measurement left on disk there (st_blocks × 512): a copy
 * shows up here, the in-place read leaves nothing. "read ÷ size" is the measured process's read(2) bytes
 * (/proc/<pid>/io rchar; sockets and the bot's SQLite reads included) over the file's size: 1.00 is one read.
 */
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { median } from "../queue/stats.ts";
import { startServiceStack } from "../../test/support/service-stack.ts";
import { serviceAccounts } from "../../test/support/service-users.ts";
import { asUser } from "../../test/support/unprivileged.ts";

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const SIZE_MIB = Number(arg("size", "1024"));
const ROUNDS = Number(arg("rounds", "5"));
const COLD = process.argv.includes("--cold");

if (process.getuid?.() !== 0) {
  console.error("bench/local/run.ts needs root (it creates system users and runs the bot as one): sudo bun bench/local/run.ts");
  process.exit(2);
}
const accounts = serviceAccounts("bench/local/run.ts");
if (!accounts) process.exit(2);
const { server, bot, repoRoot } = accounts;
const asBot = [...asUser(bot.uid, bot.gid, [server.gid]), "--no-new-privs", "--inh-caps=-all"];

function dropCaches(): void {
  if (!COLD) return;
  Bun.spawnSync(["sync"]);
  writeFileSync("/proc/sys/vm/drop_caches", "3");
}

/** Bytes on disk under `dir` (st_blocks × 512 of each file; one level, as downloads/ is). */
function keptIn(dir: string): number {
  return readdirSync(dir).reduce((n, name) => n + statSync(join(dir, name)).blocks * 512, 0);
}

/** CPU time (user + system, all threads) of process `pid` so far, ms (/proc/<pid>/stat, 10 ms ticks). */
function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** One counter of /proc/<pid>/io (rchar, write_bytes, …). */
function ioOf(pid: number, key: string): number {
  return Number(new RegExp(`^${key}: (\\d+)$`, "m").exec(readFileSync(`/proc/${pid}/io`, "utf8"))![1]);
}

function writeBytesOf(pid: number): number {
  return ioOf(pid, "write_bytes");
}

const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const loadBefore = load();

// The source: SIZE_MIB of pseudo-random bytes (not sparse), written once.
const work = mkdtempSync(join(tmpdir(), "docket-bench-local-"));
chmodSync(work, 0o755);
const src = join(work, "big.pdf");
{
  const chunk = new Uint8Array(16 << 20);
  crypto.getRandomValues(chunk.subarray(0, 65536));
  for (let i = 65536; i < chunk.length; i += 65536) chunk.copyWithin(i, 0, 65536);
  const w = Bun.file(src).writer();
  for (let i = 0; i < SIZE_MIB / 16; i++) {
    chunk[0] = i & 255;
    chunk[1] = (i >> 8) & 255;
    w.write(chunk);
  }
  await w.end();
}
const sizeBytes = SIZE_MIB * 1048576;

const s = await startServiceStack({
  accounts,
  env: { DOWNLOAD_LIMIT_LOCAL: "4GB", DOWNLOAD_BUDGET: "32GB", BUDGET_MIN_RESERVATION: "1MB", LOG_LEVEL: "info" },
});
const KINDS = ["hash", "floor", "sha256sum", "fetch", "bot", "copy", "cp"] as const;
type Kind = (typeof KINDS)[number];
const results: Record<Kind, Array<{ ms: number; cpu: number; read: number | null; disk: number; kept: number }>> = { hash: [], floor: [], sha256sum: [], fetch: [], bot: [], copy: [], cp: [] };
try {
  // The first chat's job puts the file on the server's disk (the emulator copies it in at its getFile).
  const first = s.em.user({ language_code: "en" });
  const sent = await first.sendDocument({ path: src, file_name: "big.pdf", mime_type: "application/pdf" });
  const firstJob = await s.waitJob((await s.jobFor(first.chatId, sent.message_id, 60_000)).id, ["fetched", "processing", "ready", "failed"], 300_000);
  const serverFile = firstJob.local_path!;
  const sha = firstJob.sha256!;
  const pid = Number((JSON.parse(s.logs.find((l) => l.includes('"msg":"docket starting"'))!) as { pid: number }).pid);
  const downloads = join(s.dataDir, "downloads");

  // Spawned without blocking: the emulator answering the child's getFile runs in this process.
  const child = async (kind: Exclude<Kind, "bot">) => {
    dropCaches();
    const request = { kind, apiRoot: s.em.apiRoot, token: s.em.token, fileId: sent.file_id!, botApiDir: s.botApiDir, serverFile, downloads };
    const p = Bun.spawn([...asBot, "bun", "--no-env-file", "bench/local/child.ts"], { cwd: repoRoot, stdin: new Blob([JSON.stringify(request)]), stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    if (code !== 0) throw new Error(`child ${kind} failed: ${err}`);
    const r = JSON.parse(out.trim().split("\n").pop()!) as { ms: number; cpuMs: number; rchar?: number; diskBytes: number; keptBytes: number; sha256: string; bytes: number };
    if (r.sha256 !== sha || r.bytes !== sizeBytes) throw new Error(`${kind}: wrong bytes or SHA-256`);
    results[kind].push({ ms: r.ms, cpu: r.cpuMs, read: r.rchar ?? null, disk: r.diskBytes, kept: r.keptBytes });
  };
  const viaBot = async () => {
    dropCaches();
    const u = s.em.user({ language_code: "en" });
    const before = writeBytesOf(pid);
    const readBefore = ioOf(pid, "rchar");
    const cpuBefore = cpuMsOf(pid);
    const m = await u.sendDocument({ path: src, file_name: "big.pdf", mime_type: "application/pdf" });
    const job = await s.jobFor(u.chatId, m.message_id, 60_000);
    const line = await (async () => {
      for (;;) {
        const l = s.logs.find((x) => x.includes('"msg":"fetched"') && x.includes(`"job":${job.id},`));
        if (l) return JSON.parse(l) as { ms: number; sha256: string; size: number };
        await Bun.sleep(5);
      }
    })();
    const disk = writeBytesOf(pid) - before;
    const read = ioOf(pid, "rchar") - readBefore;
    const cpu = cpuMsOf(pid) - cpuBefore;
    const kept = keptIn(downloads);
    if (line.sha256 !== sha || line.size !== sizeBytes) throw new Error("bot: wrong bytes or SHA-256");
    results.bot.push({ ms: line.ms, cpu, read, disk, kept });
    await s.waitJob(job.id, ["failed", "ready"], 300_000);
  };
  const order: Array<() => Promise<void> | void> = [() => child("hash"), () => child("floor"), () => child("sha256sum"), () => child("fetch"), viaBot, () => child("copy"), () => child("cp")];
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < order.length; k++) await order[(k + r) % order.length]!();
    process.stderr.write(`round ${r + 1}/${ROUNDS} done\n`);
  }
} finally {
  await s.close();
  rmSync(work, { recursive: true, force: true });
}

const base = median(results.hash.map((x) => x.ms));
const label: Record<Kind, string> = {
  hash: "Bun streaming SHA-256 (peer)",
  floor: "Bun readSync 1 MiB + SHA-256, one loop (floor)",
  sha256sum: "coreutils sha256sum (peer)",
  fetch: "docket local fetcher (getFile + in-place read)",
  bot: "docket bot, getFile → fetched",
  copy: "copy fallback before issue 16 (getFile + copy + hash)",
  cp: "coreutils cp into downloads/ (peer)",
};
const bytes = (n: number) => (n >= 1048576 ? `${Math.round(n / 1048576)} MiB` : n >= 1024 ? `${Math.round(n / 1024)} KiB` : `${n} B`);
console.log(`\nlocal-mode fetch, ${SIZE_MIB} MiB, ${ROUNDS} rounds, ${COLD ? "cold" : "warm"} page cache, Bun ${Bun.version}, load ${loadBefore} → ${load()}`);
console.log("| path | median ms | min–max ms | × Bun hash | MiB/s | CPU ms (median) | CPU × Bun hash | read ÷ size | disk bytes written (median) | in downloads/ (median) |");
console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
const baseCpu = median(results.hash.map((x) => x.cpu));
for (const k of KINDS) {
  const xs = results[k];
  const ms = xs.map((x) => x.ms);
  const cells = [label[k], Math.round(median(ms)), `${Math.round(Math.min(...ms))}–${Math.round(Math.max(...ms))}`, (median(ms) / base).toFixed(2), Math.round(SIZE_MIB / (median(ms) / 1000)), Math.round(median(xs.map((x) => x.cpu))), (median(xs.map((x) => x.cpu)) / baseCpu).toFixed(2), xs[0]!.read === null ? "—" : (median(xs.map((x) => x.read!)) / sizeBytes).toFixed(2), bytes(median(xs.map((x) => x.disk))), bytes(median(xs.map((x) => x.kept)))];
  console.log(`| ${cells.join(" | ")} |`);
}
