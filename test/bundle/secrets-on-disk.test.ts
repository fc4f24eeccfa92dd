/**
 * No secret ever on disk outside /etc/docket, and never readable by others while it is written
 * (issue 9 item 10). A real `--root` install (local mode + webhook, so the token, api_hash and
 * the webhook secret are all rendered) runs under `strace -ff`, which records every file
 * creation, write, chmod, rename and umask of install.sh and of every command it starts. The
 * trace is replayed in time order: each write that carries a secret must go to a file under
 * ROOT/etc/docket whose mode at that moment gives nothing to group or others, and no file that
 * holds a secret may later be opened up to others.
 */
import { readdirSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fakeToken, modeOf, runCmdAsync, testTempDir, writeSelfSignedTls } from "./helpers";
import { toolReady } from "../support/tools";

const API_HASH = "0123456789abcdef0123456789abcdef";
const ready = toolReady("strace");

/** One traced system call: when, by which process, and its text as strace printed it. */
interface TraceLine {
  readonly t: number;
  readonly pid: number;
  readonly call: string;
}

/** Read `prefix.<pid>` files of `strace -ff -ttt -o prefix` into one list in time order. */
function readTrace(dir: string, prefix: string): TraceLine[] {
  const lines: TraceLine[] = [];
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(`${prefix}.`)) continue;
    const pid = Number(name.slice(prefix.length + 1));
    for (const raw of readFileSync(join(dir, name), "utf8").split("\n")) {
      const m = /^(\d+\.\d+) (.*)$/.exec(raw);
      if (m) lines.push({ t: Number(m[1]), pid, call: m[2]! });
    }
  }
  return lines.sort((a, b) => a.t - b.t);
}

/** A path argument as strace -y shows it: absolute, or relative to the annotated directory fd. */
function resolvePath(dirfd: string | undefined, path: string): string {
  if (path.startsWith("/")) return path;
  const base = /<([^>]*)>/.exec(dirfd ?? "")?.[1] ?? "/";
  return join(base, path);
}

/**
 * Replay the trace: file modes (creation mode & ~umask, chmod, rename), which files hold a
 * secret, and every moment a secret sits where it must not.
 * @returns one line per violation (empty = the rule held throughout)
 */
function secretViolations(trace: TraceLine[], secrets: string[], secretFiles: string[], allowedDir: string, rootUmask: number): string[] {
  const umask = new Map<number, number>();
  const mode = new Map<string, number>();
  // Files that hold a secret before the install starts (a TLS key the operator put there).
  const holdsSecret = new Set<string>(secretFiles);
  const out: string[] = [];
  const umaskOf = (pid: number) => umask.get(pid) ?? rootUmask;
  const check = (path: string, m: number | undefined, why: string) => {
    if (!path.startsWith(`${allowedDir}/`)) out.push(`${why}: secret in ${path}, outside ${allowedDir}`);
    else if (m === undefined) out.push(`${why}: secret in ${path}, whose mode the trace never set`);
    // Written while private (0600); afterwards at most group-readable (the nginx include, 0640 root:root).
    else if ((m & (why === "write" ? 0o077 : 0o037)) !== 0) out.push(`${why}: secret in ${path} with mode ${m.toString(8)}`);
  };
  for (const { pid, call } of trace) {
    let m: RegExpExecArray | null;
    if ((m = /^(?:clone3?|vfork|fork)\(.*\) = (\d+)$/.exec(call))) {
      umask.set(Number(m[1]), umaskOf(pid));
    } else if ((m = /^umask\((\d+)\)\s+= \d+$/.exec(call))) {
      umask.set(pid, parseInt(m[1]!, 8));
    } else if ((m = /^(?:openat|open|creat)\((?:(AT_FDCWD<[^>]*>|\d+<[^>]*>), )?"([^"]*)", ([A-Z_|]+)(?:, (0\d+))?\) = \d+<([^>]*)>$/.exec(call))) {
      const path = m[5]!;
      if (/O_CREAT/.test(m[3]!) && (/O_EXCL/.test(m[3]!) || !mode.has(path))) mode.set(path, parseInt(m[4] ?? "0666", 8) & ~umaskOf(pid));
      if (/O_TRUNC/.test(m[3]!)) holdsSecret.delete(path);
    } else if ((m = /^(?:write|pwrite64|writev)\(\d+<([^>]*)>, (.*)\) = \d+$/.exec(call))) {
      const path = m[1]!;
      if (!path.startsWith("/") || path.startsWith("/dev/") || path.startsWith("/proc/")) continue;
      if (!secrets.some((s) => m![2]!.includes(s))) continue;
      holdsSecret.add(path);
      check(path, mode.get(path), "write");
    } else if ((m = /^copy_file_range\(\d+<([^>]*)>, [^,]+, \d+<([^>]*)>, .*\) = [1-9]\d*$/.exec(call)) || (m = /^sendfile\(\d+<([^>]*)>, \d+<([^>]*)>, .*\) = [1-9]\d*$/.exec(call))) {
      // cat copies file to file in the kernel (copy_file_range, sendfile): no bytes to see.
      const [from, to] = call.startsWith("sendfile") ? [m[2]!, m[1]!] : [m[1]!, m[2]!];
      if (holdsSecret.has(from) && to.startsWith("/")) {
        holdsSecret.add(to);
        check(to, mode.get(to), "write");
      }
    } else if ((m = /^(?:fchmodat|chmod)\((?:(AT_FDCWD<[^>]*>|\d+<[^>]*>), )?"([^"]*)", (0\d+)\) = 0$/.exec(call))) {
      const path = resolvePath(m[1], m[2]!);
      mode.set(path, parseInt(m[3]!, 8));
      if (holdsSecret.has(path)) check(path, mode.get(path), "chmod");
    } else if ((m = /^fchmod\(\d+<([^>]*)>, (0\d+)\) = 0$/.exec(call))) {
      mode.set(m[1]!, parseInt(m[2]!, 8));
      if (holdsSecret.has(m[1]!)) check(m[1]!, mode.get(m[1]!), "chmod");
    } else if ((m = /^rename(?:at2?)?\((?:(AT_FDCWD<[^>]*>|\d+<[^>]*>), )?"([^"]*)", (?:(AT_FDCWD<[^>]*>|\d+<[^>]*>), )?"([^"]*)"(?:, \w+)?\) = 0$/.exec(call))) {
      const from = resolvePath(m[1], m[2]!);
      const to = resolvePath(m[3], m[4]!);
      mode.set(to, mode.get(from)!);
      if (holdsSecret.delete(from)) {
        holdsSecret.add(to);
        check(to, mode.get(to), "rename");
      } else holdsSecret.delete(to);
    }
  }
  return out;
}

