/**
 * install.sh's accounts and data directories, into throwaway roots with the real groupadd and
 * useradd (`--prefix ROOT`): the dedicated docket-botapi user and group shared with the local
 * server's container (issue 9 item 7), and --data-dir moving every data directory (item 6).
 */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fakeToken, modeOf, prepareVerifyRoot, runCmd, testTempDir } from "./helpers";
import { API_HASH, accountId, membersOf, treeWithoutLog, useInstallHarness } from "./install-harness";
import { toolPath } from "../support/tools";

const h = useInstallHarness();
const install = h.install;

describe("install.sh accounts: a dedicated group for the local server's files (issue 9 item 7)", () => {
  it("never borrows the group that holds gid 101: its own group and server user, ids shared with the container", async () => {
    const root = testTempDir("accounts");
    mkdirSync(join(root, "etc"), { recursive: true });
    // As on Debian hosts: gid 101 is _ssh, uid 101 PostgreSQL's.
    writeFileSync(join(root, "etc/group"), "root:x:0:\n_ssh:x:101:\npostgres:x:104:\n");
    writeFileSync(join(root, "etc/passwd"), "root:x:0:0:root:/root:/bin/sh\npostgres:x:101:104:PostgreSQL:/var/lib/postgresql:/bin/bash\n");
    const r = await install(["--root", root, "--no-start", "--mode", "local", "--api-id", "1", "--download-budget", "16MB"], {
      BOT_TOKEN: fakeToken(),
      TELEGRAM_API_HASH: API_HASH,
    });
    expect(r.status).toBe(0);
    const gid = accountId(root, "group", "docket-botapi")!;
    const uid = accountId(root, "passwd", "docket-botapi")!;
    expect(gid).toBeGreaterThan(0);
    expect([gid, uid]).not.toContain(101);
    expect(membersOf(root, "docket-botapi")).toEqual(["docket"]);
    expect(membersOf(root, "_ssh")).toEqual([]);
    expect(readFileSync(join(root, "etc/group"), "utf8")).toContain("_ssh:x:101:\n");
    // The container runs with exactly these ids, and the server's directories belong to them.
    const composeEnv = readFileSync(join(root, "etc/docket/compose.env"), "utf8");
    expect(composeEnv).toContain(`DOCKET_BOT_API_UID=${uid}\nDOCKET_BOT_API_GID=${gid}\n`);
    for (const d of ["bot-api", "bot-api-temp"]) {
      const st = statSync(join(root, "var/lib/docket", d));
      expect([st.uid, st.gid, modeOf(join(root, "var/lib/docket", d))]).toEqual([uid, gid, "750"]);
    }
    const data = statSync(join(root, "var/lib/docket/db"));
    expect([data.uid, data.gid]).toEqual([accountId(root, "passwd", "docket"), accountId(root, "group", "docket")]);
    expect(existsSync(join(root, "etc/systemd/system/docket.service.d/10-botapi-group.conf"))).toBe(false);
    // A second run finds everything in place.
    const again = await install(["--root", root, "--no-start"]);
    expect(again.status).toBe(0);
    expect(again.stderr).toContain(`= group docket-botapi exists (gid ${gid})`);
    expect(again.stderr).toContain("= docket is in group docket-botapi");
    expect(again.stderr).not.toMatch(/\+ (useradd|groupadd|usermod)/);
  });

  it("the bot's user reads the server's 0640 files through the group, and nobody else does", async () => {
    const root = testTempDir("perm");
    runCmd(["chmod", "0755", root]);
    const r = await install(["--root", root, "--no-start", "--mode", "local", "--api-id", "1", "--download-budget", "16MB"], { BOT_TOKEN: fakeToken(), TELEGRAM_API_HASH: API_HASH });
    expect(r.status).toBe(0);
    const [suid, gid, duid, dgid] = [accountId(root, "passwd", "docket-botapi")!, accountId(root, "group", "docket-botapi")!, accountId(root, "passwd", "docket")!, accountId(root, "group", "docket")!];
    // The throwaway root's own parents must be passable, as / and /var/lib are on a host.
    for (const d of ["var", "var/lib"]) runCmd(["chmod", "0755", join(root, d)]);
    const api = join(root, "var/lib/docket/bot-api");
    runCmd(["chmod", "0755", join(root, "var/lib/docket")]);
    // The server (its uid, its gid, no other group) writes a document with its modes: dirs 0750, files 0640.
    const asServer = ["setpriv", `--reuid=${suid}`, `--regid=${gid}`, "--clear-groups", "sh", "-c", 'umask 027 && mkdir -p "$1/123:AAA/documents" && printf pdf > "$1/123:AAA/documents/file_1.pdf"', "sh", api];
    expect(runCmd(asServer).status).toBe(0);
    const file = join(api, "123:AAA/documents/file_1.pdf");
    expect(modeOf(file)).toBe("640");
    // The bot's user with the supplementary groups its unit gives it (SupplementaryGroups=docket-botapi).
    const asBot = (groups: string) => runCmd(["setpriv", `--reuid=${duid}`, `--regid=${dgid}`, `--groups=${groups}`, "cat", file]);
    expect(asBot(`${dgid},${gid}`)).toMatchObject({ status: 0, stdout: "pdf" });
    const without = asBot(String(dgid));
    expect(without.status).not.toBe(0);
    expect(without.stderr).toContain("Permission denied");
  });

  it("an older install that joined _ssh (gid 101) leaves it, and its drop-ins go", async () => {
    const root = testTempDir("borrowed");
    mkdirSync(join(root, "etc/systemd/system/docket.service.d"), { recursive: true });
    mkdirSync(join(root, "etc/systemd/system/docket-janitor.service.d"), { recursive: true });
    writeFileSync(join(root, "etc/group"), "root:x:0:\n_ssh:x:101:docket\ndocket:x:990:\n");
    writeFileSync(join(root, "etc/passwd"), "root:x:0:0:root:/root:/bin/sh\ndocket:x:990:990::/var/lib/docket:/usr/sbin/nologin\n");
    for (const u of ["docket.service.d", "docket-janitor.service.d"]) {
      writeFileSync(join(root, "etc/systemd/system", u, "10-botapi-group.conf"), "[Service]\nSupplementaryGroups=\nSupplementaryGroups=_ssh\n");
    }
    // Its server directory still belongs to the image's uid/gid 101.
    mkdirSync(join(root, "var/lib/docket/bot-api/123:AAA"), { recursive: true });
    writeFileSync(join(root, "var/lib/docket/bot-api/123:AAA/tqueue.binlog"), "x");
    runCmd(["chown", "-R", "101:101", join(root, "var/lib/docket/bot-api")]);
    const r = await install(["--root", root, "--no-start", "--mode", "local", "--api-id", "1", "--download-budget", "16MB"], { BOT_TOKEN: fakeToken(), TELEGRAM_API_HASH: API_HASH });
    expect(r.status).toBe(0);
    expect(r.stderr).toContain("docket leaves group _ssh (joined by an older install because it had gid 101)");
    expect(membersOf(root, "_ssh")).toEqual([]);
    expect(membersOf(root, "docket-botapi")).toEqual(["docket"]);
    for (const u of ["docket.service.d", "docket-janitor.service.d"]) expect(existsSync(join(root, "etc/systemd/system", u, "10-botapi-group.conf"))).toBe(false);
    // The server's files are handed to the new server user, once.
    const want = [accountId(root, "passwd", "docket-botapi"), accountId(root, "group", "docket-botapi")];
    expect(r.stderr).toContain("/var/lib/docket/bot-api: the directory itself belongs to 101:101: handing it and everything in it to docket-botapi:docket-botapi");
    const binlog = statSync(join(root, "var/lib/docket/bot-api/123:AAA/tqueue.binlog"));
    expect([binlog.uid, binlog.gid]).toEqual(want);
    // A bot folder copied in from another host (its numeric owner) is handed over on the next run.
    mkdirSync(join(root, "var/lib/docket/bot-api/456:BBB"));
    writeFileSync(join(root, "var/lib/docket/bot-api/456:BBB/x"), "y");
    runCmd(["chown", "-R", "4242:4242", join(root, "var/lib/docket/bot-api/456:BBB")]);
    const again = await install(["--root", root, "--no-start"]);
    expect(again.status).toBe(0);
    expect(again.stderr).toMatch(/\/var\/lib\/docket\/bot-api: 456:BBB\S* belongs to 4242:4242: handing it and everything in it to docket-botapi:docket-botapi/);
    const moved = statSync(join(root, "var/lib/docket/bot-api/456:BBB/x"));
    expect([moved.uid, moved.gid]).toEqual(want);
  });
});

