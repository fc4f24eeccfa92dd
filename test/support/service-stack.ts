/**
 * Local mode as it runs on a host (issue 16, issue 9 item 7): the emulator plays a `--local` Bot API
 * server whose files belong to the server's own user (0640, dirs 0750), and the real bot runs as a
 * separate process (`bun bot/main.ts`, environment only, like the unit) as the bot's unprivileged
 * user — in the server's group or not — optionally inside the unit's file-system sandbox
 * (test/support/unit-sandbox.ts). `accounts: null` keeps one run as root. The layout mirrors the
 * install: `<root>/var/lib/docket` is DATA_DIR with db/, downloads/, work/, results/ owned by the
 * bot, and `<root>/var/lib/docket/bot-api` is LOCAL_BOT_API_DIR owned by the server.
 * Tests read the job rows from the bot's SQLite file and talk to the bot as chat users.
 */
import { Database } from "bun:sqlite";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT, botEnv } from "../../scripts/demo/bot-process.ts";
import { ENDED_STATES } from "../../bot/jobs/states.ts";
import { startEmulator, type Emulator, type EmulatorOptions } from "../emulator/index.ts";
import type { ServiceAccounts } from "./service-users.ts";
import { inUnitSandbox } from "./unit-sandbox.ts";
import { asUser } from "./unprivileged.ts";

/** The columns of a job row the tests look at (snake_case, as stored). */
export interface JobRow {
  readonly id: number;
  readonly chat_id: number;
  readonly message_id: number;
  readonly status: string;
  readonly reason: string | null;
  readonly local_path: string | null;
  readonly real_size: number | null;
  readonly sha256: string | null;
  readonly reserved_bytes: number;
  readonly attempts: number;
}

/** Options of {@link startServiceStack}. */
export interface ServiceStackOptions {
  /** The server's and the bot's accounts; null runs the bot as root (files still 0640 / 0750, root's). */
  readonly accounts: ServiceAccounts | null;
  /** Whether the bot's user gets the server's group as a supplementary group (SupplementaryGroups=). Default true. */
  readonly inServerGroup?: boolean;
  /** Run the bot inside the unit's sandbox (mount namespace). Default false. */
  readonly sandbox?: boolean;
  /** More emulator options (mode, localDir and localOwner are set here). */
  readonly emulator?: Omit<EmulatorOptions, "mode" | "localDir" | "localOwner">;
  /** More environment for the bot. */
  readonly env?: Record<string, string>;
}

/** A running emulator + bot process. */
export interface ServiceStack {
  readonly em: Emulator;
  /** The test's root directory. */
  readonly root: string;
  readonly dataDir: string;
  readonly botApiDir: string;
  /** The bot's log lines (JSON, stdout and stderr) so far. */
  readonly logs: string[];
  /** The job row of a user's message (waits for the INSERT). */
  jobFor(chatId: number, messageId: number, timeoutMs?: number): Promise<JobRow>;
  /** Wait until job `id` is in one of `states` (default: an ended state). */
  waitJob(id: number, states?: readonly string[], timeoutMs?: number): Promise<JobRow>;
  /** Whether the process has exited. */
  exited(): boolean;
  /** SIGTERM the bot and wait for it; resolves with its exit code. */
  stop(): Promise<number>;
  /** Stop the bot and start it again on the same data, in the server's group or not (default: as at the start). */
  restart(inServerGroup?: boolean): Promise<void>;
  /** Stop the bot (if running) and the emulator, and delete the test's files. */
  close(): Promise<void>;
}

/** Read every line of `stream` into `into`. */
async function collect(stream: ReadableStream<Uint8Array>, into: string[]): Promise<void> {
  const decoder = new TextDecoder();
  let rest = "";
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) {
    rest += decoder.decode(chunk, { stream: true });
    const lines = rest.split("\n");
    rest = lines.pop()!;
    for (const l of lines) if (l.trim()) into.push(l);
  }
  if (rest.trim()) into.push(rest);
}

/** chown -R (no symlinks are followed: there are none in a fresh data dir). */
function chownTree(p: string, uid: number, gid: number): void {
  chownSync(p, uid, gid);
  if (!statSync(p).isDirectory()) return;
  for (const name of readdirSync(p)) chownTree(join(p, name), uid, gid);
}

