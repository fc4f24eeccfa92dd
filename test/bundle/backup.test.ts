/**
 * scripts/backup.sh → scripts/restore.sh round trip on a real SQLite database (bun:sqlite,
 * WAL, a writer connection held open during the backup), in a throwaway root: consistency,
 * checksums, rotation, pre.d/post.d hooks, results, and restore's refusal of a damaged copy.
 */
import { Database } from "bun:sqlite";
import { cpSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync, writeSync, closeSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTempDir, modeOf, removeDir, runCmd, writeExecutable } from "./helpers";
import { toolReady } from "../support/tools";

const ready = toolReady("sqlite3");
let root = "";
let data = "";
let backups = "";
let recLog = "";
let systemctl = "";

/**
 * Rows of table `notes` in the database at `path`, in id order. Opened read-write: a WAL-mode
 * file without its -shm cannot be opened read-only.
 */
function rows(path: string): string[] {
  const db = new Database(path);
  try {
    return db.query<{ body: string }, []>("SELECT body FROM notes ORDER BY id").all().map((r) => r.body);
  } finally {
    db.close();
  }
}

/** Backup directories (docket-*) in name order = oldest first. */
const listBackups = () => readdirSync(backups).filter((n) => n.startsWith("docket-")).sort();

const backup = (args: string[] = []) =>
  runCmd(["bash", "scripts/backup.sh", "--root", root, "--hooks-dir", "/etc/docket/backup", ...args], {
    env: { DATA_DIR: "/var/lib/docket", BACKUP_DIR: undefined, BACKUP_KEEP: undefined, BACKUP_WITH_RESULTS: undefined },
  });
/** restore.sh with the systemctl stand-in; `active` = the units its `is-active` reports active. */
const restore = (args: string[], active = "docket.service docket-janitor.timer docket-backup.timer") =>
  runCmd(["bash", "scripts/restore.sh", "--root", root, ...args], { env: { SYSTEMCTL: systemctl, ACTIVE_UNITS: active, DATA_DIR: undefined } });

beforeAll(() => {
  root = makeTempDir("backup");
  data = join(root, "var/lib/docket");
  backups = join(data, "backups");
  for (const d of ["db", "results", "backups"]) mkdirSync(join(data, d), { recursive: true });
  for (const d of ["pre.d", "post.d"]) mkdirSync(join(root, "etc/docket/backup", d), { recursive: true });
  recLog = join(root, "calls.log");
  // Records every call; `is-active --quiet UNIT` succeeds only for the units in $ACTIVE_UNITS.
  systemctl = join(root, "systemctl");
  writeExecutable(
    systemctl,
    `#!/bin/sh\nprintf 'systemctl %s\\n' "$*" >> '${recLog}'\nif [ "$1" = is-active ]; then case " $ACTIVE_UNITS " in *" $3 "*) exit 0 ;; *) exit 3 ;; esac; fi\nexit 0\n`,
  );
});
afterAll(() => removeDir(root));

