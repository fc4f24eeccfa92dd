/**
 * Backups belong to one user, whether root or that user started the run (issue 10 item 4): with a
 * real unprivileged user standing for `docket`, a root-owned leftover of an old root run blocks the
 * user's rotation with one clear line; a run started by root gives the backups back to the user,
 * continues as that user, and rotates; the user's next run works.
 */
import { Database } from "bun:sqlite";
import { chmodSync, chownSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTempDir, removeDir, runCmd } from "../bundle/helpers";
import { asUser, canCreateUsers, createSystemUser, removeSystemUser } from "../support/system-user";
import { toolReady } from "../support/tools";
import { reachableRepoRoot } from "../support/unprivileged";

const ready = toolReady("sqlite3") && canCreateUsers() && reachableRepoRoot() !== null;
if (!ready) console.warn("skipped: test/backup/owner.test.ts: needs root with useradd and setpriv (a real second user) and a checkout that user can read");
let root = "";
let user: ReturnType<typeof createSystemUser>;
let backups = "";

// backup.sh runs as the user (or continues as it when root starts it): it must read the scripts,
// so it runs from a checkout the user can read (CI's private clone: the reachable root).
const reachable = reachableRepoRoot();
const backup = (prefix: string[], env: Record<string, string | undefined> = {}) =>
  runCmd([...prefix, "bash", "scripts/backup.sh", "--root", root, "--keep", "1", "--hooks-dir", "/etc/docket/backup"], {
    cwd: reachable!,
    env: { DATA_DIR: "/var/lib/docket", BACKUP_DIR: undefined, BACKUP_KEEP: undefined, BACKUP_USER: undefined, ...env },
  });
const owners = () => readdirSync(backups).map((n) => `${n}:${statSync(join(backups, n)).uid}`).sort();

beforeAll(() => {
  if (!ready) return;
  user = createSystemUser("dkt-bk");
  root = makeTempDir("backup-owner");
  chmodSync(root, 0o755);
  const data = join(root, "var/lib/docket");
  for (const d of ["db", "backups"]) mkdirSync(join(data, d), { recursive: true });
  mkdirSync(join(root, "etc/docket/backup/pre.d"), { recursive: true });
  const db = new Database(join(data, "db/docket.sqlite"), { create: true });
  db.run("CREATE TABLE t (x)");
  db.run("INSERT INTO t VALUES (1)");
  db.close();
  for (const p of [data, join(data, "db"), join(data, "db/docket.sqlite"), join(data, "backups")]) chownSync(p, user.uid, user.gid);
  backups = join(data, "backups");
  // Leftovers of a backup run as root by an older version: a backup and an interrupted partial, root's 0750/0640.
  for (const d of ["docket-20200101T000000Z", ".docket-20200101T000001Z.partial"]) {
    mkdirSync(join(backups, d), { mode: 0o750 });
    writeFileSync(join(backups, d, "docket.sqlite"), "old", { mode: 0o640 });
  }
});
afterAll(() => {
  if (!ready) return;
  removeSystemUser(user.name);
  removeDir(root);
});

describe.skipIf(!ready)("backups run by root or by the docket user", () => {
  it("run as the user, a root-owned old backup cannot be rotated: the run fails with one line saying to run once as root", () => {
    const r = backup(asUser(user));
    expect(r.stderr).toContain(`error: rotation: cannot delete ${backups}/docket-20200101T000000Z (owner root): run backup.sh once as root, which gives every backup to ${user.name}, or delete it by hand; the backup itself is at ${backups}/docket-`);
    expect(r.stderr).toContain(`warning: cannot remove ${backups}/.docket-20200101T000001Z.partial (owner root): run backup.sh once as root`);
    expect(r.status).toBe(1);
  });

  it("run as root, it gives the backups to the user, continues as the user and rotates", () => {
    const r = backup([], { BACKUP_USER: user.name });
    expect(r.stderr).toContain(`running as ${user.name}`);
    expect(r.status).toBe(0);
    const names = readdirSync(backups).filter((n) => n.startsWith("docket-"));
    expect(names).toHaveLength(1);
    expect(names[0]).not.toBe("docket-20200101T000000Z");
    expect(owners()).toEqual([`.backup.lock:${user.uid}`, `${names[0]}:${user.uid}`, `status.json:${user.uid}`].sort());
    expect(readdirSync(join(backups, names[0]!)).map((f) => statSync(join(backups, names[0]!, f)).uid)).toEqual([user.uid, user.uid, user.uid]);
  });

  it("the user's next run rotates the root run's backup", () => {
    const before = readdirSync(backups).filter((n) => n.startsWith("docket-"));
    const r = backup(asUser(user));
    expect(r.status).toBe(0);
    const after = readdirSync(backups).filter((n) => n.startsWith("docket-"));
    expect(after).toHaveLength(1);
    expect(after).not.toEqual(before);
  });
});
