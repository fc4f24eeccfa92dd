/**
 * The two PostgreSQL pools of a process (bot/db/pg-open.ts, bot/db/pg-statements-pool.ts) on a real
 * server: how DB_POOL_MAX is shared, the statement pool's rows as the store expects them (int8 as JS
 * numbers, Telegram's 13-digit chat ids exact), its connection settings, and the failures of both
 * clients classified alike for the journal line of bot/ops/pg-reach.ts — from the clients' real
 * errors, with the URL's password in none of them.
 */
import { describe, expect, test } from "vitest";
import { openPg, pgPools, poolSplit } from "../../bot/db/pg-open.ts";
import { LOCKS } from "../../bot/db/pg-locks.ts";
import { openStore } from "../../bot/open-store.ts";
import { newJob } from "./store-fixtures.ts";
import { failureKind } from "../../bot/ops/pg-reach.ts";
import { PG_PASSWORD, usePgServer, type PgServer } from "../support/pg-server.ts";
import { freshPgDatabase, TEST_PG_OPTIONS } from "../support/pg-store.ts";
import { freePort } from "../support/ports.ts";
import { toolReady } from "../support/tools.ts";

describe("poolSplit", () => {
  test("half (rounded down) for single statements, the rest for transactions, at least one each", () => {
    expect(poolSplit(10)).toEqual({ statements: 5, transactions: 5 });
    expect(poolSplit(5)).toEqual({ statements: 2, transactions: 3 });
    expect(poolSplit(4)).toEqual({ statements: 2, transactions: 2 });
    expect(poolSplit(1)).toEqual({ statements: 1, transactions: 1 });
  });
});

describe.skipIf(!toolReady("postgres"))("the pools on a real server", () => {
  let server: PgServer;
  usePgServer((s) => (server = s));

  test("statement pool: int8 as exact numbers, float8 and NULL as they are, write counts, its connection settings", async () => {
    const url = await freshPgDatabase(server);
    const db = await openPg({ url, ...TEST_PG_OPTIONS, statementTimeoutMs: 4321, applicationName: "pools test" });
    try {
      await db.sql.unsafe("CREATE TABLE probe (id bigserial PRIMARY KEY, chat bigint, share float8, note text)");
      const chat = -1001234567890123; // a supergroup's id is 13 digits: above int4, below 2^53
      const rows = await db.statements.rows<{ id: unknown; chat: unknown; share: unknown; note: unknown; n: unknown }>(
        "INSERT INTO probe (chat, share, note) VALUES ($1, $2, $3) RETURNING id, chat, share, note, (SELECT count(*) FROM probe) AS n",
        [chat, 2.5, null],
      );
      expect(rows).toEqual([{ id: 1, chat, share: 2.5, note: null, n: 0 }]); // numbers: 1n would not equal 1
      expect(await db.statements.count("UPDATE probe SET note = $1 WHERE chat = $2 AND id = ANY($3::bigint[])", ["x", chat, "{1,2}"])).toBe(1);
      expect(await db.statements.count("UPDATE probe SET note = $1 WHERE chat = $2", ["y", chat + 1])).toBe(0);
      const [s] = await db.statements.rows<{ st: string; app: string }>("SELECT current_setting('statement_timeout') AS st, current_setting('application_name') AS app", []);
      expect(s).toEqual({ st: "4321ms", app: "pools test" });
    } finally {
      await db.close(1);
    }
  });

  test("the statement timeout cancels a statement of the statement pool", async () => {
    const url = await freshPgDatabase(server);
    const db = await openPg({ url, ...TEST_PG_OPTIONS, statementTimeoutMs: 200 });
    try {
      const err = await db.statements.rows("SELECT pg_sleep(3)", []).then(() => null, (e: unknown) => e as { errno?: string });
      expect(err?.errno).toBe("57014"); // query_canceled
    } finally {
      await db.close(1);
    }
  });

  test("held session locks never take the connections transactions wait for (DB_POOL_MAX 2: one transaction connection)", async () => {
    const url = await freshPgDatabase(server);
    const opened = await openStore({ database: { url, poolMax: 2, statementTimeoutMs: 5000 } }, "/nonexistent/unused.sqlite", "pools test");
    try {
      const leader = await opened.intakeLock({ checkMs: 60_000 })!.tryTake();
      expect(leader).not.toBeNull();
      const { job } = await opened.store.accept(newJob(1), Date.now());
      // The janitor's pass runs its store transactions while it holds the expiry lock (bot/app.ts).
      const pass = opened.once(LOCKS.expiry, async () => opened.store.fail(job.id, "accepted", null, "download_failed", {}, "test", Date.now()));
      const late = new Promise((resolve) => setTimeout(() => resolve("still waiting after 5 s"), 5000));
      expect(await Promise.race([pass, late])).toEqual({ ran: true, value: true });
      expect((await opened.store.get(job.id))?.status).toBe("failed");
      await leader!.release();
    } finally {
      await opened.close();
    }
  });

  test("failures of both clients: the same kind, and never the password", async () => {
    const url = await freshPgDatabase(server);
    const cases: Array<[string, string, string]> = [
      ["refused", url.replace(/:\d+\//, `:${freePort()}/`), "refused"],
      ["wrong password", url.replace(PG_PASSWORD, "wrong-pass"), "auth"],
      ["no such database", url.replace(/\/[^/]+$/, "/no_such_db"), "database"],
    ];
    for (const [name, bad, kind] of cases) {
      const pools = pgPools({ url: bad, poolMax: 2, statementTimeoutMs: 1000, connectTimeoutMs: 3000 });
      try {
        const viaPostgresJs = await pools.sql`SELECT 1`.then(() => null, (e: unknown) => e);
        const viaBun = await pools.statements.rows("SELECT 1", []).then(() => null, (e: unknown) => e);
        expect([name, failureKind(viaPostgresJs)]).toEqual([name, kind]);
        expect([name, failureKind(viaBun)]).toEqual([name, kind]);
        for (const e of [viaPostgresJs, viaBun]) expect(`${String(e)} ${(e as Error).stack ?? ""} ${JSON.stringify(e)}`).not.toContain(PG_PASSWORD);
      } finally {
        await pools.close(1);
      }
    }
  });
});
