/**
 * One measurement of bench/local/run.ts, in its own process, run as the unprivileged bot user
 * (setpriv, in the server's group), so it reads the server's 0640 file the way the bot does.
 *
 *   echo '{"kind":…,"apiRoot":…,"token":…,"fileId":…,"botApiDir":…,"serverFile":…,"downloads":…}' | bun bench/local/child.ts
 *
 * The request comes on stdin (the token never in argv, CONTRACTS §8's rule for children).
 *
 * kinds:
 *   hash   Bun's own streaming SHA-256 of the server's file (Bun.file().stream() + CryptoHasher): the peer
 *   floor  the plainest reader: readSync into one 1 MiB buffer, CryptoHasher.update, in a loop (no
 *          overlap of read and hash, no async): what reading + hashing costs at least in Bun
 *   fetch  docket's local fetcher (bot/fetch/local.ts): getFile over HTTP, then the in-place read
 *   copy   the pre-issue-16 fallback for comparison: getFile, then a streamed copy to downloads/ hashed
 *          on the way (writeStreamed, bot/fetch/hash-copy.ts)
 *   sha256sum  coreutils `sha256sum <file>`: the native hashing peer
 *   cp     coreutils `cp <file> downloads/…`: the native copying peer (what any copy costs at least)
 * Prints one JSON line: { kind, ms, cpuMs, bytes, sha256, diskBytes, rchar, wchar, keptBytes } — `rchar` the
 * bytes this process got from read(2)/recv(2) (how often the file was read; absent for the coreutils peers); `cpuMs` is the CPU
 * time (user + system, every thread; the peer's own for coreutils) the measurement used; `diskBytes` is what the
 * measured work made the kernel write to storage (/proc/self/io write_bytes: page-cache pages it dirtied;
 * for the two coreutils peers the child's getrusage ru_oublock × 512, the same counter), `wchar` every byte
 * this process passed to write(2)/send(2) (files and sockets; the getFile request too; 0 for the peers),
 * `keptBytes` the bytes on disk at the destination in downloads/ when the measurement ended (st_blocks × 512).
 * A copy is removed after it is measured. The coreutils peers are timed from spawn to exit (their exec
 * included, a millisecond or two).
 */
import { closeSync, createReadStream, openSync, readFileSync, readSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { Api } from "grammy";
import { writeStreamed } from "../../bot/fetch/hash-copy.ts";
import { localFetcher } from "../../bot/fetch/local.ts";
import { createLogger } from "../../bot/log.ts";

/** What run.ts asks for (stdin, one JSON object). */
interface Request {
  readonly kind: string;
  readonly apiRoot: string;
  readonly token: string;
  readonly fileId: string;
  readonly botApiDir: string;
  readonly serverFile: string;
  readonly downloads: string;
}
const { kind, apiRoot, token, fileId, botApiDir, serverFile, downloads } = JSON.parse(await Bun.stdin.text()) as Request;

/** This process's I/O counters so far (Linux /proc/self/io): read(2) and write(2) bytes, and bytes sent to storage. */
function io(): { rchar: number; wchar: number; disk: number } {
  const t = readFileSync("/proc/self/io", "utf8");
  const n = (key: string) => Number(new RegExp(`^${key}: (\\d+)$`, "m").exec(t)![1]);
  return { rchar: n("rchar"), wchar: n("wchar"), disk: n("write_bytes") };
}

const api = new Api(token, { apiRoot });
const log = createLogger({ level: "silent" });
const dest = join(downloads, `bench-${process.pid}`);
/** Run a coreutils peer; its wall time from spawn to exit and what it wrote to storage (ru_oublock is in 512 B units). */
function peer(argv: string[]): { stdout: string; ms: number; cpuMs: number; disk: number } {
  const t = performance.now();
  const r = Bun.spawnSync(argv, { stdout: "pipe", stderr: "pipe" });
  const ms = performance.now() - t;
  if (r.exitCode !== 0) throw new Error(`${argv[0]} failed: ${r.stderr.toString()}`);
  return { stdout: r.stdout.toString(), ms, cpuMs: Number(r.resourceUsage.cpuTime.total) / 1000, disk: r.resourceUsage.ops.out * 512 };
}

/** SHA-256 (hex) of a file, streamed (checks the copy after it was timed). */
async function sha256Of(p: string): Promise<string> {
  const h = new Bun.CryptoHasher("sha256");
  for await (const chunk of Bun.file(p).stream() as unknown as AsyncIterable<Uint8Array>) h.update(chunk);
  return h.digest("hex");
}

/** Bytes a file occupies on disk (0 when it is not there). */
function kept(p: string): number {
  try {
    return statSync(p).blocks * 512;
  } catch {
    return 0;
  }
}

if (kind === "sha256sum" || kind === "cp") {
  const size = statSync(serverFile).size;
  const r = kind === "sha256sum" ? peer(["sha256sum", serverFile]) : peer(["cp", serverFile, dest]);
  const sha256 = kind === "sha256sum" ? r.stdout.split(" ")[0]! : await sha256Of(dest);
  const keptBytes = kept(dest);
  rmSync(dest, { force: true });
  console.log(JSON.stringify({ kind, ms: r.ms, cpuMs: r.cpuMs, diskBytes: r.disk, wchar: 0, keptBytes, bytes: size, sha256 }));
  process.exit(0);
}

const io0 = io();
const cpu0 = process.cpuUsage();
const t0 = performance.now();
let out: { bytes: number; sha256: string };
if (kind === "hash") {
  const h = new Bun.CryptoHasher("sha256");
  let n = 0;
  for await (const chunk of Bun.file(serverFile).stream() as unknown as AsyncIterable<Uint8Array>) {
    h.update(chunk);
    n += chunk.byteLength;
  }
  out = { bytes: n, sha256: h.digest("hex") };
} else if (kind === "floor") {
  const h = new Bun.CryptoHasher("sha256");
  const buf = Buffer.allocUnsafe(1 << 20);
  const fd = openSync(serverFile, "r");
  let n = 0;
  for (let got; (got = readSync(fd, buf, 0, buf.length, n)) > 0; n += got) h.update(buf.subarray(0, got));
  closeSync(fd);
  out = { bytes: n, sha256: h.digest("hex") };
} else if (kind === "fetch") {
  const f = await localFetcher(api, botApiDir, log)({ jobId: 1, fileId, declaredSize: null, destPath: dest, limit: 4 * 1024 ** 3, idleTimeoutMs: 60_000 });
  out = { bytes: f.size, sha256: f.sha256 };
} else if (kind === "copy") {
  const file = await api.getFile(fileId);
  const f = await writeStreamed(createReadStream(file.file_path!) as unknown as AsyncIterable<Uint8Array>, dest);
  out = { bytes: f.size, sha256: f.sha256 };
} else throw new Error(`unknown kind ${kind}`);
const ms = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const io1 = io();
const keptBytes = kept(dest);
rmSync(dest, { force: true });
console.log(JSON.stringify({ kind, ms, cpuMs: (cpu.user + cpu.system) / 1000, diskBytes: io1.disk - io0.disk, rchar: io1.rchar - io0.rchar, wchar: io1.wchar - io0.wchar, keptBytes, ...out }));
