/**
 * A real, throwaway PostgreSQL server for the suites (issue 14 item 2: "started by the test command in
 * a throwaway directory on a free port, and stopped after"; no mock). Debian's binaries
 * (`toolPath("postgres")`, /usr/lib/postgresql/<major>/bin) run as an unprivileged user — the server
 * refuses to run as root — on 127.0.0.1 and a free port, with a password (scram-sha-256), so every
 * `DATABASE_URL` a test hands the bot carries a secret as a real one does.
 *
 * One server per test file ({@link usePgServer}); each test or process gets its own database
 * ({@link PgServer.createDatabase}, copied from an empty template). `initdb` runs once per machine
 * and user: its output is cached under the system temp dir and copied for each server (≈ 0.1 s
 * instead of ≈ 2 s). Durability is off (`fsync`, `synchronous_commit`, `full_page_writes`): the
 * data lives as long as the test.
 */
import { chownSync, cpSync, existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll } from "vitest";
import { NOBODY, asUser } from "./unprivileged.ts";
import { freePort } from "./ports.ts";
import { toolPath } from "./tools.ts";

/** The superuser the tests connect as. */
export const PG_USER = "docket";
/** Its password (a URL secret the bot must never log). */
export const PG_PASSWORD = "s3cret-pg-pass";

/** A running server. */
export interface PgServer {
  readonly port: number;
  /** The data directory (inside a throwaway dir). */
  readonly dataDir: string;
  /** `postgres://docket:<password>@127.0.0.1:<port>/<database>`. */
  url(database?: string): string;
  /** A new database — empty, or a copy of `template` (which must have no open connection); its name. */
  createDatabase(prefix?: string, template?: string): Promise<string>;
  /** Drop a database made by {@link createDatabase} (its connections are ended first). */
  dropDatabase(name: string): Promise<void>;
  /** Stop the server (fast shutdown) and remove its directory. */
  stop(): Promise<void>;
  /** Stop the server without removing anything (an outage); {@link start} brings it back on the same port. */
  pause(): Promise<void>;
  /** Start it again after {@link pause}. */
  start(): Promise<void>;
}

/** uid/gid the server runs as: `nobody` when the tests run as root, else the current user. */
function serverUser(): { uid: number; gid: number; prefix: string[] } {
  if (process.getuid?.() === 0) return { uid: NOBODY, gid: NOBODY, prefix: asUser(NOBODY) };
  return { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0, prefix: [] };
}

/** Run a PostgreSQL binary as the server user; throws with its output on failure. */
function runAs(prefix: string[], argv: string[]): void {
  const r = Bun.spawnSync([...prefix, ...argv], { stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LANG: "C" } });
  if (r.exitCode !== 0) throw new Error(`${argv[0]} failed (${r.exitCode}): ${r.stderr.toString()}${r.stdout.toString()}`);
}

/** A directory the server user owns (0700), inside a world-traversable temp dir. */
function ownedDir(uid: number, gid: number): string {
  const dir = mkdtempSync(join(tmpdir(), "docket-pg-"));
  Bun.spawnSync(["chmod", "0711", dir]);
  chownSync(dir, uid, gid);
  return dir;
}

/** The cached output of initdb for this major and user (made once, atomically renamed into place). */
function initdbTemplate(bin: string, user: { uid: number; gid: number; prefix: string[] }): string {
  const major = basename(dirname(dirname(bin)));
  const cache = join(tmpdir(), `docket-pg-initdb-${major}-${user.uid}`);
  if (existsSync(join(cache, "PG_VERSION"))) return cache;
  const work = ownedDir(user.uid, user.gid);
  const pwfile = join(work, "pw");
  writeFileSync(pwfile, PG_PASSWORD);
  chownSync(pwfile, user.uid, user.gid);
  runAs(user.prefix, [join(dirname(bin), "initdb"), "-D", join(work, "data"), "-U", PG_USER, "--pwfile", pwfile, "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-locale", "--no-sync"]);
  try {
    renameSync(join(work, "data"), cache);
  } catch {
    // Another test process made it first: use theirs.
  }
  rmSync(work, { recursive: true, force: true });
  return cache;
}

/**
 * Start a server in a new throwaway directory on a free port.
 * @param extraOptions more `-c name=value` server options (e.g. bench/queue/pg-diagnose.ts loads pg_stat_statements)
 * @throws Error when PostgreSQL is not installed (ask `toolReady("postgres")` first) or does not start
 */
export async function startPgServer(extraOptions: readonly string[] = []): Promise<PgServer> {
  const bin = toolPath("postgres");
  if (!bin) throw new Error("PostgreSQL is not installed (Debian package postgresql)");
  const user = serverUser();
  const template = initdbTemplate(bin, user);
  const root = ownedDir(user.uid, user.gid);
  const dataDir = join(root, "data");
  cpSync(template, dataDir, { recursive: true });
  Bun.spawnSync(["chown", "-R", `${user.uid}:${user.gid}`, dataDir]);
  Bun.spawnSync(["chmod", "0700", dataDir]);
  const pgCtl = join(dirname(bin), "pg_ctl");
  let port = 0;
  const options = () =>
    [
      `-p ${port}`,
      `-k ${root}`,
      "-c listen_addresses=127.0.0.1",
      "-c fsync=off",
      "-c synchronous_commit=off",
      "-c full_page_writes=off",
      "-c max_connections=200",
      "-c shared_buffers=32MB",
      "-c log_min_messages=warning",
      ...extraOptions,
    ].join(" ");
  const start = async () => {
    for (let i = 0; ; i++) {
      if (port === 0 || i > 0) port = freePort();
      try {
        runAs(user.prefix, [pgCtl, "-D", dataDir, "-l", join(root, "server.log"), "-w", "-t", "60", "-o", options(), "start"]);
        return;
      } catch (err) {
        if (i >= 4) throw err;
      }
    }
  };
  await start();
  let n = 0;
  const url = (database = "postgres") => `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${port}/${database}`;
  const admin = () => postgres(url(), { max: 1, onnotice: () => {} });
  const server: PgServer = {
    get port() {
      return port;
    },
    dataDir,
    url,
    async createDatabase(prefix = "t", template = "template0") {
      const name = `${prefix}_${process.pid}_${++n}`;
      const sql = admin();
      try {
        await sql.unsafe(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
      } finally {
        await sql.end({ timeout: 1 });
      }
      return name;
    },
    async dropDatabase(name) {
      const sql = admin();
      try {
        await sql.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await sql.end({ timeout: 1 });
      }
    },
    async pause() {
      runAs(user.prefix, [pgCtl, "-D", dataDir, "-m", "immediate", "-w", "stop"]);
    },
    async start() {
      // Same port: clients reconnect to the URL they were given.
      runAs(user.prefix, [pgCtl, "-D", dataDir, "-l", join(root, "server.log"), "-w", "-t", "60", "-o", options(), "start"]);
    },
    async stop() {
      try {
        runAs(user.prefix, [pgCtl, "-D", dataDir, "-m", "fast", "-w", "stop"]);
      } catch {
        // already stopped (a test paused it)
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
  return server;
}

/**
 * One server for the calling test file: started in `beforeAll`, stopped in `afterAll`; `set` receives it.
 * Call inside a `describe.skipIf(!toolReady("postgres"))` block (or after the check) so a machine
 * without PostgreSQL skips the file with the package named.
 */
export function usePgServer(set: (server: PgServer) => void): void {
  let server: PgServer | undefined;
  beforeAll(async () => {
    server = await startPgServer();
    set(server);
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });
}