describe("install.sh --data-dir moves every data directory (issue 9 item 6)", () => {
  it("puts the local server's --dir and --temp-dir under it too, in docket.env, compose.env and the units", async () => {
    const root = testTempDir("datadir");
    const r = await install(["--root", root, "--no-start", "--mode", "local", "--api-id", "1", "--data-dir", "/srv/docket", "--download-budget", "16MB"], {
      BOT_TOKEN: fakeToken(),
      TELEGRAM_API_HASH: API_HASH,
    });
    expect(r.status).toBe(0);
    const env = readFileSync(join(root, "etc/docket/docket.env"), "utf8");
    expect(env).toContain("DATA_DIR=/srv/docket\nLOCAL_BOT_API_DIR=/srv/docket/bot-api\nBOT_API_TEMP_DIR=/srv/docket/bot-api-temp\n");
    const composeEnv = readFileSync(join(root, "etc/docket/compose.env"), "utf8");
    expect(composeEnv).toContain("DOCKET_BOT_API_DIR=/srv/docket/bot-api\nDOCKET_BOT_API_TEMP_DIR=/srv/docket/bot-api-temp\n");
    for (const d of ["db", "downloads", "work", "results", "backups", "bot-api", "bot-api-temp"]) expect(modeOf(join(root, "srv/docket", d))).toBe("750");
    expect(existsSync(join(root, "var/lib/docket"))).toBe(false);
    const unitDir = join(root, "etc/systemd/system");
    for (const u of ["docket.service", "docket-janitor.service"]) {
      expect(readFileSync(join(unitDir, `${u}.d/20-data-dir.conf`), "utf8")).toContain(
        "ReadWritePaths=\nReadWritePaths=/srv/docket/db /srv/docket/downloads /srv/docket/work /srv/docket/results\nReadOnlyPaths=\nReadOnlyPaths=-/srv/docket/bot-api\n",
      );
    }
    expect(readFileSync(join(unitDir, "docket-backup.service.d/20-data-dir.conf"), "utf8")).toContain("ReadWritePaths=/srv/docket/db /srv/docket/backups\n");
    expect(readFileSync(join(unitDir, "docket-alert@.service.d/20-data-dir.conf"), "utf8")).toContain("ReadWritePaths=\nReadWritePaths=/srv/docket/db\n");
    // The installed units with their drop-ins still verify (systemd.test.ts covers a missing tool).
    if (toolPath("systemd-analyze")) {
      prepareVerifyRoot(root);
      const v = runCmd(["systemd-analyze", "verify", `--root=${root}`, "docket.service", "docket-janitor.service", "docket-backup.service", "docket-alert@.service"]);
      expect(v.stderr + v.stdout).toBe("");
      expect(v.status).toBe(0);
    }
  });

  it("checks the free space on the file system that will hold the data: a small disk under --data-dir is measured, not the root's", async () => {
    if (process.getuid?.() !== 0) return void console.log("[install-accounts] skipped: the small-disk case needs root (mount -t tmpfs)");
    const root = testTempDir("smalldisk");
    const small = join(root, "srv/small");
    mkdirSync(small, { recursive: true });
    // A 24 MiB disk of its own at /srv/small: the root's own file system has gigabytes free.
    const m = runCmd(["mount", "-t", "tmpfs", "-o", "size=24m,mode=0755", "docket-test-small", small]);
    if (m.status !== 0) return void console.log(`[install-accounts] skipped: the small-disk case cannot mount a tmpfs (${m.stderr.trim()})`);
    try {
      // Local mode needs the budget twice there (downloads + the server's copies): 32 MiB on a 24 MiB disk.
      const before = treeWithoutLog(root);
      const args = ["--root", root, "--no-start", "--data-dir", "/srv/small/docket", "--download-budget", "16MB"];
      const local = await install([...args, "--mode", "local", "--api-id", "1"], { BOT_TOKEN: fakeToken(), TELEGRAM_API_HASH: API_HASH });
      expect(local.stderr).toMatch(/error: not enough free space on the file system of \/srv\/small\/docket and \/srv\/small\/docket\/bot-api: 2\d{7} available, 33554432 needed \(DOWNLOAD_BUDGET=16MB, mode local\)/);
      expect(local.status).toBe(3);
      // Refused in the preflight: nothing but the install log was written.
      expect(treeWithoutLog(root).filter((l) => !/^d \d+ var(\/log(\/docket)?)?$/.test(l))).toEqual(before);
      // Cloud mode needs it once: it fits, and the data lands on that disk.
      const cloud = await install(args, { BOT_TOKEN: fakeToken() });
      expect(cloud.stderr).toMatch(/\/srv\/small\/docket: needs 16\.0 MiB free \(budget 16\.0 MiB, 16MB\); 2\d\.\d MiB available/);
      expect(cloud.status).toBe(0);
      expect(runCmd(["stat", "-c", "%d", join(small, "docket/db")]).stdout).toBe(runCmd(["stat", "-c", "%d", small]).stdout);
    } finally {
      runCmd(["umount", "-l", small]);
    }
  });

  it("refuses to move a data directory that holds the database, naming the way to do it, and changes nothing", async () => {
    const root = testTempDir("datamove");
    expect((await install(["--root", root, "--no-start", "--download-budget", "16MB"], { BOT_TOKEN: fakeToken() })).status).toBe(0);
    writeFileSync(join(root, "var/lib/docket/db/docket.sqlite"), "");
    // Only the install log records the refusal.
    const before = treeWithoutLog(root);
    const r = await install(["--root", root, "--no-start", "--data-dir", "/srv/docket"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("--data-dir /srv/docket: the data of this bot is in /var/lib/docket");
    expect(r.stderr).toContain("then run install.sh --data-dir /srv/docket again");
    expect(treeWithoutLog(root)).toEqual(before);
    expect(readFileSync(join(root, "var/log/docket/install.log"), "utf8")).toContain("--data-dir /srv/docket: the data of this bot is in /var/lib/docket");
  });
});
