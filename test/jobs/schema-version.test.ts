/**
 * A database migrated by a newer release is refused at open, naming both versions (issue 14, faults):
 * drizzle's migrator alone would apply nothing and let this release run against a schema it does not
 * know. SQLite on a file; PostgreSQL on a real server. The refusal changes nothing in the database.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { describe, expect, test } from "vitest";
import { MIGRATIONS_DIR, openDb } from "../../bot/db/open.ts";
import { openPg, PG_MIGRATIONS_DIR } from "../../bot/db/pg-open.ts";
import { checkSchemaVersion, readJournal, SchemaTooNewError } from "../../bot/db/schema-version.ts";
import { usePgServer, type PgServer } from "../support/pg-server.ts";
import { freshPgDatabase, TEST_PG_OPTIONS } from "../support/pg-store.ts";
import { toolReady } from "../support/tools.ts";
import { startBotProcess } from "../support/bot-process.ts";
import { botEnv } from "../../scripts/demo/bot-process.ts";
import { EXIT_BAD_CONFIG } from "../../bot/ops/exit-codes.ts";

const FUTURE = Date.parse("2099-01-02T03:04:05.000Z");

describe("checkSchemaVersion", () => {
  const journal = readJournal(MIGRATIONS_DIR);
  const newest = journal[journal.length - 1]!;
  test("a new database, or one at or behind this release, passes", () => {
    expect(() => checkSchemaVersion([], journal, "x")).not.toThrow();
    expect(() => checkSchemaVersion(journal.map((j) => j.when), journal, "x")).not.toThrow();
    expect(() => checkSchemaVersion([journal[0]!.when], journal, "x")).not.toThrow();
  });
  test("a migration newer than every one of this release: refused, naming both versions", () => {
    const err = (() => {
      try {
        checkSchemaVersion([...journal.map((j) => j.when), FUTURE], journal, "SQLite database /x.sqlite");
      } catch (e) {
        return e as SchemaTooNewError;
      }
      throw new Error("not refused");
    })();
    expect(err).toBeInstanceOf(SchemaTooNewError);
    expect(err.message).toContain("SQLite database /x.sqlite schema is newer than this release");
    expect(err.message).toContain(`${journal.length + 1} migration(s) applied, the newest created 2099-01-02T03:04:05.000Z`);
    expect(err.message).toContain(`this release knows ${journal.length} migration(s) up to ${newest.tag}`);
  });
});

describe("SQLite: openDb refuses a newer schema", () => {
  test("the file is left as it was", () => {
    const dir = mkdtempSync(join(tmpdir(), "docket-schema-"));
    try {
      const file = join(dir, "docket.sqlite");
      openDb(file).close();
      const raw = openDb(file);
      raw.sqlite.run("INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('future', ?)", [FUTURE]);
      raw.close();
      expect(() => openDb(file)).toThrow(SchemaTooNewError);
      const journal = readJournal(MIGRATIONS_DIR);
      expect(() => openDb(file)).toThrow(`this release knows ${journal.length} migration(s) up to ${journal[journal.length - 1]!.tag}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the bot refuses to start on a newer schema", () => {
  test("one fatal journal line naming both versions, exit 2 (the unit does not restart on it)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "docket-schema-bot-"));
    try {
      const raw = openDb(join(dir, "db", "docket.sqlite"));
      raw.sqlite.run("INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('future', ?)", [FUTURE]);
      raw.close();
      // The Bot API is never asked: the database comes first.
      const bot = startBotProcess(botEnv({ token: "123456789:AAEhBOweik9ai2o4Ihv-XdK7Ju6N0r3j_ab", apiRoot: "http://127.0.0.1:9", mode: "cloud" }, dir, { LOG_LEVEL: "info" }));
      expect(await bot.exited()).toBe(EXIT_BAD_CONFIG);
      const fatal = bot.lines.filter((l) => l.level === 60 || l.level === "fatal");
      expect(fatal).toHaveLength(1);
      expect(String(fatal[0]!.msg)).toMatch(/schema is newer than this release: it has \d+ migration\(s\) applied, the newest created 2099-01-02T03:04:05.000Z.*this release knows \d+ migration\(s\) up to 0\d{3}_/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!toolReady("postgres"))("PostgreSQL: openPg refuses a newer schema", () => {
  let server: PgServer;
  usePgServer((s) => (server = s));
  test("naming the database without its password; nothing is migrated", async () => {
    const url = await freshPgDatabase(server);
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      await sql`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ('future', ${FUTURE})`;
      const pgJournal = readJournal(PG_MIGRATIONS_DIR);
      const err = await openPg({ url, ...TEST_PG_OPTIONS }).then(() => null, (e: unknown) => e as Error);
      expect(err).toBeInstanceOf(SchemaTooNewError);
      expect(err!.message).toContain(`PostgreSQL database 127.0.0.1:${server.port}/`);
      expect(err!.message).toContain(`up to ${pgJournal[pgJournal.length - 1]!.tag}`);
      expect(err!.message).not.toContain("s3cret");
      const [n] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`;
      expect(n!.n).toBe(pgJournal.length + 1);
      // The advisory lock was released: another start is not blocked (it is refused the same way, at once).
      await expect(openPg({ url, ...TEST_PG_OPTIONS })).rejects.toThrow(SchemaTooNewError);
    } finally {
      await sql.end({ timeout: 1 });
    }
  });
  test("two hosts starting at once: one migrates, the other waits for the lock and finds nothing to do", async () => {
    const url = server.url(await server.createDatabase("race"));
    const [a, b] = await Promise.all([openPg({ url, ...TEST_PG_OPTIONS }), openPg({ url, ...TEST_PG_OPTIONS })]);
    const rows = await a.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`;
    expect(rows[0]!.n).toBe(readJournal(PG_MIGRATIONS_DIR).length);
    await a.close(1);
    await b.close(1);
  });
});
