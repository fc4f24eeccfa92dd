/**
 * Upgrades and rollbacks end to end on a throwaway root (issue 9 item 11): install.sh of release A,
 * a real SQLite database migrated by drizzle with A's migrations, install.sh of release B (one more
 * migration), then `docket rollback`. A recording systemctl logs every call with the release
 * /opt/docket/current points at, so the order of the timer stops, the `current` switch and the
 * restart is checked, not assumed; /healthz is a stub on 127.0.0.1.
 */
import { Database } from "bun:sqlite";
import { cpSync, existsSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { migrate } from "drizzle-orm/bun-sqlite/migrator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeToken, makeTempDir, removeDir, repoRoot, runCmdAsync, writeExecutable } from "../bundle/helpers";
import { toolReady } from "../support/tools";
import { latestMigration, nextMigration } from "./schema-facts";
import { releaseMigrations } from "../../bot/backup/verify.ts";

/** The newest migration of this checkout (release A's last one). */
const LATEST = latestMigration();
/** The migration only release B has. */
const NOTE = nextMigration("upgrade_note");

const ready = toolReady("sqlite3");
const TIMERS = "docket-janitor.timer docket-backup.timer docket-backup-verify.timer";
const ONESHOTS = "docket-janitor.service docket-backup.service docket-backup-verify.service";
let work = "";
let recLog = "";
let systemctl = "";
let health: ReturnType<typeof Bun.serve> | undefined;

/** A source tree of docket as install.sh ships it; `extra` adds files (path → content). */
function sourceTree(name: string, extra: Record<string, string> = {}): string {
  const src = join(work, name);
  for (const d of ["bot", "scripts", "systemd", "compose", "docs"]) cpSync(join(repoRoot, d), join(src, d), { recursive: true });
  cpSync(join(repoRoot, "package.json"), join(src, "package.json"));
  for (const [p, text] of Object.entries(extra)) writeFileSync(join(src, p), text);
  return src;
}

/** `src` with one more drizzle migration (SQL + journal entry, as drizzle-kit writes them). */
function withMigration(src: string, tag: string, sql: string): string {
  const journalPath = join(src, "bot/db/migrations/meta/_journal.json");
  const journal = JSON.parse(readFileSync(journalPath, "utf8")) as { entries: { idx: number; when: number; tag: string }[] };
  const last = journal.entries.at(-1)!;
  journal.entries.push({ ...last, idx: last.idx + 1, when: last.when + 60_000, tag });
  writeFileSync(journalPath, JSON.stringify(journal, null, 2));
  writeFileSync(join(src, `bot/db/migrations/${tag}.sql`), sql);
  return src;
}

/** Open the root's database and apply the migrations of `src`, as the bot (or the janitor) of that release does at start. */
function startRelease(root: string, src: string, chatIds: number[] = []): void {
  const sqlite = new Database(join(root, "var/lib/docket/db/docket.sqlite"), { create: true });
  try {
    sqlite.exec("PRAGMA journal_mode = WAL");
    migrate(drizzle(sqlite), { migrationsFolder: join(src, "bot/db/migrations") });
    for (const id of chatIds) sqlite.run("INSERT INTO chat_settings (chat_id) VALUES (?)", [id]);
  } finally {
    sqlite.close();
  }
}

function chats(root: string): number[] {
  const db = new Database(join(root, "var/lib/docket/db/docket.sqlite"));
  try {
    return db.query<{ chat_id: number }, []>("SELECT chat_id FROM chat_settings ORDER BY chat_id").all().map((r) => r.chat_id);
  } finally {
    db.close();
  }
}

function columns(root: string, table: string): string[] {
  const db = new Database(join(root, "var/lib/docket/db/docket.sqlite"));
  try {
    return db.query<{ name: string }, []>(`PRAGMA table_info(${table})`).all().map((r) => r.name);
  } finally {
    db.close();
  }
}

const current = (root: string) => readlinkSync(join(root, "opt/docket/current")).replace("releases/", "");
const releases = (root: string) => readdirSync(join(root, "opt/docket/releases")).filter((n) => !n.endsWith(".tmp"));
const calls = () => readFileSync(recLog, "utf8").trim().split("\n").filter(Boolean);

const install = (src: string, root: string, env: Record<string, string | undefined> = {}) =>
  runCmdAsync(["bash", join(src, "scripts/install.sh"), "--non-interactive", "--root", root, "--skip-packages", "--http-port", String(health!.port), "--download-budget", "16MB"], {
    env: { SYSTEMCTL: systemctl, REC_ROOT: root, HEALTH_TIMEOUT: "5", TELEGRAM_API_HASH: undefined, ...env },
  });
const rollback = (root: string, args: string[] = []) =>
  runCmdAsync([process.execPath, "--no-env-file", join(repoRoot, "bot/cli/main.ts"), "rollback", "--root", root, ...args], {
    env: { SYSTEMCTL: systemctl, REC_ROOT: root, HEALTH_TIMEOUT: "5", ACTIVE_UNITS: `docket.service ${TIMERS}` },
  });

beforeAll(() => {
  work = makeTempDir("upgrade");
  recLog = join(work, "systemctl.log");
  systemctl = join(work, "systemctl");
  // Every call with the release `current` points at; `is-active UNIT` succeeds for $ACTIVE_UNITS.
  writeExecutable(
    systemctl,
    `#!/bin/sh\nprintf 'systemctl %s [current=%s]\\n' "$*" "$(readlink "$REC_ROOT/opt/docket/current" | sed 's#.*/##')" >> '${recLog}'\n` +
      `if [ "$1" = is-active ]; then case " $ACTIVE_UNITS " in *" $3 "*) exit 0 ;; *) exit 3 ;; esac; fi\nexit 0\n`,
  );
  health = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (req) => (new URL(req.url).pathname === "/healthz" ? Response.json({ ok: true }) : new Response("no", { status: 404 })) });
});
afterAll(() => {
  health?.stop(true);
  removeDir(work);
});

