/**
 * install.sh for several hosts (issue 14 item 7; scripts/lib/scaling.sh): `--role worker
 * --database-url postgres://USER@HOST/DB` sets up a worker host — DOCKET_ROLE and DATABASE_URL in
 * docket.env (0600), the password from PGPASSWORD, percent-encoded, never printed nor logged; a
 * second run keeps both; a role other than all without PostgreSQL, a password in the URL and a
 * webhook on a worker host are refused before anything is written. Run into throwaway roots.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fakeToken, testTempDir } from "./helpers";
import { HOOK_URL, placeTls, useInstallHarness } from "./install-harness";

const h = useInstallHarness();
const PASSWORD = "s3cret/pg@pass";
const BASE = ["--no-start", "--download-budget", "16MB"];

describe("install.sh --role / --database-url", () => {
  it("--role worker --database-url: a worker host's docket.env, the password from PGPASSWORD, never shown", async () => {
    const root = testTempDir("worker");
    const r = await h.install(["--root", root, ...BASE, "--role", "worker", "--database-url", "postgres://docket@db.internal:5432/docket"], { BOT_TOKEN: fakeToken(), PGPASSWORD: PASSWORD });
    expect([r.status, r.stderr.split("\n").filter((l) => l.startsWith("error"))]).toEqual([0, []]);
    const envFile = join(root, "etc/docket/docket.env");
    const env = readFileSync(envFile, "utf8");
    expect(env).toMatch(/^DOCKET_ROLE=worker$/m);
    expect(env).toContain(`DATABASE_URL=postgres://docket:${encodeURIComponent(PASSWORD)}@db.internal:5432/docket`);
    expect(statSync(envFile).mode & 0o777).toBe(0o600);
    expect(r.stdout + r.stderr).not.toContain(PASSWORD);
    expect(r.stdout + r.stderr).not.toContain(encodeURIComponent(PASSWORD));
    expect(readFileSync(join(root, "var/log/docket/install.log"), "utf8")).not.toContain(encodeURIComponent(PASSWORD));
    expect(r.stderr).toContain("role: worker on PostgreSQL");
    // The bot's own parser takes the URL back with the password as it was typed.
    expect(decodeURIComponent(new URL(/^DATABASE_URL=(.*)$/m.exec(env)![1]!).password)).toBe(PASSWORD);

    // A second run without the flags keeps both (and the same URL given again keeps its password).
    const again = await h.install(["--root", root, ...BASE, "--database-url", "postgres://docket@db.internal:5432/docket"], {});
    expect(again.status).toBe(0);
    expect(readFileSync(envFile, "utf8")).toBe(env);
  });

  it.each([
    [["--role", "worker"], "--role worker needs PostgreSQL"],
    [["--role", "boss"], "--role boss: expected all, intake or worker"],
    [["--database-url", `postgres://docket:${PASSWORD}@db/docket`], "without the password (give it in PGPASSWORD)"],
    [["--role", "worker", "--database-url", "postgres://docket@db/docket", "--webhook-url", HOOK_URL], "--role worker never receives updates"],
  ])("refuses %j before writing anything", async (flags, message) => {
    const root = testTempDir("badrole");
    placeTls(root); // the webhook case's certificate check comes first
    const r = await h.install(["--root", root, ...BASE, ...flags], { BOT_TOKEN: fakeToken(), PGPASSWORD: "x" });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(message);
    expect(r.stdout + r.stderr).not.toContain(PASSWORD);
    expect(existsSync(join(root, "etc/docket/docket.env"))).toBe(false);
  });
});