/** Start the emulator (local mode) and the bot process as configured. */
export async function startServiceStack(opts: ServiceStackOptions): Promise<ServiceStack> {
  const root = mkdtempSync(join(tmpdir(), "docket-svc-"));
  chmodSync(root, 0o755);
  const stage = mkdtempSync(join("/dev/shm", "docket-svc-stage-"));
  const dataDir = join(root, "var", "lib", "docket");
  const botApiDir = join(dataDir, "bot-api");
  const { accounts } = opts;
  // Layout as disk-layout.sh makes it: DATA_DIR and its parts the bot's, 0750.
  for (const d of [dataDir, ...["db", "downloads", "work", "results"].map((s) => join(dataDir, s))]) {
    mkdirSync(d, { recursive: true, mode: 0o750 });
    chmodSync(d, 0o750);
    if (accounts) chownSync(d, accounts.bot.uid, accounts.bot.gid);
  }
  for (const p of [join(root, "var"), join(root, "var", "lib")]) chmodSync(p, 0o755);
  const em = await startEmulator({
    rateLimits: false,
    repeatPollRule: false,
    ...opts.emulator,
    mode: "local",
    localDir: botApiDir,
    ...(accounts ? { localOwner: { uid: accounts.server.uid, gid: accounts.server.gid } } : {}),
  });
  // The server's --dir exists before the bot starts (the container creates it), 0750, the server's.
  mkdirSync(botApiDir, { recursive: true, mode: 0o750 });
  chmodSync(botApiDir, 0o750);
  if (accounts) chownSync(botApiDir, accounts.server.uid, accounts.server.gid);

  const env = botEnv(em, dataDir, {
    LOCAL_BOT_API_DIR: botApiDir,
    LOG_LEVEL: "info",
    LEASE_TTL: "5s",
    PDF_PAGE_BUDGET: "10s",
    HOME: root,
    // The unit points Bun's transpiler cache at /var/cache/docket; here it is off (nothing outside the data dirs is writable).
    BUN_RUNTIME_TRANSPILER_CACHE_PATH: "0",
    ...opts.env,
  });
  const logs: string[] = [];
  let proc: ReturnType<typeof Bun.spawn>;
  let reading: Promise<unknown>;
  let code: number | null = null;
  const spawnBot = (inGroup: boolean) => {
    // A bot that ran before may have left db files; a root-owned one would lock the bot's user out.
    if (accounts) chownTree(join(dataDir, "db"), accounts.bot.uid, accounts.bot.gid);
    const bun = ["bun", "--no-env-file", "bot/main.ts"];
    const user = accounts ? [...asUser(accounts.bot.uid, accounts.bot.gid, inGroup ? [accounts.server.gid] : []), "--no-new-privs", "--inh-caps=-all", ...bun] : bun;
    const cwd = accounts?.repoRoot ?? REPO_ROOT;
    const argv = opts.sandbox ? inUnitSandbox(user, root, stage, [cwd]) : user;
    code = null;
    const p = Bun.spawn(argv, { cwd, env, stdout: "pipe", stderr: "pipe" });
    reading = Promise.all([collect(p.stdout as ReadableStream<Uint8Array>, logs), collect(p.stderr as ReadableStream<Uint8Array>, logs)]);
    void p.exited.then((c) => void (code = c));
    proc = p;
  };
  spawnBot(opts.inServerGroup ?? true);

  const dbFile = join(dataDir, "db", "docket.sqlite");
  const rows = (where: string, ...args: number[]): JobRow[] => {
    let db: Database;
    try {
      db = new Database(dbFile, { readonly: true });
    } catch {
      return []; // not created yet
    }
    try {
      return db.query(`SELECT id, chat_id, message_id, status, reason, local_path, real_size, sha256, reserved_bytes, attempts FROM file_jobs WHERE ${where}`).all(...args) as JobRow[];
    } catch {
      return []; // not migrated yet
    } finally {
      db.close();
    }
  };
  const poll = async <T>(what: string, timeoutMs: number, get: () => T | undefined): Promise<T> => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const v = get();
      if (v !== undefined) return v;
      if (code !== null) throw new Error(`the bot exited (${code}) while waiting for ${what}; log:\n${logs.slice(-30).join("\n")}`);
      if (Date.now() > until) throw new Error(`${what} after ${timeoutMs} ms; log:\n${logs.slice(-30).join("\n")}`);
      await Bun.sleep(50);
    }
  };

  const stop = async (): Promise<number> => {
    if (code === null) proc.kill("SIGTERM");
    const c = await proc.exited;
    await reading;
    return c;
  };
  const restart = async (inGroup = opts.inServerGroup ?? true): Promise<void> => {
    await stop();
    spawnBot(inGroup);
  };
  return {
    em,
    root,
    dataDir,
    botApiDir,
    logs,
    jobFor: (chatId, messageId, timeoutMs = 15_000) => poll(`no job for message ${messageId}`, timeoutMs, () => rows("chat_id = ? AND message_id = ?", chatId, messageId)[0]),
    waitJob: (id, states = ENDED_STATES, timeoutMs = 30_000) =>
      poll(`job ${id} not in ${states.join("/")}`, timeoutMs, () => rows("id = ?", id).find((r) => states.includes(r.status))),
    exited: () => code !== null,
    stop,
    restart,
    async close() {
      if (code === null) {
        proc.kill("SIGKILL");
        await proc.exited;
      }
      await em.close();
      rmSync(root, { recursive: true, force: true });
      rmSync(stage, { recursive: true, force: true });
    },
  };
}
