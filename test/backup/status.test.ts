/**
 * The backup status file (CONTRACTS.md §1): shape, atomic 0640 writes that keep the other part,
 * ownership when root writes it, and the `docket backup-status` command the shell scripts use.
 */
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { backupStatusPath, MAX_ERROR_CHARS, readBackupStatus, writeBackupStatus } from "../../bot/backup/status.ts";
import { runCmd, testTempDir } from "../bundle/helpers.ts";

const cli = (args: string[], env: Record<string, string | undefined> = {}) =>
  runCmd([process.execPath, "--no-env-file", "bot/cli/main.ts", ...args], { env: { DATA_DIR: undefined, DOCKET_ENV_FILE: "/nonexistent/docket.env", ...env } });

describe("bot/backup/status.ts", () => {
  test("a missing file reads as {}; backup and verify parts are written separately and both kept", () => {
    const data = testTempDir("status");
    expect(readBackupStatus(data)).toEqual({});
    writeBackupStatus(data, { backup: { ok: true, at: 1_800_000_000, bytes: 4096, where: "restic" } });
    writeBackupStatus(data, { verify: { ok: false, at: 1_800_000_100, error: "integrity_check: page 3" } });
    const expected = {
      backup: { ok: true, at: 1_800_000_000, bytes: 4096, where: "restic" },
      verify: { ok: false, at: 1_800_000_100, error: "integrity_check: page 3" },
    };
    expect(readBackupStatus(data)).toEqual(expected);
    expect(JSON.parse(readFileSync(backupStatusPath(data), "utf8"))).toEqual(expected);
    expect(statSync(backupStatusPath(data)).mode & 0o777).toBe(0o640);
    expect(readdirSync(join(data, "backups"))).toEqual(["status.json"]); // no temp file left behind
  });

  test("a part without the contract's shape is left out; a long error is cut", () => {
    const data = testTempDir("status-bad");
    mkdirSync(join(data, "backups"));
    writeFileSync(backupStatusPath(data), JSON.stringify({ backup: { ok: "yes" }, verify: { ok: true, at: 7 } }));
    expect(readBackupStatus(data)).toEqual({ verify: { ok: true, at: 7 } });
    writeFileSync(backupStatusPath(data), "{ not json");
    expect(readBackupStatus(data)).toEqual({});
    const next = writeBackupStatus(data, { backup: { ok: false, at: 8, bytes: 0, where: "local", error: "x".repeat(2000) } });
    expect(next.backup!.error).toHaveLength(MAX_ERROR_CHARS);
    expect(() => writeBackupStatus(data, { backup: { ok: true, at: -1, bytes: 0, where: "local" } })).toThrow();
  });

  test.skipIf(process.getuid?.() !== 0)("written by root, the file belongs to the owner of the backups directory", () => {
    const data = testTempDir("status-owner");
    mkdirSync(join(data, "backups"));
    chownSync(join(data, "backups"), 65534, 65534);
    writeBackupStatus(data, { verify: { ok: true, at: 9 } });
    const st = statSync(backupStatusPath(data));
    expect([st.uid, st.gid]).toEqual([65534, 65534]);
  });
});

describe("docket backup-status", () => {
  test("backup and verify write the parts; show prints them", () => {
    const data = testTempDir("status-cli");
    expect(cli(["backup-status", "backup", "--ok", "--where", "local", "--bytes", "123", "--at", "1000", "--data-dir", data]).status).toBe(0);
    const failed = cli(["backup-status", "verify", "--failed", "--error", "no backup", "--at", "2000"], { DATA_DIR: data });
    expect(failed.status).toBe(0);
    expect(readBackupStatus(data)).toEqual({ backup: { ok: true, at: 1000, bytes: 123, where: "local" }, verify: { ok: false, at: 2000, error: "no backup" } });
    const show = cli(["backup-status", "show", "--data-dir", data]);
    expect(JSON.parse(show.stdout)).toEqual(readBackupStatus(data));
  });

  test("bad usage exits 2 with the usage line and writes nothing; an unwritable place exits 1 naming the file", () => {
    const data = testTempDir("status-cli-bad");
    for (const args of [["backup", "--ok", "--failed", "--where", "local"], ["backup", "--ok"], ["backup", "--ok", "--where", "s3"], ["verify"], ["verify", "--ok", "--at", "soon"], ["nope"]]) {
      const r = cli(["backup-status", ...args, "--data-dir", data]);
      expect(r.status, args.join(" ")).toBe(2);
      expect(r.stderr).toContain("usage: docket backup-status");
    }
    expect(existsSync(join(data, "backups"))).toBe(false);
    writeFileSync(join(data, "backups"), "a file where the directory should be");
    const r = cli(["backup-status", "verify", "--ok", "--data-dir", data]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`docket backup-status: cannot write ${join(data, "backups/status.json")}:`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