describe.skipIf(!ready)("secrets on disk during a real --root install", () => {
  it("token, api_hash, webhook secret and TLS key are only ever written 0600 under /etc/docket", async () => {
    const work = testTempDir("secrets");
    const root = join(work, "root");
    const tmp = join(work, "tmp");
    for (const d of [root, tmp, join(root, "etc/docket/tls")]) mkdirSync(d, { recursive: true });
    writeSelfSignedTls(join(root, "etc/docket/tls/fullchain.pem"), join(root, "etc/docket/tls/privkey.pem"));
    const token = fakeToken();
    const traceDir = join(work, "trace");
    mkdirSync(traceDir);
    const r = await runCmdAsync(
      ["sh", "-c", 'umask 022 && exec strace -ff -ttt -qq -y -s 65536 -e trace=open,openat,creat,write,writev,pwrite64,copy_file_range,sendfile,chmod,fchmod,fchmodat,rename,renameat,renameat2,umask,clone,clone3,fork,vfork -o "$0" bash scripts/install.sh "$@"',
        join(traceDir, "st"), "--non-interactive", "--root", root, "--mode", "local", "--api-id", "42", "--webhook-url", "https://bot.example.org/hook", "--no-start", "--download-budget", "16MB"],
      { env: { BOT_TOKEN: token, TELEGRAM_API_HASH: API_HASH, TMPDIR: tmp }, timeoutMs: 300_000 },
    );
    expect(r.stderr).toContain("==> step");
    expect(r.status).toBe(0);
    const env = readFileSync(join(root, "etc/docket/docket.env"), "utf8");
    const webhookSecret = /^WEBHOOK_SECRET=(.+)$/m.exec(env)![1]!;
    const secrets = [token.split(":")[1]!, API_HASH, webhookSecret];
    // The TLS private key is one too: nginx gets a copy of it.
    const tlsKey = join(root, "etc/docket/tls/privkey.pem");
    const trace = readTrace(traceDir, "st");
    // The trace saw the secrets being written (a trace that misses them proves nothing).
    const secretWrites = trace.filter((l) => /^write\(\d+<\//.test(l.call) && secrets.some((s) => l.call.includes(s)));
    expect(secretWrites.length).toBeGreaterThanOrEqual(3);
    expect(trace.some((l) => l.call.startsWith(`copy_file_range(3<${tlsKey}>`) || l.call.includes(`<${tlsKey}>`))).toBe(true);
    expect(secretViolations(trace, secrets, [tlsKey], join(root, "etc/docket"), 0o022)).toEqual([]);
    expect(readdirSync(tmp)).toEqual([]);
    expect([modeOf(join(root, "etc/docket/docket.env")), modeOf(join(root, "etc/docket/bot-api.env"))]).toEqual(["600", "600"]);
  });
});
