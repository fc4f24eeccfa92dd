/**
 * The restore drill (`docket backup verify`, issue 10 item 5), the I/O shell around
 * ./verify-core.ts: restore the latest backup — the newest local `docket-*` directory, or the
 * newest restic snapshot — into a throwaway directory with the release's own scripts/restore.sh
 * (the same path a real restore takes: checksums, integrity_check, the copy), then read the
 * restored database and the live one, and judge. The result goes to the status file
 * (CONTRACTS.md §1, `verify`) and, when it failed, to the admins (`docket notify verify_failed`,
 * CONTRACTS.md §2, best-effort).
 */
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { parseEnv } from "../env-file.ts";
import { progressLine } from "../progress.ts";
import { writeBackupStatus } from "./status.ts";
import { judgeRestore, type AppliedMigration, type ReleaseMigration, type TableCount, type Verdict } from "./verify-core.ts";

/** Options of {@link verifyLatestBackup}. Paths are as seen inside `root`, like the scripts' --root. */
export interface VerifyOptions {
  /** Which backup: the newest local one, or the newest restic snapshot (default: restic when configured). */
  readonly from?: "local" | "restic";
  /** DATA_DIR (inside `root`). */
  readonly dataDir: string;
  /** BACKUP_DIR (inside `root`; default `<dataDir>/backups`). */
  readonly backupDir?: string;
  /** A throwaway root (tests): every absolute path lands under it; "" = the real system. */
  readonly root?: string;
  /** The release whose scripts restore and whose migrations are expected (default: this code's). */
  readonly releaseDir?: string;
  /** Keep the throwaway directory (for a look at it); its path is printed. */
  readonly keep?: boolean;
  readonly now?: () => number;
  /** Where the verdict line goes (default stdout). */
  readonly out?: (line: string) => void;
}

/** This code's release directory (the tree holding bot/ and scripts/). */
const OWN_RELEASE = join(import.meta.dirname, "../..");

/** A release's id: the directory name under /opt/docket/releases, else the source tree's path. */
export function releaseId(dir: string): string {
  const real = realpathSync(dir);
  return basename(dirname(real)) === "releases" ? basename(real) : `of the source tree ${real}`;
}

/** The migrations a release ships: journal `when` and `tag`, SHA-256 of each SQL file (drizzle's own reader). */
export function releaseMigrations(dir: string): ReleaseMigration[] {
  const folder = join(dir, "bot/db/migrations");
  const journal = JSON.parse(readFileSync(join(folder, "meta/_journal.json"), "utf8")) as { entries: { when: number; tag: string }[] };
  const files = readMigrationFiles({ migrationsFolder: folder });
  return journal.entries.map((e, i) => ({ when: e.when, tag: e.tag, hash: files[i]!.hash }));
}

/** Row counts of every table of `db` (SQLite's and drizzle's own tables left out). */
function tableCounts(db: Database): Map<string, number> {
  const names = db
    .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '__drizzle_migrations' ORDER BY name")
    .all()
    .map((r) => r.name);
  return new Map(names.map((n) => [n, db.query<{ n: number }, []>(`SELECT count(*) AS n FROM "${n.replaceAll('"', '""')}"`).get()!.n]));
}

function appliedMigrations(db: Database): AppliedMigration[] {
  const has = db.query<{ n: number }, []>("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'").get()!.n;
  if (!has) return [];
  return db.query<{ created_at: number; hash: string }, []>("SELECT created_at, hash FROM __drizzle_migrations ORDER BY created_at").all().map((r) => ({ createdAt: Number(r.created_at), hash: r.hash }));
}

/** True when a restic repository is configured (the environment, or /etc/docket/restic.env). */
export function resticConfigured(root = ""): boolean {
  if (process.env.RESTIC_REPOSITORY || process.env.RESTIC_REPOSITORY_FILE) return true;
  try {
    const env = parseEnv(readFileSync(`${root}${process.env.RESTIC_ENV_FILE ?? "/etc/docket/restic.env"}`, "utf8"));
    return Boolean(env.RESTIC_REPOSITORY || env.RESTIC_REPOSITORY_FILE);
  } catch {
    return false;
  }
}

/** KEY=VALUE lines of a MANIFEST. */
function readManifest(dir: string): Record<string, string> {
  try {
    return parseEnv(readFileSync(join(dir, "MANIFEST"), "utf8"));
  } catch {
    return {};
  }
}

/** Run restore.sh; resolves with its exit status and its last `error:` line. Its steps show as progress on a TTY. */
async function runRestore(script: string, args: string[]): Promise<{ status: number; error: string }> {
  const child = Bun.spawn(["bash", script, ...args], { stdin: "ignore", stdout: "ignore", stderr: "pipe" });
  const line = progressLine();
  let error = "";
  let buf = "";
  const decoder = new TextDecoder();
  for await (const chunk of child.stderr) {
    buf += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const l = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (l.startsWith("error: ")) error = l.slice(7);
      const step = /^==> step [\d.]+: (.*)$/.exec(l);
      if (step) line.update(`  restore: ${step[1]}`);
    }
  }
  if (buf.startsWith("error: ")) error = buf.slice(7).trim();
  line.done();
  return { status: await child.exited, error };
}

