/**
 * Shared helpers of the appliance-bundle tests (test/bundle): paths, external tools, throwaway
 * roots, command runs and tree snapshots. Nothing here reaches a network other than 127.0.0.1.
 */
import { createHash } from "node:crypto";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, lstatSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { onTestFinished } from "vitest";
import { toolPath } from "../support/tools";

/** Absolute path of the repository root (the directory holding package.json). */
export const repoRoot: string = resolve(import.meta.dirname, "../..");

/** True when running in CI (`CI=true`), where a missing tool is a failure, not a skip. */
export const isCI: boolean = process.env.CI === "true" || process.env.CI === "1";

/** Result of {@link runCmd}: exit status and both output streams as UTF-8 text. */
export interface CmdResult {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Run a command synchronously (no shell), with a bounded time.
 * @param argv program and arguments
 * @param opts cwd, extra environment (merged over process.env), stdin text, timeout in ms (default 60 000)
 * @returns exit status (-1 when killed by a signal or the timeout) and outputs
 */
export function runCmd(
  argv: readonly string[],
  opts: { cwd?: string; env?: Record<string, string | undefined>; stdin?: string; timeoutMs?: number } = {},
): CmdResult {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, ...opts.env })) if (v !== undefined) env[k] = v;
  const proc = Bun.spawnSync([...argv], {
    cwd: opts.cwd ?? repoRoot,
    env,
    stdin: opts.stdin === undefined ? "ignore" : Buffer.from(opts.stdin),
    stdout: "pipe",
    stderr: "pipe",
    timeout: opts.timeoutMs ?? 60_000,
  });
  return {
    status: proc.exitCode ?? -1,
    stdout: proc.stdout.toString(),
    stderr: proc.stderr.toString(),
  };
}

/**
 * Run a command asynchronously (so a Bun.serve in the same test can answer it).
 * Same contract as {@link runCmd}.
 */
export async function runCmdAsync(
  argv: readonly string[],
  opts: { cwd?: string; env?: Record<string, string | undefined>; timeoutMs?: number } = {},
): Promise<CmdResult> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, ...opts.env })) if (v !== undefined) env[k] = v;
  const proc = Bun.spawn([...argv], {
    cwd: opts.cwd ?? repoRoot,
    env,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    timeout: opts.timeoutMs ?? 60_000,
  });
  const [stdout, stderr, status] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { status, stdout, stderr };
}

/**
 * The compose client this machine has: `docker compose` (v2 plugin) when present, else
 * `docker-compose` (v1, Debian 12's package, brought by the test command), else null.
 * Only `config` is run with it (no engine needed).
 */
export function composeClient(): string[] | null {
  const exe = toolPath("compose");
  if (!exe) return null;
  return exe.endsWith("/docker") ? [exe, "compose"] : [exe];
}

/**
 * Render with the real compose client the project an install.sh compose call names: `line` is
 * one recorded call ("compose -p docket -f A [-f B] --env-file E up -d …"); its files and env
 * file are kept and the subcommand is replaced by `config`. `etcDir` replaces DOCKET_ETC_DIR
 * (the throwaway root's /etc/docket), as a shell variable overrides the env file.
 * @returns the client's result; stdout is the rendered YAML on success
 */
export function composeConfigOf(client: readonly string[], line: string, etcDir: string): CmdResult {
  const words = line.trim().split(/\s+/).slice(1);
  const keep: string[] = [];
  for (let i = 0; i < words.length; i++) {
    if (words[i] === "-p" || words[i] === "-f" || words[i] === "--env-file") keep.push(words[i]!, words[++i]!);
  }
  return runCmd([...client, ...keep, "config"], { env: { DOCKET_ETC_DIR: etcDir } });
}

/** A fresh directory under the system temp dir; remove it with {@link removeDir}. */
export function makeTempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `docket-${prefix}-`));
}

/**
 * A fresh temp directory ({@link makeTempDir}) removed when the current test finishes, pass or
 * fail (vitest `onTestFinished`). Call it inside a test, not in a hook.
 */
export function testTempDir(prefix: string): string {
  const dir = makeTempDir(prefix);
  onTestFinished(() => removeDir(dir));
  return dir;
}

/** Recursive delete, ignoring a missing path. */
export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** Write an executable file (mode 0755). */
export function writeExecutable(path: string, content: string): void {
  writeFileSync(path, content);
  chmodSync(path, 0o755);
}

