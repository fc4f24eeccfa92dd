/**
 * The settings of the PostgreSQL download claim (`docket_claim_download`, pg migrations 0010–0012) on a
 * migrated database: index scans only (without them a fresh database's missing statistics plan its
 * head and budget reads as sequential or bitmap scans: 4× slower per job, bench/queue) and generic
 * plans (planned once per session, not on every call). `CREATE OR REPLACE FUNCTION` drops a function's
 * SET clauses, so a later version of the function that forgets them fails here.
 */
import { describe, expect, test } from "vitest";
import { openPg } from "../../bot/db/pg-open.ts";
import { usePgServer, type PgServer } from "../support/pg-server.ts";
import { freshPgDatabase, TEST_PG_OPTIONS } from "../support/pg-store.ts";
import { toolReady } from "../support/tools.ts";
import { Q } from "../../bot/jobs/pg-statements.ts";

describe.skipIf(!toolReady("postgres"))("docket_claim_download", () => {
  let server: PgServer;
  usePgServer((s) => (server = s));

  test("the version the store calls runs with index scans only and generic plans", async () => {
    const db = await openPg({ url: await freshPgDatabase(server), ...TEST_PG_OPTIONS });
    try {
      // The store's call names the argument types: the function it resolves to is the one checked.
      const args = [...Q.claimDownload.text.matchAll(/\$\d+(::[a-z0-9\[\]]+)?/g)].length;
      const rows = await db.sql.unsafe<{ args: number; config: string[] | null }[]>(
        "SELECT pronargs::int AS args, proconfig AS config FROM pg_proc WHERE proname = 'docket_claim_download' ORDER BY pronargs DESC",
      );
      const called = rows.find((r) => r.args === args);
      expect(called, `a docket_claim_download of ${args} arguments`).toBeDefined();
      expect([...(called!.config ?? [])].sort()).toEqual(["enable_bitmapscan=off", "enable_seqscan=off", "plan_cache_mode=force_generic_plan"]);
    } finally {
      await db.close(1);
    }
  });
});