/**
 * Restore the latest backup into a throwaway directory and judge it; record the result and alert
 * on a failure. Never throws for a bad backup: that is a FAILED verdict.
 * @throws only when the status file cannot be written (the caller reports it)
 */
export async function verifyLatestBackup(opts: VerifyOptions): Promise<Verdict> {
  const root = opts.root ?? "";
  const now = opts.now ?? Date.now;
  const out = opts.out ?? ((l: string) => console.log(l));
  const releaseDir = opts.releaseDir ?? OWN_RELEASE;
  const backups = `${root}${opts.backupDir ?? join(opts.dataDir, "backups")}`;
  const from = opts.from ?? (resticConfigured(root) ? "restic" : "local");
  const started = now();
  let verdict: Verdict;
  let scratch = "";
  try {
    mkdirSync(backups, { recursive: true });
    scratch = mkdtempSync(join(backups, ".verify-"));
    verdict = await drill();
  } catch (err) {
    verdict = { ok: false, line: `backup verify: FAILED: ${(err as Error).message}`, error: (err as Error).message };
  } finally {
    if (scratch && !opts.keep) rmSync(scratch, { recursive: true, force: true });
  }
  out(verdict.line);
  if (opts.keep && scratch) out(`  the restored copy stays in ${scratch}`);
  writeBackupStatus(`${root}${opts.dataDir}`, { verify: { ok: verdict.ok, at: Math.floor(started / 1000), ...(verdict.error ? { error: verdict.error } : {}) } });
  if (!verdict.ok) notify("verify_failed", verdict.line);
  return verdict;

  async function drill(): Promise<Verdict> {
    const inRoot = scratch.slice(root.length); // the scratch directory as seen inside root
    const args = ["--no-service", "--data-dir", inRoot, ...(root ? ["--root", root] : [])];
    let source: string;
    let backupDir: string;
    if (from === "local") {
      const latest = existsSync(backups) ? readdirSync(backups).filter((n) => /^docket-\d{8}T\d{6}Z(-\d+)?$/.test(n)).sort().at(-1) : undefined;
      if (!latest) return { ok: false, line: `backup verify: FAILED: no local backup (docket-*) in ${backups}`, error: `no local backup in ${backups}` };
      backupDir = join(backups, latest);
      source = latest;
      args.push(backupDir);
    } else {
      args.push("--from-restic", "latest");
      source = "restic snapshot";
      backupDir = "";
    }
    const restore = await runRestore(join(releaseDir, "scripts/restore.sh"), args);
    if (restore.status !== 0) {
      const error = `the restore failed: ${restore.error || `restore.sh exited ${restore.status}`}`;
      return { ok: false, line: `backup verify: FAILED ${source}: ${error}`, error };
    }
    if (from === "restic") {
      const snap = readdirSync(join(scratch, "backups")).find((n) => n.startsWith("restic-"))!;
      backupDir = join(scratch, "backups", snap);
      const m = readManifest(backupDir);
      source = `restic snapshot ${snap.slice("restic-".length)}${m.kind ? ` (${m.kind} backup)` : ""}`;
    }
    const manifest = readManifest(backupDir);
    const created = manifest.created_at ? Date.parse(manifest.created_at) : NaN;
    const restored = new Database(join(scratch, "db/docket.sqlite"), { readonly: true });
    let integrity: string;
    let applied: AppliedMigration[];
    let backupCounts: Map<string, number>;
    try {
      integrity = restored.query<{ integrity_check: string }, []>("PRAGMA integrity_check").all().map((r) => r.integrity_check).join("\n");
      applied = appliedMigrations(restored);
      backupCounts = tableCounts(restored);
    } finally {
      restored.close();
    }
    let counts: TableCount[] | null = null;
    const liveFile = `${root}${join(opts.dataDir, "db/docket.sqlite")}`;
    if (existsSync(liveFile)) {
      const live = new Database(liveFile, { readonly: true });
      try {
        const liveCounts = tableCounts(live);
        const names = [...new Set([...backupCounts.keys(), ...liveCounts.keys()])].sort();
        counts = names.map((t) => ({ table: t, backup: backupCounts.get(t) ?? null, live: liveCounts.get(t) ?? null }));
      } finally {
        live.close();
      }
    }
    return judgeRestore({
      source,
      createdAt: Number.isFinite(created) ? created : null,
      now: now(),
      integrity,
      applied,
      release: { id: releaseId(releaseDir), migrations: releaseMigrations(releaseDir) },
      counts,
    });
  }
}

/** `docket notify CAUSE TEXT` (CONTRACTS.md §2), best-effort; DOCKET_NOTIFY replaces it (tests). */
function notify(cause: string, text: string): void {
  const cmd = process.env.DOCKET_NOTIFY ? process.env.DOCKET_NOTIFY.split(" ") : [process.execPath, join(import.meta.dirname, "../cli/main.ts"), "notify"];
  try {
    Bun.spawnSync([...cmd, cause, text], { stdout: "ignore", stderr: "ignore", timeout: 30_000 });
  } catch {
    // best-effort: the verdict line and the status file already say it
  }
}