describe.skipIf(!ready)("backup.sh and restore.sh", () => {
  const dbPath = () => join(data, "db/docket.sqlite");

  it("takes a consistent online backup while a writer holds the WAL open, and runs hooks", () => {
    const db = new Database(dbPath(), { create: true });
    db.run("PRAGMA journal_mode = WAL");
    db.run("PRAGMA wal_autocheckpoint = 0"); // keep new rows in the -wal file only
    db.run("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)");
    const insert = db.prepare("INSERT INTO notes (body) VALUES (?)");
    for (let i = 0; i < 200; i++) insert.run(`row-${i}-${"x".repeat(100)}`);
    writeFileSync(join(data, "results/job-1.pdf"), "%PDF-1.7 result");
    const offbox = join(root, "offbox");
    mkdirSync(offbox);
    writeExecutable(join(root, "etc/docket/backup/pre.d/10-note"), `#!/bin/sh\necho "$BACKUP_PHASE $BACKUP_DIR" > '${root}/pre.txt'\n`);
    writeExecutable(join(root, "etc/docket/backup/post.d/50-offbox"), `#!/bin/sh\ncp -r "$BACKUP_PATH" '${offbox}/'\n`);
    writeFileSync(join(root, "etc/docket/backup/post.d/README"), "not executable: ignored\n");
    try {
      expect(existsSync(`${dbPath()}-wal`)).toBe(true);
      const r = backup(["--with-results"]);
      expect(r.stderr).toContain("integrity_check: ok");
      expect(r.status).toBe(0);
    } finally {
      db.close();
    }
    const [name] = listBackups();
    expect(name).toMatch(/^docket-\d{8}T\d{6}Z$/);
    const dir = join(backups, name!);
    expect(rows(join(dir, "docket.sqlite"))).toHaveLength(200);
    expect(rows(join(dir, "docket.sqlite"))[199]).toBe(`row-199-${"x".repeat(100)}`);
    expect(readFileSync(join(dir, "MANIFEST"), "utf8")).toContain("with_results=true");
    expect(runCmd(["sha256sum", "-c", "SHA256SUMS"], { cwd: dir }).status).toBe(0);
    expect(modeOf(join(dir, "docket.sqlite"))).toBe("640");
    expect(readFileSync(join(root, "pre.txt"), "utf8")).toBe(`pre ${backups}\n`);
    expect(readFileSync(join(offbox, name!, "docket.sqlite"))).toEqual(readFileSync(join(dir, "docket.sqlite")));
    expect(readdirSync(backups).filter((n) => n.endsWith(".partial"))).toEqual([]); // no partial left
    // The manifest names the kind, the release (none installed here) and the drizzle migration (none: no drizzle table).
    const manifest = readFileSync(join(dir, "MANIFEST"), "utf8");
    expect(manifest).toMatch(/^created_at=\S+\nkind=nightly\nhost=\S+\ndata_dir=\/var\/lib\/docket\nrelease=unknown\nmigration=none\nmigration_created_at=0\nmigration_hash=-\nmigrations_applied=0\nsqlite_version=3\.\S+\nwith_results=true\n$/);
  });

  it("rotates: keeps the newest N docket-* backups and nothing else is touched", () => {
    for (const old of ["docket-20200101T000000Z", "docket-20200102T000000Z", "docket-20200103T000000Z"]) {
      cpSync(join(backups, listBackups().at(-1)!), join(backups, old), { recursive: true });
    }
    mkdirSync(join(backups, "operator-notes"));
    const newestBefore = listBackups().at(-1)!;
    const r = backup(["--keep", "2"]);
    expect(r.status).toBe(0);
    const left = listBackups();
    expect(left).toHaveLength(2);
    expect(left[0]).toBe(newestBefore);
    expect(left[1]! > newestBefore).toBe(true);
    expect(existsSync(join(backups, "operator-notes"))).toBe(true);
    expect(readFileSync(join(backups, left[1]!, "MANIFEST"), "utf8")).toContain("with_results=false");
  });

  it("a failing pre hook aborts with no backup; a failing post hook keeps it but fails", () => {
    const before = listBackups();
    writeExecutable(join(root, "etc/docket/backup/pre.d/20-fail"), "#!/bin/sh\nexit 7\n");
    const pre = backup();
    expect(pre.status).toBe(1);
    expect(pre.stderr).toContain("a pre hook failed");
    expect(listBackups()).toEqual(before);
    runCmd(["rm", join(root, "etc/docket/backup/pre.d/20-fail")]);

    writeExecutable(join(root, "etc/docket/backup/post.d/90-fail"), "#!/bin/sh\nexit 5\n");
    const post = backup(["--keep", "10"]);
    expect(post.status).toBe(1);
    expect(post.stderr).toContain("a post hook failed (status 5)");
    expect(listBackups()).toHaveLength(before.length + 1);
    runCmd(["rm", join(root, "etc/docket/backup/post.d/90-fail")]);
  });

  it("restores the database and results, moving the current files aside", () => {
    const withResults = listBackups().find((n) => readFileSync(join(backups, n, "MANIFEST"), "utf8").includes("with_results=true"))!;
    expect(withResults).toBeDefined();
    // The live database moves on after the backup: more rows, and a results file is gone.
    const db = new Database(dbPath());
    db.run("INSERT INTO notes (body) VALUES ('after-backup')");
    db.close();
    runCmd(["rm", join(data, "results/job-1.pdf")]);
    expect(rows(dbPath())).toHaveLength(201);

    writeFileSync(recLog, "");
    // The bot and the backup timer run; the janitor timer was stopped by the operator.
    const r = restore(["--with-results", join(backups, withResults)], "docket.service docket-backup.timer");
    expect(r.stderr).toContain("integrity_check in place: ok");
    expect(r.status).toBe(0);
    expect(rows(dbPath())).toHaveLength(200);
    expect(readFileSync(join(data, "results/job-1.pdf"), "utf8")).toBe("%PDF-1.7 result");
    // The previous set (main file + its uncheckpointed -wal) is kept together and still opens.
    const aside = readdirSync(join(data, "db")).filter((n) => /^pre-restore-\d{8}T\d{6}Z$/.test(n));
    expect(aside).toHaveLength(1);
    expect(readdirSync(join(data, "db", aside[0]!))).toEqual(expect.arrayContaining(["docket.sqlite", "docket.sqlite-wal"]));
    expect(rows(join(data, "db", aside[0]!, "docket.sqlite"))).toHaveLength(201);
    expect(readdirSync(join(data, "db")).filter((n) => n.startsWith("docket.sqlite-"))).toEqual([]);
    // The closing message names exactly what was moved aside, and both exist.
    const stamp = aside[0]!.slice("pre-restore-".length);
    expect(existsSync(join(data, `results.pre-restore-${stamp}`))).toBe(true);
    expect(r.stderr).toContain(`previous files moved aside: /var/lib/docket/db/pre-restore-${stamp}/ /var/lib/docket/results.pre-restore-${stamp}/`);
    // Every unit that opens the database is stopped before the files move (timers first, then
    // the bot and the one-shots); only what was active is started again.
    expect(readFileSync(recLog, "utf8").trim().split("\n")).toEqual([
      "systemctl is-active --quiet docket.service",
      "systemctl is-active --quiet docket-janitor.timer",
      "systemctl is-active --quiet docket-backup.timer",
      "systemctl is-active --quiet docket-backup-verify.timer",
      "systemctl stop docket-janitor.timer docket-backup.timer docket-backup-verify.timer",
      "systemctl stop docket.service docket-janitor.service docket-backup.service docket-backup-verify.service",
      "systemctl start docket.service docket-backup.timer",
    ]);
    expect(r.stderr).toContain("note: docket-janitor.timer was not active before; left stopped");
  });

  it("--no-service leaves systemd alone (the documented scratch restore)", () => {
    writeFileSync(recLog, "");
    const live = readFileSync(dbPath());
    const r = restore(["--no-service", "--data-dir", "/tmp/restore-test", join(backups, listBackups()[0]!)]);
    expect(r.status).toBe(0);
    expect(readFileSync(recLog, "utf8")).toBe("");
    expect(rows(join(root, "tmp/restore-test/db/docket.sqlite"))).toHaveLength(200);
    expect(readFileSync(dbPath())).toEqual(live);
    // An empty data dir: nothing was moved aside, and the message names no backup that does not exist.
    expect(readdirSync(join(root, "tmp/restore-test/db"))).toEqual(["docket.sqlite"]);
    expect(r.stderr).toContain("nothing was there before, so nothing was moved aside");
    expect(r.stderr).not.toContain("pre-restore");
  });

  it("refuses a damaged backup and leaves the live database untouched", () => {
    const live = readFileSync(dbPath());
    const src = join(backups, listBackups()[0]!);
    const bad = join(root, "bad");
    cpSync(src, bad, { recursive: true });
    const fd = openSync(join(bad, "docket.sqlite"), "r+");
    writeSync(fd, Buffer.alloc(2048, 0xa5), 0, 2048, 4096 + 16); // inside page 2
    closeSync(fd);
    writeFileSync(recLog, "");
    const sums = restore([bad]);
    expect(sums.status).toBe(1);
    expect(sums.stderr).toContain("checksums do not match");
    // Without SHA256SUMS the SQLite check catches it.
    const direct = restore([join(bad, "docket.sqlite")]);
    expect(direct.status).toBe(1);
    expect(direct.stderr).toMatch(/integrity_check of .* failed|cannot open/);
    expect(readFileSync(dbPath())).toEqual(live);
    expect(readFileSync(recLog, "utf8")).toBe(""); // never stopped the service
  });
});