/**
 * Snapshot of a directory tree: one line per entry with type, mode, size and, for files, the
 * SHA-256 of the content (for links, the target). Equal snapshots = nothing was changed.
 */
export function snapshotTree(root: string): string[] {
  const lines: string[] = [];
  const walk = (dir: string, rel: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const abs = join(dir, name);
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(abs);
      const mode = (st.mode & 0o7777).toString(8);
      if (st.isSymbolicLink()) lines.push(`l ${mode} ${r} -> ${readlinkSync(abs)}`);
      else if (st.isDirectory()) {
        lines.push(`d ${mode} ${r}`);
        walk(abs, r);
      } else {
        const sum = createHash("sha256").update(readFileSync(abs)).digest("hex");
        lines.push(`f ${mode} ${st.size} ${r} ${sum}`);
      }
    }
  };
  walk(root, "");
  return lines;
}

/** Octal permission bits of a path, e.g. "750". */
export function modeOf(path: string): string {
  return (lstatSync(path).mode & 0o777).toString(8);
}

/**
 * A recorder executable: every call appends "name arg1 arg2…" to `log`. Stands in for
 * systemctl / docker compose in --root installs (install.sh honours SYSTEMCTL, DOCKER_COMPOSE).
 * @returns the path of the executable
 */
export function makeRecorder(dir: string, name: string, log: string): string {
  const path = join(dir, name);
  writeExecutable(path, `#!/bin/sh\nprintf '%s %s\\n' '${name}' "$*" >> '${log}'\n`);
  return path;
}

/**
 * A self-signed certificate for `host` and its key (EC P-256), as PEM files `cert` and `key`
 * (the key 0600). install.sh checks that they are a real pair before nginx gets them.
 * @throws Error with openssl's message when it fails
 */
export function writeSelfSignedTls(cert: string, key: string, host = "bot.example.org"): void {
  mkdirSync(dirname(cert), { recursive: true });
  mkdirSync(dirname(key), { recursive: true });
  const k = runCmd(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key]);
  const c = runCmd(["openssl", "req", "-x509", "-new", "-key", key, "-days", "2", "-subj", `/CN=${host}`, "-addext", `subjectAltName=DNS:${host}`, "-out", cert]);
  if (k.status !== 0 || c.status !== 0) throw new Error(`openssl failed: ${k.stderr}${c.stderr}`);
  chmodSync(key, 0o600);
}

/** A syntactically valid fake bot token (Bot API form `<id>:<secret>`), unique per call. */
export function fakeToken(): string {
  const secret = createHash("sha256").update(String(Math.random())).digest("base64url").slice(0, 35);
  return `7${Math.floor(Math.random() * 1e9)}:${secret}`;
}

/** Executables the units name; stubs stand in for them under a verify root. */
export const UNIT_EXECUTABLES: readonly string[] = [
  "/usr/local/bin/bun",
  "/opt/docket/current/scripts/backup.sh",
  "/opt/docket/current/scripts/container.sh",
  "/etc/docket/hooks/on-failure",
  "/usr/bin/test",
];

/**
 * Make `root` usable by `systemd-analyze verify --root=ROOT`: a copy of the host's
 * /usr/lib/systemd/system (so sysinit.target etc. resolve) and a stub executable at each of
 * {@link UNIT_EXECUTABLES} not already there, and a stand-in docker.service (the container units
 * require it). Units go to ROOT/etc/systemd/system (caller's job).
 */
export function prepareVerifyRoot(root: string): void {
  mkdirSync(join(root, "usr/lib/systemd"), { recursive: true });
  if (existsSync("/usr/lib/systemd/system") && !existsSync(join(root, "usr/lib/systemd/system"))) {
    cpSync("/usr/lib/systemd/system", join(root, "usr/lib/systemd/system"), { recursive: true, verbatimSymlinks: true });
  }
  mkdirSync(join(root, "etc/systemd/system"), { recursive: true });
  // The container units require docker.service, which Debian's docker.io ships; a stand-in here.
  const docker = join(root, "usr/lib/systemd/system/docker.service");
  if (!existsSync(docker)) writeFileSync(docker, "[Unit]\nDescription=Docker (stand-in for systemd-analyze verify)\n[Service]\nExecStart=/usr/bin/test\n");
  for (const s of UNIT_EXECUTABLES) {
    if (existsSync(join(root, s))) continue;
    mkdirSync(dirname(join(root, s)), { recursive: true });
    writeExecutable(join(root, s), "#!/bin/sh\nexit 0\n");
  }
}