describe.skipIf(!ready)("upgrade with a pre-upgrade backup, then docket rollback", () => {
  let root = "";
  let srcA = "";
  let srcB = "";
  let relA = "";
  let relB = "";

  it("install A, data on A's schema; install B: timers stopped before the switch, a backup tied to A, restart, timers after it", async () => {
    root = join(work, "root");
    await runCmdAsync(["mkdir", "-p", root]);
    srcA = sourceTree("srcA");
    srcB = withMigration(sourceTree("srcB"), NOTE, "ALTER TABLE `chat_settings` ADD `upgrade_note` text;");
    const a = await install(srcA, root, { BOT_TOKEN: fakeToken() });
    expect(a.stderr).toContain("healthy:");
    expect(a.status).toBe(0);
    relA = current(root);
    startRelease(root, srcA, [101, 102, 103]);

    writeFileSync(recLog, "");
    const b = await install(srcB, root);
    expect(b.stderr).toContain(`  upgrade: release ${relA} -> `);
    expect(b.status).toBe(0);
    relB = current(root);
    expect(relB).not.toBe(relA);

    const backups = readdirSync(join(root, "var/lib/docket/backups")).filter((n) => n.startsWith("pre-upgrade-"));
    expect(backups).toHaveLength(1);
    const manifest = readFileSync(join(root, "var/lib/docket/backups", backups[0]!, "MANIFEST"), "utf8");
    expect(manifest).toContain("kind=pre-upgrade\n");
    expect(manifest).toContain(`release=${relA}\nupgrade_to=${relB}\nmigration=${LATEST}\n`);
    expect(manifest).toMatch(new RegExp(`\nmigration_hash=[0-9a-f]{64}\nmigrations_applied=${releaseMigrations(repoRoot).length}\n`));

    // The timers stop while `current` is A, and start again only after the restart on B.
    expect(calls()).toEqual([
      `systemctl stop ${TIMERS} [current=${relA}]`,
      `systemctl stop ${ONESHOTS} [current=${relA}]`,
      `systemctl daemon-reload [current=${relB}]`,
      `systemctl enable docket.service ${TIMERS} [current=${relB}]`,
      `systemctl restart docket.service [current=${relB}]`,
      `systemctl start ${TIMERS} [current=${relB}]`,
    ]);
  });

  it("docket rollback --keep-db refuses when A cannot read B's schema; --dry-run changes nothing", async () => {
    startRelease(root, srcB, [999]); // B's bot starts: migration NOTE applied, a chat recorded after the upgrade
    expect(columns(root, "chat_settings")).toContain("upgrade_note");
    writeFileSync(recLog, "");
    const keep = await rollback(root, ["--keep-db"]);
    expect(keep.status).toBe(1);
    expect(keep.stderr).toContain(`error: --keep-db, but release ${relA} cannot run on this database (it has applied ${NOTE}); drop --keep-db to restore the pre-upgrade backup`);
    const dry = await rollback(root, ["--dry-run"]);
    expect(dry.status).toBe(0);
    expect(dry.stderr).toContain(`dry run: nothing was changed; a real run goes back to release ${relA} and restores pre-upgrade-`);
    expect(current(root)).toBe(relB);
    expect(chats(root)).toEqual([101, 102, 103, 999]);
    expect(calls().filter((l) => !l.includes(" is-active "))).toEqual([]);
  });

  it("docket rollback: back to A with the pre-upgrade backup, in one command; the bot before the timers", async () => {
    writeFileSync(recLog, "");
    const r = await rollback(root);
    expect(r.stderr).toContain(`  the database has applied ${NOTE}; release ${relA} knows migrations up to ${LATEST}: it must be restored`);
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`rolled back to release ${relA}; database restored from pre-upgrade-\\d{8}T\\d{6}Z`));
    expect(current(root)).toBe(relA);
    expect(chats(root)).toEqual([101, 102, 103]);
    expect(columns(root, "chat_settings")).not.toContain("upgrade_note");
    // B's database is kept aside, whole.
    const aside = readdirSync(join(root, "var/lib/docket/db")).filter((n) => n.startsWith("pre-restore-"));
    expect(aside).toHaveLength(1);
    // A's units are back.
    expect(readFileSync(join(root, "etc/systemd/system/docket.service"), "utf8")).toBe(readFileSync(join(srcA, "systemd/docket.service"), "utf8"));
    expect(calls()).toEqual([
      `systemctl is-active --quiet docket-janitor.timer [current=${relB}]`,
      `systemctl is-active --quiet docket-backup.timer [current=${relB}]`,
      `systemctl is-active --quiet docket-backup-verify.timer [current=${relB}]`,
      `systemctl stop ${TIMERS} [current=${relB}]`,
      `systemctl stop docket.service ${ONESHOTS} [current=${relB}]`,
      `systemctl daemon-reload [current=${relA}]`,
      `systemctl start docket.service [current=${relA}]`,
      `systemctl start ${TIMERS} [current=${relA}]`,
    ]);
    expect(releases(root).sort()).toEqual([relA, relB].sort());
  });

  it("a second docket rollback has no upgrade to undo", async () => {
    const r = await rollback(root);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`error: no pre-upgrade backup in ${root}/var/lib/docket/backups names release ${relA} as its upgrade target, so there is no upgrade to undo`);
    expect(current(root)).toBe(relA);
  });

  it("an upgrade without a new migration: rollback keeps the live data", async () => {
    const srcC = sourceTree("srcC", { "CHANGES.md": "release C\n" });
    expect((await install(srcC, root)).status).toBe(0);
    const relC = current(root);
    startRelease(root, srcC, [555]);
    const r = await rollback(root);
    expect(r.stderr).toContain(`the database's migration (${LATEST}) is one release ${relA} knows: its data can stay`);
    expect(r.status).toBe(0);
    expect(current(root)).toBe(relA);
    expect(relC).not.toBe(relA);
    expect(chats(root)).toEqual([101, 102, 103, 555]);
  });

  it("a failed pre-upgrade backup stops the upgrade: current unchanged, timers started again", async () => {
    const srcD = sourceTree("srcD", { "CHANGES.md": "release D\n" });
    writeExecutable(join(root, "etc/docket/backup/pre.d/10-fail"), "#!/bin/sh\necho 'vault is full' >&2\nexit 3\n");
    writeFileSync(recLog, "");
    const r = await install(srcD, root);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`error: the pre-upgrade backup failed (above), so the upgrade was not applied: /opt/docket/current still points at ${relA} and the bot runs as before`);
    expect(current(root)).toBe(relA);
    expect(calls()).toEqual([
      `systemctl stop ${TIMERS} [current=${relA}]`,
      `systemctl stop ${ONESHOTS} [current=${relA}]`,
      `systemctl start ${TIMERS} [current=${relA}]`,
    ]);
    expect(existsSync(join(root, "etc/docket/backup/pre.d/10-fail"))).toBe(true);
  });
});
